"""From broker properties to the broker's listeners, as ``KafkaConfig`` (Kafka 2.8, ZooKeeper mode) does it.

A broker needs two lists of endpoints (KIP-291, "How does it work today?"):

* ``listeners`` -- where it binds server sockets. Unset, it is one endpoint built from the legacy
  settings: ``PLAINTEXT://<host.name>:<port>``, so ``PLAINTEXT://:9092`` by default.
* ``advertised.listeners`` -- what it publishes to ZooKeeper for clients and other brokers. Unset,
  it is ``PLAINTEXT://<advertised.host.name>:<advertised.port>`` when either of those is set (each
  defaulting to ``host.name`` / ``port``), else the ``listeners`` themselves.

Two names pick listeners out of those lists: the *inter-broker listener*
(``inter.broker.listener.name``, or else the listener named after ``security.inter.broker.protocol``,
``PLAINTEXT`` by default) and, since KIP-291, the *control-plane listener*
(``control.plane.listener.name``, unset by default). The control-plane listener gets its own acceptor,
one network thread, a request queue of 20 and one handler thread; all other listeners are the data plane.

:func:`resolve` validates in Kafka 2.8's order, so a config with several mistakes reports the one
Kafka reports: ConfigDef parses the typed settings first (``broker.id.generation.enable``,
``reserved.broker.max.id``, ``broker.id``, ``port``, ``advertised.port``), then ``KafkaConfig`` checks
``broker.id``'s range (-1 up to ``reserved.broker.max.id``, 1000 by default), then the protocol map is
parsed, then ``advertised.listeners`` (or what stands in
for it), then ``listeners``, then the inter-broker listener name; then the ``require`` checks:
inter-broker listener advertised, advertised names a subset of listeners, no 0.0.0.0 advertised,
no ``controller.listener.names`` listener advertised, and the control-plane listener (in the map,
advertised, different from the inter-broker listener).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .endpoint import (
    DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP,
    EndPoint,
    java_trim,
    listener_list_to_endpoints,
    normalise_listener_name,
    parse_listener_security_protocol_map,
    security_protocol_for_name,
)
from .errors import ConfigException, UnknownConfigWarning, require
from .known_configs import KAFKA_28_BROKER_CONFIGS
from .properties import parse_properties

if TYPE_CHECKING:
    from .kraft import KRaftNodeListeners

__all__ = ["BrokerListeners", "resolve", "warn_unknown_configs", "LISTENER_KEYS", "DEFAULT_PORT"]

DEFAULT_PORT = 9092

#: the broker settings this model reads; every other key is ignored, as Kafka ignores keys it does not use here
LISTENER_KEYS = (
    "broker.id",
    "broker.id.generation.enable",
    "reserved.broker.max.id",
    "broker.rack",
    "host.name",
    "port",
    "listeners",
    "advertised.host.name",
    "advertised.port",
    "advertised.listeners",
    "listener.security.protocol.map",
    "inter.broker.listener.name",
    "security.inter.broker.protocol",
    "control.plane.listener.name",
    "controller.listener.names",
)
#: INT settings, parsed by ConfigDef before KafkaConfig looks at any listener
_INT_KEYS = ("reserved.broker.max.id", "broker.id", "port", "advertised.port")
#: BOOLEAN settings, likewise
_BOOLEAN_KEYS = ("broker.id.generation.enable",)
#: the typed settings in ConfigDef's definition order (the order it parses them, and reports the first error)
_TYPED_KEYS = ("broker.id.generation.enable", "reserved.broker.max.id", "broker.id", "port", "advertised.port")
#: ConfigDef's ``atLeast`` validators on those settings (broker.id has none: KafkaConfig checks its range)
_AT_LEAST = {"reserved.broker.max.id": 0}
#: KafkaConfig's defaults for the broker-id settings (``Defaults.MaxReservedBrokerId``, ``BrokerIdGenerationEnable``)
MAX_RESERVED_BROKER_ID = 1000
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class BrokerListeners:
    """A broker's resolved listener configuration (what ``KafkaConfig`` computes from the properties)."""

    listeners: tuple[EndPoint, ...]  #: what the broker binds
    advertised_listeners: tuple[EndPoint, ...]  #: what it publishes to ZooKeeper
    data_plane_listeners: tuple[EndPoint, ...]  #: listeners served by the data plane
    control_plane_listener: EndPoint | None  #: the KIP-291 dedicated listener, if configured
    inter_broker_listener_name: str
    inter_broker_security_protocol: str
    listener_security_protocol_map: dict[str, str]
    control_plane_listener_name: str | None = None
    control_plane_security_protocol: str | None = None
    controller_listener_names: tuple[str, ...] = ()
    broker_id: int = -1
    rack: str | None = None
    props: dict = field(default_factory=dict, compare=False, repr=False)  #: the trimmed properties

    def listener(self, name: str) -> EndPoint | None:
        """The bound endpoint of listener ``name`` (any case), or None."""
        name = normalise_listener_name(name)
        return next((e for e in self.listeners if e.listener_name == name), None)

    def advertised(self, name: str) -> EndPoint | None:
        """The published endpoint of listener ``name``: where a client that came in on that listener connects."""
        name = normalise_listener_name(name)
        return next((e for e in self.advertised_listeners if e.listener_name == name), None)

    @property
    def controller_to_broker_listener_name(self) -> str:
        """When this broker is the controller, the listener it uses to reach every broker (KIP-291):
        ``control.plane.listener.name`` when set, else the inter-broker listener."""
        return self.control_plane_listener_name or self.inter_broker_listener_name

    @property
    def controller_to_broker_security_protocol(self) -> str:
        return self.control_plane_security_protocol or self.inter_broker_security_protocol

    @property
    def privileged_listener_name(self) -> str | None:
        """The listener Kafka's SocketServer marks ``isPrivilegedListener``: the control-plane listener when
        there is one, else the inter-broker listener if the broker binds it (2.8 SocketServer)."""
        if self.control_plane_listener is not None:
            return self.control_plane_listener.listener_name
        if any(e.listener_name == self.inter_broker_listener_name for e in self.data_plane_listeners):
            return self.inter_broker_listener_name
        return None

    def plane(self, name: str) -> str:
        """``"control"`` or ``"data"``: which request path serves listener ``name`` on this broker."""
        cp = self.control_plane_listener
        return "control" if cp is not None and cp.listener_name == normalise_listener_name(name) else "data"


