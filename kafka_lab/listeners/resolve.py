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
Kafka reports: the protocol map is parsed first, then ``advertised.listeners`` (or what stands in
for it), then ``listeners``, then the inter-broker listener name; then the ``require`` checks:
inter-broker listener advertised, advertised names a subset of listeners, no 0.0.0.0 advertised,
no ``controller.listener.names`` listener advertised, and the control-plane listener (in the map,
advertised, different from the inter-broker listener).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .endpoint import (
    DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP,
    EndPoint,
    java_trim,
    listener_list_to_endpoints,
    normalise_listener_name,
    parse_listener_security_protocol_map,
    security_protocol_for_name,
)
from .errors import ConfigException, require

__all__ = ["BrokerListeners", "resolve", "parse_properties", "LISTENER_KEYS", "DEFAULT_PORT"]

DEFAULT_PORT = 9092

#: the broker settings this model reads; every other key is ignored, as Kafka ignores keys it does not use here
LISTENER_KEYS = (
    "broker.id",
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
#: INT settings, parsed by ConfigDef (in its definition order) before KafkaConfig looks at any listener
_INT_KEYS = ("broker.id", "port", "advertised.port")
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


def parse_properties(text: str) -> dict[str, str]:
    """A ``server.properties`` text as a dict (``key=value``, ``key: value`` or ``key value``; ``#``/``!`` comments).

    Like ``java.util.Properties``: leading blanks of a line are skipped and the value keeps what
    follows the separator (ConfigDef trims it later); a later line wins over an earlier one. A line
    ending in a backslash continues on the next. Escapes other than that are not interpreted.
    """
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


def _config_value(key: str, value):
    """ConfigDef's view of one value: strings trimmed, INTs parsed; None means not set."""
    if key in _INT_KEYS:
        if isinstance(value, bool):
            raise TypeError(f"{key} must be an int or a string, not bool")
        if isinstance(value, int):
            return value
        if not isinstance(value, str):
            raise TypeError(f"{key} must be an int or a string, not {type(value).__name__}")
        t = java_trim(value)
        if not _JAVA_INT.fullmatch(t) or not -(2**31) <= int(t) < 2**31:
            raise ConfigException(
                f"Invalid value {value} for configuration {key}: Not a number of type INT",
                kafka_exception="ConfigException",
                config_key=key,
            )
        return int(t)
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string, not {type(value).__name__}")
    return java_trim(value)


def resolve(props: Mapping[str, object] | str) -> BrokerListeners:
    """Resolve and validate a broker's listeners from its properties, exactly as Kafka 2.8 does.

    ``props`` maps Kafka property names to strings (a ``server.properties`` text is accepted too);
    a value of None counts as not set. Raises :class:`ConfigException` with Kafka's message.
    """
    if isinstance(props, str):
        props = parse_properties(props)
    originals = {k: v for k, v in props.items() if v is not None}
    p: dict = {}
    for key in _INT_KEYS:  # ConfigDef.parse: type errors come before any listener logic
        if key in originals:
            p[key] = _config_value(key, originals[key])
    for key in LISTENER_KEYS:
        if key in originals and key not in _INT_KEYS:
            p[key] = _config_value(key, originals[key])

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
