"""The KIP-291 page's broker configs, and the presets lab 01 offers.

KIP-291 ("Proposed change") shows broker1 before and after the change::

    listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:SSL
    advertised.listeners=INTERNAL://broker1.example.com:9092,EXTERNAL://host1.example.com:9093
    listeners=INTERNAL://192.1.1.8:9092,EXTERNAL://10.1.1.5:9093

    listener.security.protocol.map=CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,EXTERNAL:SSL
    advertised.listeners=CONTROLLER://broker1.example.com:9091,INTERNAL://broker1.example.com:9092,EXTERNAL://host1.example.com:9093
    listeners=CONTROLLER://192.1.1.8:9091,INTERNAL://192.1.1.8:9092,EXTERNAL://10.1.1.5:9093

The page then says the controller "determines inter-broker-listener-name to be INTERNAL", but its
config never sets ``inter.broker.listener.name``: as printed, Kafka would take the inter-broker
listener from ``security.inter.broker.protocol`` (``PLAINTEXT``) and refuse to start, because no
listener is called PLAINTEXT. :func:`kip291_broker` therefore adds ``inter.broker.listener.name=INTERNAL``
(and, for the last stage, ``control.plane.listener.name=CONTROLLER``); :data:`KIP291_AS_PRINTED` keeps
the page's lines verbatim.

Brokers 2 and 3 of the lab's cluster follow broker1's pattern (``broker2.example.com``,
``192.1.1.9``, ...): the KIP shows broker1 only.

This module is the one home of these configs: the simulation's scenarios and experiments build
their brokers from :func:`kip291_broker`, :func:`control_plane_broker` (lab 03's one broker) and
:func:`cluster_broker` (the clusters of labs 04-08), with overrides.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "CLIENT_LISTENER",
    "KIP291_AS_PRINTED",
    "KIP291_REGISTRATION_AS_PRINTED",
    "STAGES",
    "cluster_broker",
    "control_plane_broker",
    "kip291_broker",
    "kip291_properties_text",
    "PRESETS",
]

#: broker1 "before", exactly the three lines the KIP prints
KIP291_AS_PRINTED = {
    "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SSL",
    "advertised.listeners": "INTERNAL://broker1.example.com:9092,EXTERNAL://host1.example.com:9093",
    "listeners": "INTERNAL://192.1.1.8:9092,EXTERNAL://10.1.1.5:9093",
}

#: broker1's ``/brokers/ids/1`` JSON as the KIP prints it ("How does it work today?"): version 4, keys in
#: the page's order, ``host`` hand-written as ``host1.example.com`` (Kafka would write ``broker1.example.com``)
KIP291_REGISTRATION_AS_PRINTED = {
    "listener_security_protocol_map": {"INTERNAL": "PLAINTEXT", "EXTERNAL": "SSL"},
    "endpoints": ["INTERNAL://broker1.example.com:9092", "EXTERNAL://host1.example.com:9093"],
    "host": "host1.example.com",
    "port": 9092,
    "jmx_port": -1,
    "timestamp": "1532467569343",
    "version": 4,
}

#: the migration's three configurations: before, after round 1 (endpoint added), after round 2 (name set)
STAGES = ("before", "round 1", "round 2")


def _with(props: dict, overrides: dict) -> dict:
    """``props`` updated with ``overrides``; an override of ``None`` removes the key."""
    props.update(overrides)
    return {k: v for k, v in props.items() if v is not None}


def kip291_broker(broker_id: int = 1, stage: str = "round 2", **overrides) -> dict[str, str]:
    """Broker ``broker_id``'s properties at a stage of the KIP-291 migration (broker 1 = the KIP's broker1).

    ``overrides`` (Kafka's keys, e.g. ``**{"num.io.threads": 4}``) are applied last; ``None`` removes a key.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, not {stage!r}")
    if not 1 <= broker_id <= 200:
        raise ValueError(f"broker_id must be between 1 and 200, not {broker_id}")
    internal, external = f"192.1.1.{7 + broker_id}", f"10.1.1.{4 + broker_id}"
    name, outside = f"broker{broker_id}.example.com", f"host{broker_id}.example.com"
    props = {"broker.id": str(broker_id)}
    if stage == "before":
        props["listener.security.protocol.map"] = "INTERNAL:PLAINTEXT,EXTERNAL:SSL"
        props["advertised.listeners"] = f"INTERNAL://{name}:9092,EXTERNAL://{outside}:9093"
        props["listeners"] = f"INTERNAL://{internal}:9092,EXTERNAL://{external}:9093"
    else:
        props["listener.security.protocol.map"] = "CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,EXTERNAL:SSL"
        props["advertised.listeners"] = f"CONTROLLER://{name}:9091,INTERNAL://{name}:9092,EXTERNAL://{outside}:9093"
        props["listeners"] = f"CONTROLLER://{internal}:9091,INTERNAL://{internal}:9092,EXTERNAL://{external}:9093"
    props["inter.broker.listener.name"] = "INTERNAL"
    if stage == "round 2":
        props["control.plane.listener.name"] = "CONTROLLER"
    return _with(props, overrides)


def control_plane_broker(control_plane: bool = False, *, broker_id: int = 1, **overrides) -> dict:
    """The smallest broker with a choice of control plane: ``PLAINTEXT`` for clients and other brokers (and,
    without KIP-291, the controller), and a ``CONTROLLER`` listener that becomes the control plane with
    ``control_plane=True`` (``control.plane.listener.name=CONTROLLER``). Without it, CONTROLLER is bound but
    unused, like round 1 of the KIP's migration. ``overrides`` as in :func:`kip291_broker`.
    """
    props = {
        "broker.id": str(broker_id),
        "listeners": "PLAINTEXT://:9092,CONTROLLER://:9091",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    }
    if control_plane:
        props["control.plane.listener.name"] = "CONTROLLER"
    return _with(props, overrides)


#: the listener clients use in the lab's clusters: KIP-291's example broker takes clients on EXTERNAL, other
#: brokers on INTERNAL and (with control.plane.listener.name) the controller on CONTROLLER
CLIENT_LISTENER = "EXTERNAL"


def cluster_broker(control_plane: bool = False, *, broker_id: int = 1, **overrides) -> dict:
    """A broker of the lab's clusters (labs 04-08), with KIP-291's three listeners and their roles: ``INTERNAL``
    for other brokers (``inter.broker.listener.name``; without KIP-291 also for the controller), ``EXTERNAL``
    for clients (:data:`CLIENT_LISTENER`), and ``CONTROLLER``, bound and advertised on every broker as after
    round 1 of the KIP's migration, which ``control_plane=True`` names (round 2). Unlike the KIP's broker all
    three speak PLAINTEXT (the model has no TLS cost to show) and bind every interface (empty host), on the
    KIP's ports. ``num.network.threads`` processors serve each data-plane listener: 9 without the control
    plane (CONTROLLER's 3 idle unless a controller that names it connects), 6 and the control plane's one
    with it. ``overrides`` as in :func:`kip291_broker`.
    """
    props = {
        "broker.id": str(broker_id),
        "listeners": "CONTROLLER://:9091,INTERNAL://:9092,EXTERNAL://:9093",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
    }
    if control_plane:
        props["control.plane.listener.name"] = "CONTROLLER"
    return _with(props, overrides)


def kip291_properties_text(props: dict[str, str]) -> str:
    """``key=value`` lines, as in a server.properties file."""
    if not isinstance(props, Mapping):
        raise TypeError(f"props is a mapping of Kafka property names to values, got {type(props).__name__}")
    return "".join(f"{k}={v}\n" for k, v in props.items())


def _text(*lines: str) -> str:
    return "\n".join(lines) + "\n"


#: lab 01's preset configurations: label -> server.properties text
PRESETS: dict[str, str] = {
    "KIP-291 broker1, after (dedicated controller listener)": kip291_properties_text(kip291_broker(1, "round 2")),
    "KIP-291 broker1, before": kip291_properties_text(kip291_broker(1, "before")),
    "KIP-291 broker1, after round 1 (endpoint added, name not set)": kip291_properties_text(
        kip291_broker(1, "round 1")
    ),
    "KIP-291 broker1 as printed (no inter.broker.listener.name)": "broker.id=1\n"
    + kip291_properties_text(KIP291_AS_PRINTED),
    "Kafka 2.8 defaults (nothing set)": _text(
        "broker.id=1", "# listeners, advertised.listeners, host.name, port: all unset"
    ),
    "legacy host.name / advertised.host.name": _text(
        "broker.id=1", "host.name=192.1.1.8", "port=9092", "advertised.host.name=broker1.example.com"
    ),
    "all interfaces, nothing advertised (broken)": _text("broker.id=1", "listeners=PLAINTEXT://0.0.0.0:9092"),
    "IPv6 listeners": _text(
        "broker.id=1",
        "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:SSL",
        "listeners=INTERNAL://[fe80::1%eth0]:9092,EXTERNAL://[::]:9093",
        "advertised.listeners=INTERNAL://[fe80::1%eth0]:9092,EXTERNAL://[2001:db8::8]:9093",
        "inter.broker.listener.name=INTERNAL",
    ),
}