def bind_description(endpoint: EndPoint) -> str:
    """What binding this endpoint does.

    Kafka's docs: "Specify hostname as 0.0.0.0 to bind to all interfaces. Leave hostname empty to bind
    to default interface." The 2.8 code (``Acceptor.openServerSocket``) binds ``new InetSocketAddress(port)``
    for an empty host, which is Java's wildcard address: every interface, like 0.0.0.0. The two differ in
    what is *published*: an empty host is registered as the machine's host name, 0.0.0.0 is refused.
    """
    if endpoint.host is None:
        return f"every interface (empty host), port {endpoint.port}"
    if endpoint.host in ("0.0.0.0", "::"):
        return f"every interface ({endpoint.host}), port {endpoint.port}"
    return f"{endpoint.host} only, port {endpoint.port}"


def _config_value(key: str, value):
    """ConfigDef's view of one value: strings trimmed, INTs and BOOLEANs parsed (and validated); None means not set."""
    if key in _BOOLEAN_KEYS:
        if isinstance(value, bool):
            return value
        if not isinstance(value, str):
            raise TypeError(f"{key} must be a bool or a string, not {type(value).__name__}")
        t = java_trim(value).lower()  # equalsIgnoreCase
        if t not in ("true", "false"):
            raise ConfigException(
                f"Invalid value {value} for configuration {key}: Expected value to be either true or false",
                kafka_exception="ConfigException",
                config_key=key,
            )
        return t == "true"
    if key in _INT_KEYS:
        if isinstance(value, bool):
            raise TypeError(f"{key} must be an int or a string, not bool")
        if isinstance(value, int):
            n = value
        elif not isinstance(value, str):
            raise TypeError(f"{key} must be an int or a string, not {type(value).__name__}")
        else:
            t = java_trim(value)
            if not _JAVA_INT.fullmatch(t) or not -(2**31) <= int(t) < 2**31:
                raise ConfigException(
                    f"Invalid value {value} for configuration {key}: Not a number of type INT",
                    kafka_exception="ConfigException",
                    config_key=key,
                )
            n = int(t)
        if key in _AT_LEAST and n < _AT_LEAST[key]:
            raise ConfigException(
                f"Invalid value {n} for configuration {key}: Value must be at least {_AT_LEAST[key]}",
                kafka_exception="ConfigException",
                config_key=key,
            )
        return n
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string, not {type(value).__name__}")
    return java_trim(value)


def warn_unknown_configs(props: Mapping[str, object], stacklevel: int = 3) -> list[str]:
    """Warn (:class:`UnknownConfigWarning`, Kafka's words) about each key a Kafka 2.8 broker does not define.

    Known: the names of 2.8's ``KafkaConfig`` ConfigDef, and per-listener settings
    (``listener.name.<listener>.<setting>``). Kafka's clients log this warning for what they were given
    but did not use (``AbstractConfig.logUnused``); a 2.8 broker ignores an unknown key silently, so a
    typo such as ``advertised.listener`` leaves the setting it meant at its default. The model warns
    instead of staying silent. Returns the unknown keys.
    """
    unknown = [k for k in props if k not in KAFKA_28_BROKER_CONFIGS and not k.startswith("listener.name.")]
    for key in unknown:
        warnings.warn(
            f"The configuration '{key}' was supplied but isn't a known config.",
            UnknownConfigWarning,
            stacklevel=stacklevel,
        )
    return unknown


