"""A KRaft node's listeners and quorum settings, resolved and validated as Kafka 4.0's ``KafkaConfig`` does.

In Kafka 4.0 every node is a KRaft node (docs/kafka-reference.md §8): ``process.roles`` says whether it is
a broker, a controller or both, ``node.id`` names it, ``controller.listener.names`` names the listeners the
controllers serve (a broker reaches the controllers over the *first* of them), and either
``controller.quorum.voters`` (``{id}@{host}:{port}``, the static voter set) or
``controller.quorum.bootstrap.servers`` (``{host}:{port}``, KIP-853) says where the controllers are. There is
no control plane listener: the controllers never connect to the brokers; each broker fetches the metadata
log from the active controller.

:func:`resolve_kraft` checks a node's properties in Kafka's order (§8.3) and raises
:class:`~kafka_lab.listeners.errors.ConfigException` with Kafka's own message:

1. ConfigDef's parsing, in the merged ConfigDef's order: ``broker.id``, ``process.roles``, ``node.id``,
   ``security.inter.broker.protocol``, ``controller.quorum.voters``, ``controller.quorum.bootstrap.servers``;
   then a role named twice (``parseProcessRoles``);
2. ``node.id`` equal to ``broker.id`` (they are synonyms: the one not set takes the other's value);
3. the protocol map (with KRaft's PLAINTEXT default for controller listeners when the map is not set) and the
   advertised broker listeners;
4. the checks of the node's roles (broker only, controller only, both);
5. with the broker role: an advertised broker listener, the inter-broker listener, advertised ⊆ listeners;
6. no advertised listener on 0.0.0.0; and, as the node starts (``KafkaRaftServer``), no voter on 0.0.0.0.

``listeners`` parse as in 2.8 (§2) but with 3.1's duplicate-port rule (an IPv4 and an IPv6 listener may share
a port).

What the model does on its own account, each said again in §8.3:

- ``control.plane.listener.name`` is refused with Kafka 3.3–3.9's message (``requirement failed:
  control.plane.listener.name is not supported in KRaft mode.``) at the place 3.9 checks it; a note on the
  exception says that 4.0 removed the setting and would start without a word (it reads no undefined key);
- ``host.name``, ``port``, ``advertised.host.name`` and ``advertised.port`` (removed in 3.0) get an
  :class:`~kafka_lab.listeners.errors.UnknownConfigWarning` saying a 4.0 node ignores them; other keys are
  not checked;
- an empty ``process.roles`` is refused with a ValueError of the model's (4.0's answer is not established);
- a voter set of more than 4 ids is printed in Java ``HashMap`` order, where Kafka's Scala ``Set`` uses its
  own hash order (up to 4 ids, as here, Kafka keeps the ``HashMap``'s order);
- IPv4/IPv6 addresses are recognised by Python's ``ipaddress`` (Kafka: Apache Commons Validator's
  ``InetAddressValidator``).

>>> node = resolve_kraft({"process.roles": "broker", "node.id": "4", "controller.listener.names": "CONTROLLER",
...                       "controller.quorum.voters": "1@c1:9093,2@c2:9093,3@c3:9093"})
>>> node.controller_listener_name, node.controller_security_protocol
('CONTROLLER', 'PLAINTEXT')
>>> [e.connection_string for e in node.advertised_broker_listeners]
['PLAINTEXT://:9092']
"""

from __future__ import annotations

import ipaddress
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from . import endpoint as _ep
from .endpoint import (
    DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP,
    SECURITY_PROTOCOLS,
    EndPoint,
    java_trim,
    normalise_listener_name,
    parse_csv_list,
    parse_csv_map,
)
from .errors import ConfigException, UnknownConfigWarning, require

__all__ = [
    "KAFKA_40_DEFAULT_LISTENERS",
    "KRAFT_KEYS",
    "KRaftNodeListeners",
    "KafkaConfigWarning",
    "REMOVED_IN_30",
    "java_hashmap_order",
    "java_string_hash",
    "resolve_kraft",
]

