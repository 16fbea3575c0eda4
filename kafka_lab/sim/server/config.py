"""The broker settings the request-path model reads, under Kafka's property names and defaults.

A broker is described by its properties, as in ``server.properties``::

    {"listeners": "INTERNAL://:9092,EXTERNAL://:9093,CONTROLLER://:9091",
     "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
     "inter.broker.listener.name": "INTERNAL",
     "control.plane.listener.name": "CONTROLLER",
     "num.io.threads": 8}

Whether the broker has a dedicated control plane is not a switch of the model: it is what listener
resolution (:func:`kafka_lab.listeners.resolve`, Kafka 2.8's rules and messages) says about
``control.plane.listener.name``. The control plane has two sides (docs/kafka-reference.md §2): the
*controller* picks the listener it connects to on every broker from its own config (that name when set,
else its inter-broker listener: :attr:`BrokerConfig.controller_to_broker_listener_name`), and the
*receiving* broker serves that listener on its control plane only if it names it too; any other
listener, CONTROLLER included, is one of its data-plane listeners, whose connections share the data
plane's request queue.

The model's own knobs, which are not Kafka settings (network read/send time, the service-time
models, the rejected priority-queue alternative), live in :class:`ModelSettings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_lab.listeners import ConfigException

from ..common.options import check_time, kafka_int

__all__ = [
    "BrokerConfig",
    "ConfigException",
    "ModelSettings",
    "Listener",
    "boolean_setting",
    "resolve_listeners",
    "CONTROL_PLANE_QUEUE_CAPACITY",
]

#: KIP-291: ``new RequestChannel(20, ...)``, a literal in SocketServer, not a setting
CONTROL_PLANE_QUEUE_CAPACITY = 20
#: KIP-291: one pinned network processor and one pinned request handler thread
CONTROL_PLANE_PROCESSORS = 1
CONTROL_PLANE_HANDLERS = 1

# name: (default, minimum) -- Kafka 2.8 KafkaConfig's INT settings and their atLeast validators.
# broker.id: Kafka's default is -1 (an id generated at start-up); the model's broker is 0 unless told. It has
# no validator: KafkaConfig checks its range (-1 .. reserved.broker.max.id) after parsing, in listener
# resolution (kafka_lab.listeners.resolve), which reads reserved.broker.max.id and broker.id.generation.enable.
_INT_SETTINGS = {
    "broker.id": (0, None),
    "num.network.threads": (3, 1),
    "num.io.threads": (8, 1),
    "queued.max.requests": (500, 1),
    "request.timeout.ms": (30000, 0),
    "replica.fetch.wait.max.ms": (500, 0),
    "replica.lag.time.max.ms": (30000, 0),
    "min.insync.replicas": (1, 1),
    # no validator in KafkaConfig (``define(ZkSessionTimeoutMsProp, INT, 18000, HIGH, ...)``); the model asks > 0
    "zookeeper.session.timeout.ms": (18000, 1),
}


def _invalid(name: str, message: str) -> ConfigException:
    """ConfigDef's rejection of one setting, with Kafka's message."""
    return ConfigException(message, kafka_exception="ConfigException", config_key=name)


def _int_setting(props: Mapping, name: str) -> int:
    """One INT setting of ``props``, its default when absent, read as ConfigDef reads it (:func:`kafka_int`)."""
    default, minimum = _INT_SETTINGS[name]
    raw = props.get(name)
    if raw is None:
        return default
    return kafka_int(name, raw, minimum)


def boolean_setting(name: str, raw) -> bool:
    """A BOOLEAN setting as ``ConfigDef.parseType`` reads it: a bool, or the text ``true`` / ``false`` in any
    case, spaces around it ignored; anything else is refused with Kafka's message."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
        return raw.strip().lower() == "true"
    raise _invalid(name, f"Invalid value {raw} for configuration {name}: Expected value to be either true or false")


#: the settings listener resolution reads that may be given as Python values rather than text
_TYPED_LISTENER_KEYS = ("port", "advertised.port", "broker.id", "reserved.broker.max.id", "broker.id.generation.enable")


@dataclass(frozen=True)
class Listener:
    """A listener the socket server binds: its name, where, and which plane serves it."""

    name: str
    host: str | None
    port: int
    security_protocol: str
    plane: str  # "data" or "control"


def resolve_listeners(props: Mapping):
    """(data-plane listeners, control-plane listener or None, the resolved
    :class:`~kafka_lab.listeners.BrokerListeners`), by Kafka's rules.

    The one place the model calls listener resolution; it raises its ConfigException unchanged.
    """
    from kafka_lab.listeners import resolve

    if "process.roles" in props:
        # a Kafka 4.0 KRaft node (docs/kafka-reference.md §8.3): a broker-only node's listeners are all data plane
        res = resolve(props)
        if res.process_roles != ("broker",):
            raise ValueError(
                f"a KRaft broker of the model has process.roles=broker, got process.roles={','.join(res.process_roles)}"
                " (a controller is a node of the cluster's quorum, kafka_lab.sim.kraft)"
            )
        data = [
            Listener(e.listener_name, e.host, e.port, e.security_protocol, "data") for e in res.data_plane_listeners
        ]
        return data, None, res
    res = resolve({k: v for k, v in props.items() if isinstance(v, str) or k in _TYPED_LISTENER_KEYS})
    cp = res.control_plane_listener
    control = None if cp is None else Listener(cp.listener_name, cp.host, cp.port, cp.security_protocol, "control")
    data = [
        Listener(e.listener_name, e.host, e.port, e.security_protocol, "data")
        for e in res.data_plane_listeners
        if control is None or e.listener_name != control.name
    ]
    return data, control, res