def resolve(props: Mapping[str, object] | str) -> BrokerListeners | KRaftNodeListeners:
    """Resolve and validate a broker's listeners from its properties, exactly as Kafka 2.8 does.

    Properties that name ``process.roles`` are a KRaft node's: they are resolved as Kafka 4.0 does, by
    :func:`~kafka_lab.listeners.kraft.resolve_kraft`, which returns a
    :class:`~kafka_lab.listeners.kraft.KRaftNodeListeners` (docs/kafka-reference.md §8.3).

    ``props`` maps Kafka property names to strings (or ints for the INT settings), or is the text of a
    ``server.properties`` file; a value of None counts as not set. Raises :class:`ConfigException` with
    Kafka's message, a TypeError for anything but a mapping or text, and warns
    (:class:`~kafka_lab.listeners.errors.UnknownConfigWarning`) about keys Kafka does not know.
    """
    if isinstance(props, str):
        props = parse_properties(props)
    elif not isinstance(props, Mapping):
        raise TypeError(
            "resolve() takes a broker's properties: a mapping of Kafka property names to values "
            "(e.g. {'listeners': 'PLAINTEXT://:9092'}) or the text of a server.properties file, "
            f"not {type(props).__name__}"
        )
    bad = [k for k in props if not isinstance(k, str)]
    if bad:
        raise TypeError(f"property names are strings, like 'listeners', not {bad[0]!r} ({type(bad[0]).__name__})")
    if props.get("process.roles") is not None:  # a KRaft node: Kafka 4.0's rules (docs/kafka-reference.md §8.3)
        from .kraft import resolve_kraft

        return resolve_kraft(props)
    warn_unknown_configs(props)
    originals = {k: v for k, v in props.items() if v is not None}
    p: dict = {}
    for key in _TYPED_KEYS:  # ConfigDef.parse: type errors come before any listener logic
        if key in originals:
            p[key] = _config_value(key, originals[key])
    for key in LISTENER_KEYS:
        if key in originals and key not in _TYPED_KEYS:
            p[key] = _config_value(key, originals[key])
    _check_broker_id(p)

    host_name = p.get("host.name", "")
    port = p.get("port", DEFAULT_PORT)
    map_key = "listener.security.protocol.map"
    controller_listener_names = _java_split_plain(p.get("controller.listener.names") or "")

    def protocol_map() -> dict[str, str]:
        return parse_listener_security_protocol_map(p.get(map_key, DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP))

    def listeners() -> list[EndPoint]:
        if "listeners" in p:
            return listener_list_to_endpoints(p["listeners"], protocol_map(), config_key="listeners")
        key = "host.name" if "host.name" in p else "port" if "port" in p else "listeners"
        return listener_list_to_endpoints(f"PLAINTEXT://{host_name}:{port}", protocol_map(), config_key=key)

    def advertised_listeners() -> list[EndPoint]:
        if "advertised.listeners" in p:
            return listener_list_to_endpoints(
                p["advertised.listeners"],
                protocol_map(),
                require_distinct_ports=False,
                config_key="advertised.listeners",
            )
        if "advertised.host.name" in p or "advertised.port" in p:
            key = "advertised.host.name" if "advertised.host.name" in p else "advertised.port"
            host = p.get("advertised.host.name", host_name)
            adv_port = p.get("advertised.port", port)
            return listener_list_to_endpoints(
                f"PLAINTEXT://{host}:{adv_port}", protocol_map(), require_distinct_ports=False, config_key=key
            )
        return [e for e in listeners() if e.listener_name not in controller_listener_names]

    advertised = advertised_listeners()
    bound = listeners()
    pmap = protocol_map()
    advertised_names = _distinct(e.listener_name for e in advertised)
    listener_names = _distinct(e.listener_name for e in bound)
    ibl_name, ibl_protocol, ibl_key = _inter_broker_listener(p, originals, pmap)

    require(
        ibl_name in advertised_names,
        "inter.broker.listener.name must be a listener name defined in advertised.listeners. "
        f"The valid options based on currently configured listeners are {','.join(advertised_names)}",
        ibl_key,
    )
    require(
        set(advertised_names) <= set(listener_names),
        "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
        f"Found {','.join(advertised_names)}. The valid options based on the current configuration "
        f"are {','.join(listener_names)}",
        "advertised.listeners",
    )
    require(
        not any(e.host == "0.0.0.0" for e in advertised),
        "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.",
        "advertised.listeners",
    )
    controller_listeners = [e for e in bound if e.listener_name in controller_listener_names]
    require(
        not any(e in advertised for e in controller_listeners),
        "advertised.listeners cannot contain any of controller.listener.names",
        "advertised.listeners",
    )

    cp_name = cp_protocol = None
    cp_key = "control.plane.listener.name"
    if cp_key in p:
        cp_name = normalise_listener_name(p[cp_key])
        if cp_name not in pmap:
            raise ConfigException(
                f"Listener with {cp_name} defined in {cp_key} not found in {map_key}.",
                kafka_exception="ConfigException",
                config_key=cp_key,
            )
        cp_protocol = pmap[cp_name]
        require(
            cp_name in advertised_names,
            f"{cp_key} must be a listener name defined in advertised.listeners. "
            f"The valid options based on currently configured listeners are {','.join(advertised_names)}",
            cp_key,
        )
        require(
            cp_name != ibl_name,
            f"{cp_key}, when defined, should have a different value from the inter broker listener name. "
            f"Currently they both have the value ListenerName({cp_name})",
            cp_key,
        )

    # dataPlaneListeners compares the *raw* control.plane.listener.name with the normalised names (a 2.8 quirk)
    raw_cp = p.get(cp_key)
    data_plane = [e for e in bound if e.listener_name != raw_cp and e.listener_name not in controller_listener_names]
    control_plane = next((e for e in bound if e.listener_name == cp_name), None) if cp_name else None
    return BrokerListeners(
        listeners=tuple(bound),
        advertised_listeners=tuple(advertised),
        data_plane_listeners=tuple(data_plane),
        control_plane_listener=control_plane,
        inter_broker_listener_name=ibl_name,
        inter_broker_security_protocol=ibl_protocol,
        listener_security_protocol_map=pmap,
        control_plane_listener_name=cp_name,
        control_plane_security_protocol=cp_protocol,
        controller_listener_names=tuple(n for n in controller_listener_names if n),
        broker_id=p.get("broker.id", -1),
        rack=p.get("broker.rack"),
        props=p,
    )