#: ``SocketServerConfigs.LISTENERS_DEFAULT`` (3.0 and later)
KAFKA_40_DEFAULT_LISTENERS = "PLAINTEXT://:9092"
#: the settings a KRaft node's resolution reads
KRAFT_KEYS = (
    "process.roles",
    "node.id",
    "broker.id",
    "broker.rack",
    "listeners",
    "advertised.listeners",
    "listener.security.protocol.map",
    "inter.broker.listener.name",
    "security.inter.broker.protocol",
    "controller.listener.names",
    "controller.quorum.voters",
    "controller.quorum.bootstrap.servers",
    "control.plane.listener.name",
)
#: 2.8's legacy listener settings, gone since 3.0 (not defined in 4.0's KafkaConfig): a 4.0 node ignores them
REMOVED_IN_30 = ("host.name", "port", "advertised.host.name", "advertised.port")

_ROLES = ("broker", "controller")
_SSL_OR_SASL = ("SSL", "SASL_SSL", "SASL_PLAINTEXT")
_JAVA_WS = "[ \t\n\x0b\f\r]"
_LIST_SPLIT = re.compile(rf"{_JAVA_WS}*,{_JAVA_WS}*")
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_PARSE_INT = re.compile(r"[+-]?\d+")  # Integer.parseInt accepts any Unicode decimal digit, as Python's int does
# Utils.HOST_PORT_PATTERN, matched against the whole string
_HOST_PORT = re.compile(r"(?:[0-9a-zA-Z\-%._]*://)?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_VOTERS_FORM = "Each entry should be in the form `{id}@{host}:{port}`."
_CP_NOTE = (
    "Kafka 3.2 to 3.9 refuse control.plane.listener.name on a KRaft node with this message (3.1 with a longer "
    "one). Kafka 4.0 removed "
    "the setting (KAFKA-18353) and reads no undefined key, so a 4.0 node would start and ignore it without a "
    "word. KRaft has no control plane listener: the controllers never connect to the brokers; each broker "
    "fetches the metadata log from the active controller over the first of controller.listener.names "
    "(docs/kafka-reference.md §8.3)."
)


class KafkaConfigWarning(UserWarning):
    """A WARN line Kafka logs while it validates a config that it accepts, with Kafka's text."""


# -- Java's and Scala's collection behaviour, where Kafka's messages depend on it ------------------------


def java_string_hash(s: str) -> int:
    """``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as a 32-bit int."""
    h = 0
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _table_size_for(cap: int) -> int:
    n = 1
    while n < cap:
        n <<= 1
    return n


def java_hashmap_order(keys, hash_of, initial_capacity: int | None = None) -> list:
    """The iteration order of a ``java.util.HashMap`` the keys were put into, in this order.

    ``new HashMap<>()`` starts with 16 buckets, ``new HashMap<>(n)`` with ``tableSizeFor(n)``; the table
    doubles once it holds more than 0.75 of its size. A key's bucket is ``(h ^ h>>>16) & (capacity-1)``;
    iteration goes bucket by bucket, and within a bucket in insertion order (a resize keeps it). A repeated
    key keeps its first place. ``hash_of`` is the key's Java ``hashCode`` (an ``Integer``'s is its value, a
    ``String``'s :func:`java_string_hash`); ``initial_capacity`` counts the puts the code expected, repeats
    included. (Buckets turned into trees, 8 collisions and more, are not modelled.)
    """
    distinct = list(dict.fromkeys(keys))
    cap = 16 if initial_capacity is None else _table_size_for(initial_capacity)
    for size in range(1, len(distinct) + 1):
        if size > int(cap * 0.75):
            cap <<= 1

    def bucket(key) -> int:
        h = hash_of(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    return sorted(distinct, key=lambda k: (bucket(k), distinct.index(k)))


def _scala_set(items) -> str:
    """``Set(...)`` as a Scala immutable Set built from these items prints (exact up to 4 items, see above)."""
    return "Set(" + ", ".join(str(i) for i in items) + ")"


def _java_split(s: str, sep: str) -> list[str]:
    """``s.split(sep)`` in Java (limit 0): no match gives ``[s]``; trailing empty strings are removed."""
    parts = s.split(sep)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


# -- ConfigDef ----------------------------------------------------------------------------------------------


def _string(key: str, value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string, not {type(value).__name__}")
    return java_trim(value)


def _list(key: str, value) -> list[str]:
    """ConfigDef's LIST: a Java List as it is, or a string trimmed and split on ``\\s*,\\s*`` keeping empty entries."""
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, str) for v in value):
            raise TypeError(f"{key} must be a comma-separated string or a list of strings")
        return list(value)
    trimmed = _string(key, value)
    return [] if trimmed == "" else _LIST_SPLIT.split(trimmed)


def _int(key: str, value) -> int:
    """ConfigDef's INT: an int, or a string Java's ``Integer.parseInt`` reads after trimming."""
    if isinstance(value, bool):
        raise TypeError(f"{key} must be an int or a string, not bool")
    if isinstance(value, int):
        n = value
    elif isinstance(value, str):
        t = java_trim(value)
        if not _JAVA_INT.fullmatch(t) or not _INT_MIN <= int(t) <= _INT_MAX:
            raise ConfigException(
                f"Invalid value {value} for configuration {key}: Not a number of type INT",
                kafka_exception="ConfigException",
                config_key=key,
            )
        n = int(t)
    else:
        raise TypeError(f"{key} must be an int or a string, not {type(value).__name__}")
    if not _INT_MIN <= n <= _INT_MAX:
        raise ConfigException(
            f"Invalid value {value} for configuration {key}: Not a number of type INT",
            kafka_exception="ConfigException",
            config_key=key,
        )
    return n


def _parse_voters(entries: list[str]) -> dict[int, tuple[str, int]]:
    """``QuorumConfig.parseVoterConnections`` (the ConfigDef validator): ``{id}@{host}:{port}`` entries."""
    key = "controller.quorum.voters"
    voters: dict[int, tuple[str, int]] = {}
    for entry in entries:
        id_and_address = _java_split(entry, "@")
        if len(id_and_address) != 2:
            raise ConfigException(
                f"Invalid configuration value for {key}. {_VOTERS_FORM}",
                kafka_exception="ConfigException",
                config_key=key,
            )
        id_string, address = id_and_address
        if not _PARSE_INT.fullmatch(id_string) or not _INT_MIN <= int(id_string) <= _INT_MAX:
            raise ConfigException(
                f"Failed to parse voter ID as an integer from {id_string}",
                kafka_exception="ConfigException",
                config_key=key,
            )
        m = _HOST_PORT.fullmatch(address)
        if m is None:
            raise ConfigException(
                f"Failed to parse host name from entry {entry} for the configuration {key}. {_VOTERS_FORM}",
                kafka_exception="ConfigException",
                config_key=key,
            )
        voters[int(id_string)] = (m[1], _socket_port(m[2], key))
    return voters


def _parse_bootstrap_servers(entries: list[str]) -> list[tuple[str, int]]:
    """``QuorumConfig.parseBootstrapServers`` (the ConfigDef validator): ``{host}:{port}`` entries."""
    key = "controller.quorum.bootstrap.servers"
    servers = []
    for entry in entries:
        m = _HOST_PORT.fullmatch(entry)
        if m is None:
            raise ConfigException(
                f"Failed to parse host name from {entry} for the configuration {key}. Each entry should be in "
                'the form "{host}:{port}"',
                kafka_exception="ConfigException",
                config_key=key,
            )
        servers.append((m[1], _socket_port(m[2], key)))
    return servers


def _socket_port(digits: str, key: str) -> int:
    """``Integer.parseInt`` of the port, then ``InetSocketAddress``'s range check (0 to 65535)."""
    port = int(digits)
    if port > _INT_MAX:
        raise ConfigException(f'For input string: "{digits}"', kafka_exception="NumberFormatException", config_key=key)
    if port > 65535:
        raise ConfigException(f"port out of range:{port}", kafka_exception="IllegalArgumentException", config_key=key)
    return port


# -- listeners ----------------------------------------------------------------------------------------------


def _is_ip(host: str | None) -> tuple[bool, bool]:
    """(is IPv4, is IPv6), as ``InetAddressValidator`` answers (approximated with ``ipaddress``)."""
    if host is None:
        return False, False
    try:
        ipaddress.IPv4Address(host)
        return True, False
    except ValueError:
        pass
    try:
        ipaddress.IPv6Address(host)
        return False, True
    except ValueError:
        return False, False


def _listener_list(
    raw: str, pmap: Mapping[str, str], *, require_distinct_ports: bool, config_key: str
) -> list[EndPoint]:
    """``CoreUtils.listenerListToEndPoints`` (3.1 and later): parse, then distinct names, then the port rule."""
    endpoints = []
    try:
        for entry in parse_csv_list(java_trim(raw)):
            m = _ep._URI_PARSE.fullmatch(entry)
            if m is not None and java_trim(m[1]) == "":  # ListenerName.normalised refuses a blank name
                raise _BlankName("The provided listener name is null or empty string")
            endpoints.append(_ep._create_endpoint(entry, pmap))
    except (_ep._Unparsable, _ep._NoProtocol, _ep._NumberFormat, _BlankName) as e:
        inner = {
            _ep._Unparsable: "KafkaException",
            _ep._NoProtocol: "IllegalArgumentException",
            _ep._NumberFormat: "NumberFormatException",
            _BlankName: "ConfigException",
        }[type(e)]
        raise ConfigException(
            f"Error creating broker listeners from '{raw}': {e}",
            kafka_exception="IllegalArgumentException",
            config_key=config_key,
            inner_exception=inner,
        ) from None
    names = [e.listener_name for e in endpoints]
    require(len(set(names)) == len(names), f"Each listener must have a different name, listeners: {raw}", config_key)
    if require_distinct_ports:
        _check_ports(endpoints, raw, config_key)
    return endpoints


class _BlankName(Exception):
    pass


def _check_ports(endpoints: list[EndPoint], raw: str, config_key: str) -> None:
    """3.1's rule: a port (other than 0) may be shared only by one IPv4 and one IPv6 listener."""
    by_port: dict[int, list[EndPoint]] = {}
    for e in endpoints:
        if e.port != 0:
            by_port.setdefault(e.port, []).append(e)
    for port, eps in by_port.items():
        if len(eps) < 2:
            continue
        with_ip = [e for e in eps if any(_is_ip(e.host))]
        without_ip = [e for e in eps if not any(_is_ip(e.host))]
        require(len(without_ip) <= 1, f"Each listener must have a different port, listeners: {raw}", config_key)
        if not with_ip:
            continue
        if len(with_ip) == 2:
            message = (
                "If you have two listeners on the same port then one needs to be IPv4 and the other IPv6, "
                f"listeners: {raw}, port: {port}"
            )
            (v4a, v6a), (v4b, v6b) = _is_ip(with_ip[0].host), _is_ip(with_ip[1].host)
            require((v4a and v6b) or (v6a and v4b), message, config_key)
            if without_ip:
                raise ConfigException(message, kafka_exception="IllegalArgumentException", config_key=config_key)
        else:
            raise ConfigException(
                "Each listener must have a different port unless exactly one listener has an IPv4 address and the "
                f"other IPv6 address, listeners: {raw}, port: {port}",
                kafka_exception="IllegalArgumentException",
                config_key=config_key,
            )


def _protocol_map(raw: str) -> dict[str, str]:
    """``KafkaConfig.getMap`` + the protocol check, in the order of the Java ``HashMap`` ``Csv.parseCsvMap`` fills."""
    key = "listener.security.protocol.map"
    parsed = parse_csv_map(raw, key)  # its message for an entry without ':' is Kafka's
    out: dict[str, str] = {}
    for name in java_hashmap_order(list(parsed), java_string_hash):
        normalised = _normalised(name, key)  # the pair's key is built before its value
        protocol = _ep.security_protocol_for_name(parsed[name])
        if protocol is None:
            raise ConfigException(
                f"Invalid security protocol `{parsed[name]}` defined in {key}",
                kafka_exception="ConfigException",
                config_key=key,
            )
        out[normalised] = protocol
    # of names alike once upper-cased the last (in that order) wins; shown in the order written
    return {normalise_listener_name(n): out[normalise_listener_name(n)] for n in parsed}


# -- the result -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KRaftNodeListeners:
    """What Kafka 4.0's ``KafkaConfig`` computes for a KRaft node's listeners and quorum."""

    process_roles: tuple[str, ...]  #: ``broker``, ``controller`` or both, in the order written
    node_id: int
    listeners: tuple[EndPoint, ...]  #: what the node binds
    advertised_broker_listeners: tuple[EndPoint, ...]  #: what it registers for clients and other brokers
    advertised_controller_listeners: tuple[EndPoint, ...]  #: where other nodes reach its controller
    controller_listener_names: tuple[str, ...]  #: as written (``split(",")``, not upper-cased)
    listener_security_protocol_map: dict[str, str]  #: with KRaft's PLAINTEXT defaults for controller listeners
    voters: dict[int, tuple[str, int]]  #: ``controller.quorum.voters``: id -> (host, port), in Java HashMap order
    bootstrap_servers: tuple[tuple[str, int], ...]  #: ``controller.quorum.bootstrap.servers``
    inter_broker_listener_name: str | None = None  #: with the broker role
    inter_broker_security_protocol: str | None = None
    rack: str | None = None
    props: dict = field(default_factory=dict, compare=False, repr=False)  #: the trimmed properties read

    @property
    def is_broker(self) -> bool:
        return "broker" in self.process_roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.process_roles

    @property
    def is_voter(self) -> bool:
        """In the static voter set (``controller.quorum.voters``); with bootstrap servers only, unknown here."""
        return self.node_id in self.voters

    @property
    def data_plane_listeners(self) -> tuple[EndPoint, ...]:
        """``KafkaConfig.dataPlaneListeners``: the listeners not named in ``controller.listener.names`` (what the
        broker's request handlers serve; a controller's own listeners go to its controller request path)."""
        return tuple(e for e in self.listeners if e.listener_name not in self.controller_listener_names)

    @property
    def control_plane_listener(self) -> None:
        """Always None: KRaft has no control plane listener (KIP-291's setting is refused, §8.3)."""
        return None

    @property
    def controller_listener_name(self) -> str:
        """The listener a broker uses to reach the controllers: the *first* of ``controller.listener.names``,
        as written (``RaftManager.buildNetworkClient``: ``new ListenerName(head)``)."""
        return self.controller_listener_names[0]

    @property
    def controller_security_protocol(self) -> str:
        """The protocol of :attr:`controller_listener_name`: the map's entry for the name as written, else the
        name read as a protocol (``SecurityProtocol.forName``)."""
        name = self.controller_listener_name
        return self.listener_security_protocol_map.get(name) or name.upper()


# -- resolution -------------------------------------------------------------------------------------------------


def resolve_kraft(props: Mapping[str, object] | str) -> KRaftNodeListeners:
    """Resolve and validate a KRaft node's listeners and quorum settings, as Kafka 4.0 does (§8.3).

    ``props`` maps Kafka property names to values (strings; ints for ``node.id``/``broker.id``; a list of
    strings for the LIST settings), or is a ``server.properties`` text; None counts as not set. Raises
    :class:`ConfigException` with Kafka's message, ValueError for an empty ``process.roles``, TypeError for
    input of the wrong type; warns (:class:`KafkaConfigWarning`) where Kafka logs a WARN.
    """
    if isinstance(props, str):
        from .properties import parse_properties

        props = parse_properties(props)
    elif not isinstance(props, Mapping):
        raise TypeError(
            "resolve_kraft() takes a node's properties: a mapping of Kafka property names to values "
            "(e.g. {'process.roles': 'broker', 'node.id': '4'}) or the text of a server.properties file, "
            f"not {type(props).__name__}"
        )
    bad = [k for k in props if not isinstance(k, str)]
    if bad:
        raise TypeError(f"property names are strings, like 'listeners', not {bad[0]!r} ({type(bad[0]).__name__})")
    originals = {k: v for k, v in props.items() if v is not None}
    for key in REMOVED_IN_30:
        if key in originals:
            warnings.warn(
                f"{key} is not a Kafka 4.0 config (removed in 3.0): a 4.0 node ignores it without a word; "
                "listeners and advertised.listeners say where it listens.",
                UnknownConfigWarning,
                stacklevel=3,
            )
    # KafkaConfig.populateSynonyms: node.id and broker.id stand in for each other
    if "broker.id" not in originals and "node.id" in originals:
        originals["broker.id"] = originals["node.id"]
    elif "broker.id" in originals and "node.id" not in originals:
        originals["node.id"] = originals["broker.id"]

    # ConfigDef.parse, in the merged ConfigDef's order (ServerConfigs, KRaftConfigs, ..., ReplicationConfigs, QuorumConfig)
    broker_id = _int("broker.id", originals["broker.id"]) if "broker.id" in originals else -1
    if "process.roles" not in originals:
        raise ConfigException(
            'Missing required configuration "process.roles" which has no default value.',
            kafka_exception="ConfigException",
            config_key="process.roles",
        )
    roles = _list("process.roles", originals["process.roles"])
    for role in roles:
        if role not in _ROLES:
            raise ConfigException(
                f"Invalid value {role} for configuration process.roles: String must be one of: broker, controller",
                kafka_exception="ConfigException",
                config_key="process.roles",
            )
    if "node.id" not in originals:
        raise ConfigException(
            'Missing required configuration "node.id" which has no default value.',
            kafka_exception="ConfigException",
            config_key="node.id",
        )
    node_id = _int("node.id", originals["node.id"])
    if node_id < 0:
        raise ConfigException(
            f"Invalid value {node_id} for configuration node.id: Value must be at least 0",
            kafka_exception="ConfigException",
            config_key="node.id",
        )
    p = {k: _string(k, originals[k]) for k in KRAFT_KEYS if k in originals and k not in _TYPED}
    sibp = p.get("security.inter.broker.protocol", "PLAINTEXT")
    if sibp not in SECURITY_PROTOCOLS:
        raise ConfigException(
            f"Invalid value {sibp} for configuration security.inter.broker.protocol: String must be one of: "
            + ", ".join(SECURITY_PROTOCOLS),
            kafka_exception="ConfigException",
            config_key="security.inter.broker.protocol",
        )
    voter_entries = _list("controller.quorum.voters", originals.get("controller.quorum.voters", ""))
    voters = _parse_voters(voter_entries)
    bootstrap = _parse_bootstrap_servers(
        _list("controller.quorum.bootstrap.servers", originals.get("controller.quorum.bootstrap.servers", ""))
    )
    # KafkaConfig's constructor: parseProcessRoles
    if len(set(roles)) != len(roles):
        raise ConfigException(
            f"Duplicate role names found in `process.roles`: ArrayBuffer({', '.join(roles)})",
            kafka_exception="ConfigException",
            config_key="process.roles",
        )
    if not roles:
        raise ValueError(
            "process.roles is empty: a KRaft node plays 'broker', 'controller' or 'broker,controller' "
            "(Kafka 4.0's own answer to an empty list is not established; see docs/kafka-reference.md §8.3)"
        )
    # the voters as the Java HashMap parseVoterConnections fills (new HashMap<>(entries)) iterates them
    voter_ids = java_hashmap_order(list(voters), lambda i: i, initial_capacity=len(voter_entries))
    return _validate(p, originals, tuple(roles), node_id, broker_id, {i: voters[i] for i in voter_ids}, bootstrap)


_TYPED = ("process.roles", "node.id", "broker.id", "controller.quorum.voters", "controller.quorum.bootstrap.servers")


def _validate(p, originals, roles, node_id, broker_id, voters, bootstrap) -> KRaftNodeListeners:
    """``KafkaConfig.validateValues`` for a KRaft node, in its order."""
    if node_id != broker_id:
        raise ConfigException(
            "You must set `node.id` to the same value as `broker.id`.",
            kafka_exception="ConfigException",
            config_key="node.id",
        )
    map_key = "listener.security.protocol.map"
    raw_names = p.get("controller.listener.names", "")
    controller_names = [] if raw_names == "" else _java_split(raw_names, ",")
    raw_listeners = p.get("listeners", KAFKA_40_DEFAULT_LISTENERS)

    def protocol_map() -> dict[str, str]:
        """``effectiveListenerSecurityProtocolMap``."""
        pmap = _protocol_map(p.get(map_key, DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP))
        if map_key in originals:
            return pmap
        if any(n in _SSL_OR_SASL for n in controller_names) or any(
            _listener_name_of(entry) in _SSL_OR_SASL for entry in parse_csv_list(raw_listeners)
        ):
            return pmap
        return {**pmap, **{n: "PLAINTEXT" for n in controller_names if n != "PLAINTEXT"}}  # names as written

    def listeners() -> list[EndPoint]:
        return _listener_list(raw_listeners, protocol_map(), require_distinct_ports=True, config_key="listeners")

    def advertised() -> list[EndPoint]:
        if "advertised.listeners" in p:
            return _listener_list(
                p["advertised.listeners"],
                protocol_map(),
                require_distinct_ports=False,
                config_key="advertised.listeners",
            )
        return listeners()

    def advertised_brokers() -> list[EndPoint]:
        return [e for e in advertised() if e.listener_name not in controller_names]

    def controller_listeners() -> list[EndPoint]:
        return [e for e in listeners() if e.listener_name in controller_names]

    def advertised_controllers() -> list[EndPoint]:
        adv = [e for e in advertised() if e.listener_name in controller_names]
        bound = controller_listeners()
        out = []
        for name in controller_names:
            found = _find_by_name(adv, name) or _find_by_name(bound, name)
            if found is not None:
                out.append(found)
        return out

    broker_names = _distinct(e.listener_name for e in advertised_brokers())
    voter_set = _scala_set(voters)
    quorum_message = (
        "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap "
        "controllers or controller.quorum.voters must contain a parseable set of controllers."
    )

    def check_quorum() -> None:
        if not voters and not bootstrap:
            raise ConfigException(
                quorum_message, kafka_exception="ConfigException", config_key="controller.quorum.voters"
            )

    def check_no_control_plane() -> None:  # 3.3-3.9's validateControlPlaneListenerEmptyForKRaft (see the module)
        key = "control.plane.listener.name"
        if key not in p:
            return
        name = normalise_listener_name(p[key])
        if name not in protocol_map():
            exc = ConfigException(
                f"Listener with {name} defined in {key} not found in {map_key}.",
                kafka_exception="ConfigException",
                config_key=key,
            )
        else:
            exc = ConfigException(
                f"requirement failed: {key} is not supported in KRaft mode.",
                kafka_exception="IllegalArgumentException",
                config_key=key,
            )
        exc.add_note(_CP_NOTE)
        raise exc

    def check_voter_if_controller() -> None:
        require(
            not voters or node_id in voters,
            f"If process.roles contains the 'controller' role, the node id {node_id} must be included in the set of "
            f"voters controller.quorum.voters={voter_set}",
            "controller.quorum.voters",
        )

    def check_controller_listeners_bound() -> None:
        require(
            len(advertised_controllers()) > 0,
            "controller.listener.names must contain at least one value appearing in the 'listeners' configuration "
            "when running the KRaft controller role",
            "controller.listener.names",
        )
        bound_names = {e.listener_name for e in listeners()}
        require(
            all(n in bound_names for n in controller_names),
            "controller.listener.names must only contain values appearing in the 'listeners' configuration when "
            "running the KRaft controller role",
            "controller.listener.names",
        )

    ibl = (None, None)
    if set(roles) == {"broker"}:
        check_quorum()
        check_no_control_plane()
        require(
            node_id not in voters,
            f"If process.roles contains just the 'broker' role, the node id {node_id} must not be included in the set "
            f"of voters controller.quorum.voters={voter_set}",
            "controller.quorum.voters",
        )
        require(
            len(controller_names) > 0,
            "controller.listener.names must contain at least one value when running KRaft with just the broker role",
            "controller.listener.names",
        )
        require(
            not controller_listeners(),
            "controller.listener.names must not contain a value appearing in the 'listeners' configuration when "
            "running KRaft with just the broker role",
            "controller.listener.names",
        )
        pmap = protocol_map()
        for name in controller_names:
            normalised = _normalised(name)
            if normalised not in pmap:
                raise ConfigException(
                    f"Controller listener with name {normalised} defined in controller.listener.names not found in "
                    f"{map_key}  (an explicit security mapping for each controller listener is required if "
                    f"{map_key} is non-empty, or if there are security protocols other than PLAINTEXT in use)",
                    kafka_exception="ConfigException",
                    config_key="controller.listener.names",
                )
        if len(controller_names) > 1:
            warnings.warn(
                "controller.listener.names has multiple entries; only the first will be used since "
                f"process.roles=broker: [{', '.join(controller_names)}]",
                KafkaConfigWarning,
                stacklevel=3,
            )
    elif set(roles) == {"controller"}:
        check_quorum()
        check_no_control_plane()
        require(
            len(advertised_controllers()) == len(listeners()),
            "The listeners config must only contain KRaft controller listeners from controller.listener.names when "
            "process.roles=controller",
            "listeners",
        )
        if "inter.broker.listener.name" in p:  # KAFKA-18305, 4.0
            name, _protocol = _inter_broker_listener(p, originals, protocol_map())
            require(
                name not in controller_names,
                "controller.listener.names must not contain an explicitly set inter.broker.listener.name configuration "
                "value when process.roles=controller'",
                "controller.listener.names",
            )
        check_voter_if_controller()
        check_controller_listeners_bound()
    else:  # combined
        check_quorum()
        check_no_control_plane()
        check_voter_if_controller()
        check_controller_listeners_bound()

    listener_names = _distinct(e.listener_name for e in listeners())
    if "broker" in roles:
        require(
            len(broker_names) > 0,
            "There must be at least one broker advertised listener. Perhaps all listeners appear in "
            "controller.listener.names?",
            "advertised.listeners",
        )
        ibl = _inter_broker_listener(p, originals, protocol_map())
        require(
            ibl[0] in broker_names,
            "inter.broker.listener.name must be a listener name defined in advertised.listeners. "
            f"The valid options based on currently configured listeners are {','.join(broker_names)}",
            "inter.broker.listener.name" if "inter.broker.listener.name" in p else "security.inter.broker.protocol",
        )
        require(
            set(broker_names) <= set(listener_names),
            "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
            f"Found {','.join(broker_names)}. The valid options based on the current configuration "
            f"are {','.join(listener_names)}",
            "advertised.listeners",
        )
    zero = "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address."
    require(not any(e.host == "0.0.0.0" for e in advertised_brokers()), zero, "advertised.listeners")
    require(not any(e.host == "0.0.0.0" for e in advertised_controllers()), zero, "advertised.listeners")
    # as the node starts (SharedServer -> RaftManager.buildNetworkClient): the first controller listener's protocol,
    # looked up under the name as written, else the name read as a protocol (SecurityProtocol.forName)
    head = controller_names[0] if controller_names else None
    if head is not None and head not in protocol_map() and head.upper() not in SECURITY_PROTOCOLS:
        raise ConfigException(
            f"No enum constant org.apache.kafka.common.security.auth.SecurityProtocol.{head.upper()}",
            kafka_exception="IllegalArgumentException",
            config_key="controller.listener.names",
        )
    # KafkaRaftServer, as the node starts: QuorumConfig.parseVoterConnections(voters) wants routable hosts
    for host, _port in voters.values():
        if host == "0.0.0.0":
            raise ConfigException(
                "Host string (0.0.0.0) is not routeable",
                kafka_exception="ConfigException",
                config_key="controller.quorum.voters",
            )
    return KRaftNodeListeners(
        process_roles=roles,
        node_id=node_id,
        listeners=tuple(listeners()),
        advertised_broker_listeners=tuple(advertised_brokers()),
        advertised_controller_listeners=tuple(advertised_controllers()),
        controller_listener_names=tuple(controller_names),
        listener_security_protocol_map=protocol_map(),
        voters=voters,
        bootstrap_servers=tuple(bootstrap),
        inter_broker_listener_name=ibl[0],
        inter_broker_security_protocol=ibl[1],
        rack=p.get("broker.rack"),
        props=p,
    )


def _normalised(name: str, config_key: str = "controller.listener.names") -> str:
    """``ListenerName.normalised``: upper-cased; a blank name is refused."""
    if java_trim(name) == "":
        raise ConfigException(
            "The provided listener name is null or empty string",
            kafka_exception="ConfigException",
            config_key=config_key,
        )
    return normalise_listener_name(name)


def _find_by_name(endpoints: list[EndPoint], name: str) -> EndPoint | None:
    """``endpoints.find(_.listenerName.equals(ListenerName.normalised(name)))``: the name is normalised for each
    endpoint compared, so a blank name fails only when there is an endpoint to compare."""
    for e in endpoints:
        if e.listener_name == _normalised(name):
            return e
    return None


def _listener_name_of(entry: str) -> str:
    """``EndPoint.parseListenerName``: what precedes the first ':', upper-cased."""
    colon = entry.find(":")
    if colon < 0:
        raise ConfigException(
            f"Unable to parse a listener name from {entry}", kafka_exception="KafkaException", config_key="listeners"
        )
    return entry[:colon].upper()


def _inter_broker_listener(p: dict, originals: Mapping, pmap: Mapping[str, str]) -> tuple[str, str]:
    """``getInterBrokerListenerNameAndSecurityProtocol`` (``security.inter.broker.protocol`` was validated by ConfigDef)."""
    name_key, protocol_key = "inter.broker.listener.name", "security.inter.broker.protocol"
    if name_key in p:
        if protocol_key in originals:
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
        return name, pmap[name]
    protocol = p.get(protocol_key, "PLAINTEXT")
    return protocol, protocol


def _distinct(names) -> list[str]:
    return list(dict.fromkeys(names))