@dataclass(frozen=True)
class BrokerConfig:
    """The subset of a broker's configuration the request path depends on.

    ``request.timeout.ms`` is the broker's own (for its clients, e.g. the controller channel of later
    labs); a produce request waits in purgatory for the *producer's* ``request.timeout.ms``, which it
    sends as the request's ``timeoutMs``.
    """

    broker_id: int
    num_network_threads: int
    num_io_threads: int
    queued_max_requests: int
    request_timeout_ms: int
    replica_fetch_wait_max_ms: int
    replica_lag_time_max_ms: int
    min_insync_replicas: int
    data_plane_listeners: tuple
    control_plane_listener: Listener | None
    inter_broker_listener_name: str
    props: dict = field(default_factory=dict, compare=False, repr=False)
    #: the resolved listeners (:func:`kafka_lab.listeners.resolve`): what the broker registers, and which
    #: listener it uses when it is the controller
    listeners: object = field(default=None, compare=False, repr=False)
    #: ``zookeeper.session.timeout.ms``: how long ZooKeeper keeps the session of a broker it no longer hears from
    zk_session_timeout_ms: int = 18000

    @classmethod
    def from_properties(cls, props: Mapping | None = None) -> BrokerConfig:
        if isinstance(props, str):  # a server.properties text, as resolve() takes it
            from kafka_lab.listeners import parse_properties

            props = parse_properties(props)
        elif props is not None and not isinstance(props, Mapping):
            raise TypeError(
                "a broker's properties are a mapping of Kafka property names to values or the text of "
                f"a server.properties file, not {type(props).__name__}"
            )
        props = dict(props or {})
        ints = {name: _int_setting(props, name) for name in _INT_SETTINGS}
        data, control, resolved = resolve_listeners(props)
        return cls(
            broker_id=ints["broker.id"],
            num_network_threads=ints["num.network.threads"],
            num_io_threads=ints["num.io.threads"],
            queued_max_requests=ints["queued.max.requests"],
            request_timeout_ms=ints["request.timeout.ms"],
            replica_fetch_wait_max_ms=ints["replica.fetch.wait.max.ms"],
            replica_lag_time_max_ms=ints["replica.lag.time.max.ms"],
            min_insync_replicas=ints["min.insync.replicas"],
            zk_session_timeout_ms=ints["zookeeper.session.timeout.ms"],
            data_plane_listeners=tuple(data),
            control_plane_listener=control,
            inter_broker_listener_name=resolved.inter_broker_listener_name,
            props=props,
            listeners=resolved,
        )

    @property
    def has_control_plane(self) -> bool:
        return self.control_plane_listener is not None

    @property
    def controller_to_broker_listener_name(self) -> str:
        """When this broker is the controller, the listener it connects to on *every* broker
        (``ControllerChannelManager.addNewBroker``): ``control.plane.listener.name``, else the inter-broker
        listener. Which plane serves it is the receiving broker's own config, not this one's."""
        return self.listeners.controller_to_broker_listener_name

    def listener(self, name: str) -> Listener | None:
        """The bound listener ``name`` (its plane by this broker's config), or None."""
        for lst in (*self.data_plane_listeners, self.control_plane_listener):
            if lst is not None and lst.name == name:
                return lst
        return None


@dataclass(frozen=True)
class ModelSettings:
    """Knobs of the model that are not Kafka settings.

    - ``network_read_ms`` / ``network_send_ms``: a processor's time to read one request / write one
      response (small; 0 makes the network free, as queueing theory assumes);
    - ``costs``: service-time models per API (see :func:`kafka_lab.sim.server.apis.default_costs`), merged
      over the defaults;
    - ``prioritise_controller_requests``: KIP-291's *rejected alternative*: controller requests jump
      ahead inside the shared data queue (only meaningful without a control plane);
    - ``replica_append_ms``: a follower's fetcher thread's work to append one fetch response's records.
    """

    network_read_ms: float = 0.01
    network_send_ms: float = 0.01
    costs: dict = field(default_factory=dict)
    prioritise_controller_requests: bool = False
    replica_append_ms: float = 0.1

    def __post_init__(self):
        for name in ("network_read_ms", "network_send_ms", "replica_append_ms"):
            check_time(name, getattr(self, name))
        if not isinstance(self.costs, Mapping):
            raise TypeError(f"costs is {{api name: CostModel}}, got {type(self.costs).__name__}")
        if not isinstance(self.prioritise_controller_requests, bool):
            raise TypeError(
                f"prioritise_controller_requests is True or False, got {self.prioritise_controller_requests!r}"
            )
