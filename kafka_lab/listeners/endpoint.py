"""Endpoints: ``NAME://host:port``, parsed and printed exactly as Kafka 2.8 does.

A listener is a *name* (``INTERNAL``, ``PLAINTEXT``, ...), a host and a port. The name is only a
label: its security protocol comes from ``listener.security.protocol.map``. Kafka parses each entry
of ``listeners`` / ``advertised.listeners`` with one regular expression (``EndPoint.uriParseExp``,
the same in 3.9's ``SocketServerConfigs.URI_PARSE_REGEXP``)::

    ^(.*)://\\[?([0-9a-zA-Z\\-%._:]*)\\]?:(-?[0-9]+)

matched against the whole entry. An empty host is stored as ``null`` (the docs: "bind to default
interface"); an IPv6 host is printed in brackets (``SSL://[::1]:9093``). Listener names are
upper-cased (``ListenerName.normalised``) and so are protocol names (``SecurityProtocol.forName``).

This module also holds the small string rules everything else builds on: Java's ``String.trim``
(what ConfigDef applies to every string setting), ``CoreUtils.parseCsvList`` and
``CoreUtils.parseCsvMap`` with their quirks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import ConfigException, require

__all__ = [
    "SECURITY_PROTOCOLS",
    "DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP",
    "EndPoint",
    "parse_endpoint",
    "format_endpoint",
    "format_address",
    "java_trim",
    "parse_csv_list",
    "parse_csv_map",
    "parse_listener_security_protocol_map",
    "normalise_listener_name",
    "security_protocol_for_name",
    "listener_list_to_endpoints",
]

#: Kafka's ``SecurityProtocol`` enum, in declaration order
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

#: ``listener.security.protocol.map``'s default in 2.8 (every protocol mapped to itself)
DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"

_DEFAULT_MAP = {p: p for p in SECURITY_PROTOCOLS}

# Java's `.` does not match any of its five line terminators (Python's misses only "\n")
_JAVA_DOT = "[^\n\r\u0085\u2028\u2029]"
_URI_PARSE = re.compile(rf"^({_JAVA_DOT}*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
# Java's \s is ASCII whitespace only
_CSV_SPLIT = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def java_trim(s: str) -> str:
    """Java's ``String.trim``: drop every character up to U+0020 from both ends (not Unicode spaces)."""
    i, j = 0, len(s)
    while i < j and s[i] <= " ":
        i += 1
    while j > i and s[j - 1] <= " ":
        j -= 1
    return s[i:j]


def _java_split_csv(s: str) -> list[str]:
    """``s.split("\\\\s*,\\\\s*")`` as Java does it: trailing empty strings are removed."""
    parts = _CSV_SPLIT.split(s)
    if len(parts) == 1:  # no match: Java returns the string itself, even when empty
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def parse_csv_list(s: str | None) -> list[str]:
    """``CoreUtils.parseCsvList``: split on commas (and the spaces around them), drop empty entries."""
    if not s:
        return []
    return [v for v in _java_split_csv(s) if v != ""]


def parse_csv_map(s: str, config_key: str = "listener.security.protocol.map") -> dict[str, str]:
    """``CoreUtils.parseCsvMap`` (as wrapped by ``KafkaConfig.getMap``): ``k:v`` entries, split at the last ':'.

    Keys and values are trimmed but not upper-cased; a repeated key keeps its first position and
    its last value (Scala's ``toMap``). An entry without ':' -- an empty middle entry included --
    fails on Java's ``substring(0, -1)``.
    """
    out: dict[str, str] = {}
    if s == "":
        return out
    for entry in _java_split_csv(s):
        lio = entry.rfind(":")
        if lio < 0:
            raise ConfigException(
                f"Error parsing configuration property '{config_key}': begin 0, end -1, length {len(entry)}",
                kafka_exception="IllegalArgumentException",
                config_key=config_key,
                inner_exception="StringIndexOutOfBoundsException",
            )
        out[java_trim(entry[:lio])] = java_trim(entry[lio + 1 :])
    return out


def normalise_listener_name(name: str) -> str:
    """``ListenerName.normalised``: ``toUpperCase(Locale.ROOT)``."""
    return name.upper()


def security_protocol_for_name(name: str) -> str | None:
    """``SecurityProtocol.forName`` (``valueOf(name.toUpperCase(Locale.ROOT))``), or None if there is no such protocol."""
    up = name.upper()
    return up if up in SECURITY_PROTOCOLS else None


def parse_listener_security_protocol_map(s: str) -> dict[str, str]:
    """``KafkaConfig.listenerSecurityProtocolMap``: listener name -> security protocol.

    Every entry's protocol is checked -- even entries no listener uses -- in the map's order, *before*
    the keys are upper-cased, so ``PLAINTEXT:PLAINTEXT,a:FOO,A:SSL`` is rejected for ``FOO``.
    (Kafka iterates a Scala ``Map``: insertion order for up to 4 distinct keys, hash order beyond;
    here it is always insertion order.)
    """
    key = "listener.security.protocol.map"
    raw = parse_csv_map(s, key)
    out: dict[str, str] = {}
    for name, protocol_name in raw.items():
        protocol = security_protocol_for_name(protocol_name)
        if protocol is None:
            raise ConfigException(
                f"Invalid security protocol `{protocol_name}` defined in {key}",
                kafka_exception="ConfigException",
                config_key=key,
            )
        out[normalise_listener_name(name)] = protocol
    return out


