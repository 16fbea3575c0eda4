"""What to change when Kafka refuses a listener config: a hint that follows the cause Kafka names.

:func:`resolve` raises :class:`~kafka_lab.listeners.errors.ConfigException` with Kafka's own message.
The setting the message is about is not always the one to fix: a listener missing from
``listener.security.protocol.map`` is reported while ``advertised.listeners`` (or ``listeners``) is
parsed, and an unset ``advertised.listeners`` falls back to ``listeners``. So the hint is chosen from
the message, the cause, and not from the setting that was reported or last edited.

>>> from kafka_lab.listeners import ConfigException, resolve
>>> try:
...     resolve({"listeners": "PLAINTEXT://:9092,INTERNAL://:9093"})
... except ConfigException as exc:
...     print(fix_hint(exc))
INTERNAL has no entry in listener.security.protocol.map: add INTERNAL:PLAINTEXT (or its protocol, SSL, SASL_PLAINTEXT, SASL_SSL) to the map, which must name every listener.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .errors import ConfigException

__all__ = ["fix_hint"]

_PROTOCOLS = "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"


def _zero_address(m, props) -> str:
    if props is not None and "advertised.listeners" not in props:
        return (
            "advertised.listeners is not set, so it falls back to listeners, and 0.0.0.0 names no machine: "
            "set advertised.listeners to the name clients use (keep 0.0.0.0 in listeners to bind every interface)."
        )
    return "advertised.listeners is what clients are told: publish a host name or address they can reach, not 0.0.0.0."


#: (Kafka's message, as a pattern) -> the hint; the first match wins
_HINTS: list[tuple[re.Pattern, object]] = [
    (re.compile(p), h)
    for p, h in [
        (
            r"No security protocol defined for listener (\S+)",
            lambda m, _: (
                f"{m[1]} has no entry in listener.security.protocol.map: add {m[1]}:PLAINTEXT (or its protocol, "
                "SSL, SASL_PLAINTEXT, SASL_SSL) to the map, which must name every listener."
            ),
        ),
        (
            r"Unable to parse (.*) to a broker endpoint",
            lambda m, _: (
                f"{m[1]!r} is not NAME://host:port: write the listener name, '://', a host (or nothing, "
                "for every interface; an IPv6 address in [brackets]), ':' and a port."
            ),
        ),
        (r'For input string: "(.*)"', lambda m, _: f"the port {m[1]!r} is not a number: a port is a whole number."),
        (
            r"Each listener must have a different name",
            lambda m, _: "a listener name may appear only once: rename or remove the repeated one.",
        ),
        (
            r"Each listener must have a different port",
            lambda m, _: (
                "two bound listeners share a port: give each its own port (in Kafka 2.8 even an IPv4 and an "
                "IPv6 listener may not share one; port 0, any free port, may repeat)."
            ),
        ),
        (
            r"Invalid security protocol `(.*)` defined in listener\.security\.protocol\.map",
            lambda m, _: (
                f"{m[1]!r} is not a security protocol: each map entry is NAME:PROTOCOL, PROTOCOL one of {_PROTOCOLS}."
            ),
        ),
        (
            r"Invalid security protocol `(.*)` defined in security\.inter\.broker\.protocol",
            lambda m, _: (
                f"security.inter.broker.protocol takes a protocol ({_PROTOCOLS}), not {m[1]!r}; to name a "
                "listener, set inter.broker.listener.name instead."
            ),
        ),
        (
            r"Error parsing configuration property '(.*)'",
            lambda m, _: (
                f"{m[1]} is a comma-separated list of NAME:PROTOCOL entries: one entry lacks its ':' "
                "(or is empty, e.g. after a doubled comma)."
            ),
        ),
        (
            r"Only one of inter\.broker\.listener\.name and security\.inter\.broker\.protocol should be set",
            lambda m, _: (
                "remove security.inter.broker.protocol: inter.broker.listener.name already chooses the listener "
                "and, through the map, its protocol."
            ),
        ),
        (
            r"Listener with name (\S+) defined in inter\.broker\.listener\.name not found",
            lambda m, _: (
                f"add {m[1]}:PROTOCOL to listener.security.protocol.map, or set inter.broker.listener.name to a "
                "listener that is in it."
            ),
        ),
        (
            r"Listener with (\S+) defined in control\.plane\.listener\.name not found",
            lambda m, _: (
                f"add {m[1]}:PROTOCOL to listener.security.protocol.map (and bind and advertise {m[1]}), or "
                "name a listener that is there."
            ),
        ),
        (
            r"inter\.broker\.listener\.name must be a listener name defined in advertised\.listeners\. "
            r"The valid options based on currently configured listeners are (\S*)",
            lambda m, props: (
                "the inter-broker listener must be published. "
                + (
                    "With inter.broker.listener.name unset, it is the listener named after "
                    "security.inter.broker.protocol (PLAINTEXT by default): set inter.broker.listener.name to "
                    f"one of {m[1]}."
                    if props is not None and "inter.broker.listener.name" not in props
                    else f"Set inter.broker.listener.name to one of {m[1]}, or advertise the one it names."
                )
            ),
        ),
        (
            r"advertised\.listeners listener names must be equal to or a subset of the ones defined in listeners",
            lambda m, _: (
                "advertised.listeners names a listener the broker does not bind: publish only names that are "
                "also in listeners (or add the listener to listeners)."
            ),
        ),
        (r"nonroutable meta-address 0\.0\.0\.0", _zero_address),
        (
            r"advertised\.listeners cannot contain any of controller\.listener\.names",
            lambda m, _: "the listeners in controller.listener.names are for KRaft controllers: do not advertise them.",
        ),
        (
            r"control\.plane\.listener\.name must be a listener name defined in advertised\.listeners",
            lambda m, _: (
                "the control-plane listener must be published: add its endpoint (e.g. "
                "CONTROLLER://host:9091) to advertised.listeners too, when advertised.listeners is set."
            ),
        ),
        (
            r"should have a different value from the inter broker listener name",
            lambda m, _: (
                "the control plane needs a listener of its own: add one (e.g. CONTROLLER on its own port) and "
                "name it in control.plane.listener.name; keep the inter-broker listener for replication."
            ),
        ),
        (
            r"Invalid value (.*) for configuration (\S+): Not a number of type INT",
            lambda m, _: f"{m[2]} is a whole number, not {m[1]!r}.",
        ),
        (
            r"Invalid value (.*) for configuration (\S+): Value must be at least (\S+)",
            lambda m, _: f"{m[2]} must be at least {m[3]}, not {m[1]}.",
        ),
        (
            r"Invalid value (.*) for configuration (\S+): Expected value to be either true or false",
            lambda m, _: f"{m[2]} is true or false, not {m[1]!r}.",
        ),
        (
            r"broker\.id must be greater than or equal to -1 and not greater than reserved\.broker\.max\.id",
            lambda m, _: (
                "a configured broker.id is -1 (the broker generates one) or from 0 up to reserved.broker.max.id "
                "(1000 unless set); the ids above it are kept for generated ids. Choose an id in that range, or "
                "raise reserved.broker.max.id (or set broker.id.generation.enable=false)."
            ),
        ),
        (
            r"broker\.id must be greater than or equal to 0",
            lambda m, _: (
                "with broker.id.generation.enable=false the broker cannot generate an id: set broker.id to 0 or more."
            ),
        ),
    ]
]


def fix_hint(exc: ConfigException, props: Mapping[str, object] | None = None) -> str:
    """What to change, following the cause in Kafka's message (``props``, when given, refines it)."""
    message = str(exc)
    for pattern, hint in _HINTS:
        m = pattern.search(message)
        if m:
            return hint(m, props)
    return f"look at {exc.config_key}."