def _check_broker_id(p: dict) -> None:
    """``KafkaConfig.validateValues``' first check (ZooKeeper mode), before any listener's: a configured
    ``broker.id`` is -1 (generate one) up to ``reserved.broker.max.id``, whose ids above are kept for
    generated ids; with ``broker.id.generation.enable=false`` it is any id from 0."""
    broker_id = p.get("broker.id", -1)
    if p.get("broker.id.generation.enable", True):
        require(
            -1 <= broker_id <= p.get("reserved.broker.max.id", MAX_RESERVED_BROKER_ID),
            "broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id",
            "broker.id",
        )
    else:
        require(broker_id >= 0, "broker.id must be greater than or equal to 0", "broker.id")


def _inter_broker_listener(p: dict, originals: Mapping, pmap: Mapping[str, str]) -> tuple[str, str, str]:
    """``getInterBrokerListenerNameAndSecurityProtocol``: (name, protocol, the setting that chose them)."""
    name_key, protocol_key = "inter.broker.listener.name", "security.inter.broker.protocol"
    if name_key in p:
        if protocol_key in originals:  # checked on the originals: fires even for the default value
            raise ConfigException(
                f"Only one of {name_key} and {protocol_key} should be set.",
                kafka_exception="ConfigException",
                config_key=name_key,
            )
        name = normalise_listener_name(p[name_key])
        if name not in pmap:
            raise ConfigException(
                f"Listener with name {name} defined in {name_key} not found in listener.security.protocol.map.",
                kafka_exception="ConfigException",
                config_key=name_key,
            )
        return name, pmap[name], name_key
    raw = p.get(protocol_key, "PLAINTEXT")
    protocol = security_protocol_for_name(raw)
    if protocol is None:
        raise ConfigException(
            f"Invalid security protocol `{raw}` defined in {protocol_key}",
            kafka_exception="ConfigException",
            config_key=protocol_key,
        )
    return protocol, protocol, protocol_key


def _distinct(names) -> list[str]:
    """Scala ``Seq.toSet`` then ``mkString``: insertion order (exact for up to 4 names)."""
    return list(dict.fromkeys(names))


def _java_split_plain(s: str) -> list[str]:
    """``s.split(",")`` in Java: no trimming; trailing empty strings removed ("" gives [""])."""
    parts = s.split(",")
    if len(parts) > 1:
        while parts and parts[-1] == "":
            parts.pop()
    return parts