def format_address(host: str, port: int) -> str:
    """``Utils.formatAddress``: ``[host]:port`` when the host contains ':' (IPv6), else ``host:port``."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(frozen=True)
class EndPoint:
    """One listener: where a broker binds (in ``listeners``) or what it publishes (in ``advertised.listeners``).

    ``host`` is None for an empty host: bound, that is what Kafka's docs call the "default interface"
    (the wildcard address in 2.8's code); published, the broker replaces it with its canonical host
    name when it registers in ZooKeeper.
    """

    listener_name: str
    host: str | None
    port: int
    security_protocol: str

    @property
    def connection_string(self) -> str:
        """``EndPoint.connectionString``: ``NAME://host:port``, ``NAME://:port`` with no host, ``NAME://[v6]:port``."""
        hostport = f":{self.port}" if self.host is None else format_address(self.host, self.port)
        return f"{self.listener_name}://{hostport}"

    def __str__(self) -> str:
        return self.connection_string


def format_endpoint(endpoint: EndPoint) -> str:
    """The endpoint as Kafka prints it (its connection string)."""
    return endpoint.connection_string


def _java_int(digits: str) -> int:
    """``String.toInt`` on what the regex captured (``-?[0-9]+``); a Java int or NumberFormatException."""
    value = int(digits)
    if not _INT_MIN <= value <= _INT_MAX:
        raise _NumberFormat(f'For input string: "{digits}"')
    return value


class _NumberFormat(Exception):
    pass


class _Unparsable(Exception):
    pass


class _NoProtocol(Exception):
    pass


def _create_endpoint(connection_string: str, protocol_map: Mapping[str, str]) -> EndPoint:
    """``EndPoint.createEndPoint``: the port is converted before the protocol is looked up."""
    m = _URI_PARSE.fullmatch(connection_string)
    if m is None:
        raise _Unparsable(f"Unable to parse {connection_string} to a broker endpoint")
    name_string, host, port = m.groups()
    name = normalise_listener_name(name_string)
    port_value = _java_int(port)
    if name not in protocol_map:
        raise _NoProtocol(f"No security protocol defined for listener {name}")
    return EndPoint(name, host or None, port_value, protocol_map[name])


def parse_endpoint(connection_string: str, protocol_map: Mapping[str, str] | None = None) -> EndPoint:
    """Parse one ``NAME://host:port`` entry; ``protocol_map`` defaults to each protocol mapped to itself.

    Raises :class:`ConfigException` with the message Kafka's parser gives for this one entry
    (``Unable to parse ... to a broker endpoint``, ``No security protocol defined for listener ...``).
    """
    try:
        return _create_endpoint(connection_string, _DEFAULT_MAP if protocol_map is None else protocol_map)
    except _Unparsable as e:
        raise ConfigException(str(e), kafka_exception="KafkaException", config_key="listeners") from None
    except _NoProtocol as e:
        raise ConfigException(str(e), kafka_exception="IllegalArgumentException", config_key="listeners") from None
    except _NumberFormat as e:
        raise ConfigException(str(e), kafka_exception="NumberFormatException", config_key="listeners") from None


def listener_list_to_endpoints(
    listeners: str,
    protocol_map: Mapping[str, str],
    *,
    require_distinct_ports: bool = True,
    config_key: str = "listeners",
) -> list[EndPoint]:
    """``CoreUtils.listenerListToEndPoints``: parse a whole list, then check names (and ports) are distinct.

    Any parse failure is wrapped as ``Error creating broker listeners from '<listeners>': <why>``.
    Port 0 ("any free port") is exempt from the distinct-port rule, which ``advertised.listeners``
    skips altogether (two published endpoints may share a port, e.g. behind a load balancer).
    """
    endpoints = []
    try:
        for entry in parse_csv_list(listeners):
            endpoints.append(_create_endpoint(entry, protocol_map))
    except (_Unparsable, _NoProtocol, _NumberFormat) as e:
        inner = {
            _Unparsable: "KafkaException",
            _NoProtocol: "IllegalArgumentException",
            _NumberFormat: "NumberFormatException",
        }[type(e)]
        raise ConfigException(
            f"Error creating broker listeners from '{listeners}': {e}",
            kafka_exception="IllegalArgumentException",
            config_key=config_key,
            inner_exception=inner,
        ) from None
    names = [e.listener_name for e in endpoints]
    require(
        len(set(names)) == len(names), f"Each listener must have a different name, listeners: {listeners}", config_key
    )
    if require_distinct_ports:
        ports = [e.port for e in endpoints if e.port != 0]
        require(
            len(set(ports)) == len(ports),
            f"Each listener must have a different port, listeners: {listeners}",
            config_key,
        )
    return endpoints
