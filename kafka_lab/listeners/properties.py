"""A ``server.properties`` text read as ``java.util.Properties`` reads it: the one parser of both modes' configs.

:func:`~kafka_lab.listeners.resolve` (ZooKeeper mode) and :func:`~kafka_lab.listeners.kraft.resolve_kraft` (KRaft)
both take a properties text as well as a mapping; both read it here.
"""

from __future__ import annotations

import re

__all__ = ["parse_properties"]


def parse_properties(text: str) -> dict[str, str]:
    """A ``server.properties`` text as a dict (``key=value``, ``key: value`` or ``key value``; ``#``/``!`` comments).

    Like ``java.util.Properties``: leading blanks of a line are skipped and the value keeps what
    follows the separator (ConfigDef trims it later); a later line wins over an earlier one. A line
    ending in a backslash continues on the next. Escapes other than that are not interpreted.
    """
    if not isinstance(text, str):
        raise TypeError(
            f"parse_properties takes the text of a server.properties file (a str), got {type(text).__name__}"
            + (" (for a file, pass Path(...).read_text())" if hasattr(text, "read_text") else "")
        )
    props: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(" \t\f")
        i += 1
        while line.endswith("\\") and not line.endswith("\\\\") and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f")
            i += 1
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]*)\s*[=:]?\s*(.*)$", line)
        key, value = m.group(1), m.group(2)
        props[key] = value
    return props
