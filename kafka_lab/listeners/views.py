"""Who uses which listener: the resolved config as one table, for a broker whose cluster shares its config.

For every listener name a broker binds or publishes:

* **binds** -- the ``listeners`` entry: the socket the broker opens (see
  :func:`~kafka_lab.listeners.resolve.bind_description`: an empty host binds every interface, as 0.0.0.0 does).
* **publishes** -- the ``advertised.listeners`` entry, written to ``/brokers/ids/<id>``: the only address
  anyone else learns. A listener that is bound but not published can only be reached by someone who
  already knows its address.
* **used by** -- *other brokers* fetch (replicate) from the inter-broker listener's published endpoint;
  *the controller* sends LeaderAndIsr / UpdateMetadata / StopReplica to the ``control.plane.listener.name``
  endpoint when set, else to the inter-broker one (assuming the controller runs this same config);
  *clients* connect to whichever published listener they bootstrap on, and are answered with the
  endpoints of that same listener.
* **plane** -- the dedicated control plane (KIP-291: 1 network thread, a queue of 20, 1 handler) or
  the shared data plane (``num.network.threads`` per listener, ``queued.max.requests`` = 500,
  ``num.io.threads`` = 8 handlers).
"""

from __future__ import annotations

import pandas as pd

from .resolve import BrokerListeners, bind_description

__all__ = ["listener_table", "users_of"]


def users_of(broker: BrokerListeners, name: str) -> list[str]:
    """Who connects to listener ``name`` of this broker (see the module docstring)."""
    users = []
    if broker.advertised(name) is None:
        return ["nobody can discover it (not published)"] if broker.listener(name) is not None else []
    if name == broker.controller_to_broker_listener_name:
        users.append("controller")
    if name == broker.inter_broker_listener_name:
        users.append("other brokers")
    if name != broker.control_plane_listener_name and name != broker.inter_broker_listener_name:
        users.append("clients")
    elif name == broker.inter_broker_listener_name and not any(
        e.listener_name not in (broker.control_plane_listener_name, broker.inter_broker_listener_name)
        for e in broker.advertised_listeners
    ):
        users.append("clients")  # the only published data-plane listener: clients share it
    return users


def listener_table(broker: BrokerListeners) -> pd.DataFrame:
    """One row per listener name: protocol, what the broker binds, what it publishes, plane, who uses it."""
    names = list(
        dict.fromkeys(
            [e.listener_name for e in broker.listeners] + [e.listener_name for e in broker.advertised_listeners]
        )
    )
    rows = []
    for name in names:
        bound, published = broker.listener(name), broker.advertised(name)
        rows.append(
            {
                "listener": name,
                "security protocol": broker.listener_security_protocol_map.get(name),
                "binds (listeners)": bound.connection_string if bound else None,
                "which means": bind_description(bound) if bound else None,
                "publishes (advertised.listeners)": published.connection_string if published else None,
                "plane": broker.plane(name) if bound else None,
                "used by": ", ".join(users_of(broker, name)),
            }
        )
    return pd.DataFrame(rows)
