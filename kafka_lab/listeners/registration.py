"""What a broker publishes in ZooKeeper, and which of it the controller connects to.

On start-up a broker writes ``/brokers/ids/<broker.id>``, an ephemeral znode whose JSON holds its
*advertised* listeners (``BrokerIdZNode.encode``, Kafka 2.8)::

    {"version": 4, "host": ..., "port": ..., "endpoints": ["INTERNAL://broker1.example.com:9092", ...],
     "jmx_port": -1, "timestamp": "1532467569343", "listener_security_protocol_map": {"INTERNAL": "PLAINTEXT", ...}}

* ``host``/``port`` are for clients too old to read ``endpoints``: the first endpoint whose security
  protocol is PLAINTEXT, or ``null``/``-1`` when there is none (such clients then cannot connect).
* An advertised endpoint with an empty host is published with the broker's canonical host name
  (``InetAddress.getLocalHost.getCanonicalHostName``), and port 0 with the port actually bound.
* ``listener_security_protocol_map`` covers the advertised listeners only, not the whole setting.
* ``rack`` is added when ``broker.rack`` is set (KIP-36, version 3 and later); version 5 (inter-broker
  protocol 2.7 and later, the 2.8 default) adds ``features``.

The controller watches ``/brokers/ids``. For each broker it reads the endpoints back (parsed with the
znode's own protocol map) and picks one by listener name -- the name from *its own* config
(``ControllerChannelManager.addNewBroker``)::

    controllerToBrokerListenerName = config.controlPlaneListenerName.getOrElse(config.interBrokerListenerName)

If the broker has not published that listener the controller fails with
``BrokerEndPointNotAvailableException: End point with listener name X not found for broker N``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from .endpoint import EndPoint, parse_endpoint
from .resolve import BrokerListeners

__all__ = [
    "BrokerEndPointNotAvailableException",
    "ControllerRoute",
    "broker_registration",
    "registration_json",
    "registered_endpoints",
    "controller_endpoint",
]

#: the timestamp of the KIP-291 page's example registrations
KIP291_TIMESTAMP_MS = 1532467569343


class BrokerEndPointNotAvailableException(LookupError):
    """Kafka's ``BrokerEndPointNotAvailableException``: a broker did not publish the listener asked for."""

    def __str__(self) -> str:
        return self.args[0]


def broker_registration(
    broker: BrokerListeners,
    *,
    timestamp_ms: int,
    jmx_port: int = -1,
    version: int = 4,
    canonical_host_name: str = "localhost",
    bound_ports: Mapping[str, int] | None = None,
) -> dict:
    """The JSON object a broker writes to ``/brokers/ids/<id>`` (keys in ``BrokerIdZNode.encode``'s order).

    ``timestamp_ms`` is the registration time (``Time.SYSTEM.milliseconds``, stored as a string);
    ``canonical_host_name`` stands in for the machine's name, used for endpoints published without a
    host; ``bound_ports`` gives the port actually bound for listeners configured with port 0.
    """
    if version not in (4, 5):
        raise ValueError(f"this model writes registration versions 4 and 5 (Kafka 2.8), not {version}")
    endpoints = []
    for e in broker.advertised_listeners:
        if e.port == 0 and bound_ports and e.listener_name in bound_ports:
            e = EndPoint(e.listener_name, e.host, bound_ports[e.listener_name], e.security_protocol)
        if e.host is None or not e.host.strip():
            e = EndPoint(e.listener_name, canonical_host_name, e.port, e.security_protocol)
        endpoints.append(e)
    plaintext = next((e for e in endpoints if e.security_protocol == "PLAINTEXT"), None)
    reg = {
        "version": version,
        "host": plaintext.host if plaintext else None,
        "port": plaintext.port if plaintext else -1,
        "endpoints": [e.connection_string for e in endpoints],
        "jmx_port": jmx_port,
        "timestamp": str(timestamp_ms),
    }
    if broker.rack is not None:
        reg["rack"] = broker.rack
    reg["listener_security_protocol_map"] = {e.listener_name: e.security_protocol for e in endpoints}
    if version >= 5:
        reg["features"] = {}  # 2.8 brokers declare no supported features by default
    return reg


def registration_json(registration: dict, indent: int | None = 4) -> str:
    """The registration as JSON text (Kafka writes it compact; ``indent`` is for reading)."""
    return json.dumps(registration, indent=indent)


def registered_endpoints(registration: dict | str) -> list[EndPoint]:
    """The endpoints a reader of the znode sees (``BrokerIdZNode.decode``): parsed with the znode's protocol map."""
    if isinstance(registration, str):
        registration = json.loads(registration)
    pmap = registration.get("listener_security_protocol_map")
    if pmap is not None:
        pmap = {name: protocol.upper() for name, protocol in pmap.items()}
    return [parse_endpoint(s, pmap) for s in registration["endpoints"]]


@dataclass(frozen=True)
class ControllerRoute:
    """How the controller reaches one broker."""

    broker_id: int
    listener_name: str  #: chosen by the controller's own config
    endpoint: EndPoint  #: from the broker's registration
    security_protocol: str  #: the controller's own protocol for that listener
    dedicated: bool  #: True when chosen by control.plane.listener.name (KIP-291)

    @property
    def connection_string(self) -> str:
        return self.endpoint.connection_string


def controller_endpoint(controller: BrokerListeners, registration: dict | str, broker_id: int) -> ControllerRoute:
    """The endpoint a controller with config ``controller`` uses for the broker registered as ``registration``."""
    name = controller.controller_to_broker_listener_name
    for e in registered_endpoints(registration):
        if e.listener_name == name:
            return ControllerRoute(
                broker_id,
                name,
                e,
                controller.controller_to_broker_security_protocol,
                controller.control_plane_listener_name is not None,
            )
    raise BrokerEndPointNotAvailableException(f"End point with listener name {name} not found for broker {broker_id}")
