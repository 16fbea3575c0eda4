"""Where a Kafka 2.8 broker listens, what it publishes, and where its controller connects.

Listener resolution and validation exactly as ``KafkaConfig`` does it (Kafka 2.8, ZooKeeper mode),
with Kafka's own error messages, and the KIP-291 control plane on top:

- :mod:`.endpoint`     -- ``NAME://host:port`` parsing and printing; the CSV and map parsing rules
- :mod:`.resolve`      -- :func:`resolve`: properties -> :class:`BrokerListeners` (or :class:`ConfigException`)
- :mod:`.kraft`        -- a KRaft node's properties (``process.roles``) -> :class:`KRaftNodeListeners`, Kafka 4.0's rules
- :mod:`.registration` -- the ``/brokers/ids/<id>`` JSON, and the controller's choice of endpoint
- :mod:`.migration`    -- KIP-291's two rolling upgrades, step by step
- :mod:`.hints`        -- what to change when Kafka refuses a config, following the cause it names
- :mod:`.examples`     -- the KIP's broker configs and the lab's presets

>>> from kafka_lab.listeners import resolve
>>> resolve({}).listeners[0].connection_string
'PLAINTEXT://:9092'
>>> resolve({"listeners": "SSL://[::1]:9093", "security.inter.broker.protocol": "SSL"}).listeners[0].connection_string
'SSL://[::1]:9093'
"""

from .endpoint import (
    DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP,
    SECURITY_PROTOCOLS,
    EndPoint,
    format_endpoint,
    listener_list_to_endpoints,
    parse_csv_list,
    parse_csv_map,
    parse_endpoint,
    parse_listener_security_protocol_map,
)
from .errors import ConfigException, UnknownConfigWarning
from .examples import (
    CLIENT_LISTENER,
    KIP291_AS_PRINTED,
    KIP291_REGISTRATION_AS_PRINTED,
    PRESETS,
    STAGES,
    cluster_broker,
    control_plane_broker,
    kip291_broker,
    kip291_properties_text,
)
from .hints import fix_hint
from .kraft import KafkaConfigWarning, KRaftNodeListeners, resolve_kraft
from .migration import ClusterState, controller_routes, migration_states, migration_steps, migration_summary
from .properties import parse_properties
from .registration import (
    KIP291_TIMESTAMP_MS,
    BrokerEndPointNotAvailableException,
    ControllerRoute,
    broker_registration,
    controller_endpoint,
    published_endpoints,
    registered_endpoints,
    registration_json,
)
from .resolve import LISTENER_KEYS, BrokerListeners, bind_description, resolve, warn_unknown_configs
from .views import HOST_NAME, listener_table, users_of

__all__ = [
    "CLIENT_LISTENER",
    "BrokerEndPointNotAvailableException",
    "BrokerListeners",
    "HOST_NAME",
    "ClusterState",
    "ConfigException",
    "ControllerRoute",
    "DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP",
    "EndPoint",
    "KIP291_AS_PRINTED",
    "KIP291_REGISTRATION_AS_PRINTED",
    "KIP291_TIMESTAMP_MS",
    "KRaftNodeListeners",
    "KafkaConfigWarning",
    "LISTENER_KEYS",
    "PRESETS",
    "SECURITY_PROTOCOLS",
    "STAGES",
    "bind_description",
    "broker_registration",
    "cluster_broker",
    "control_plane_broker",
    "controller_endpoint",
    "controller_routes",
    "fix_hint",
    "format_endpoint",
    "kip291_broker",
    "kip291_properties_text",
    "listener_list_to_endpoints",
    "migration_states",
    "migration_steps",
    "migration_summary",
    "parse_csv_list",
    "parse_csv_map",
    "parse_endpoint",
    "parse_listener_security_protocol_map",
    "parse_properties",
    "published_endpoints",
    "registered_endpoints",
    "registration_json",
    "resolve",
    "resolve_kraft",
    "listener_table",
    "users_of",
    "UnknownConfigWarning",
    "warn_unknown_configs",
]
