"""KIP-291's migration: two rolling restarts of the whole cluster, and what the controller uses meanwhile.

The KIP's plan ("Compatibility, Deprecation, and Migration Plan"):

* **Round 1** -- on every broker, add the controller endpoint to ``listeners`` (and to
  ``advertised.listeners`` when that is set explicitly), with its protocol in
  ``listener.security.protocol.map``, but do *not* set ``control.plane.listener.name``. The new
  listener is just one more data-plane listener, and "controller to brokers communication should
  still behave in the same way that uses the inter-broker-listener-name".
* **Round 2** -- set ``control.plane.listener.name=CONTROLLER`` on every broker. "During rolling
  upgrade of the 2nd round, controller to brokers traffic will start using" it.

Who decides? The *controller's* own config (``ControllerChannelManager.addNewBroker``), applied to
every broker's registration. So mid-round-2 the cluster is mixed: while the controller still runs the
round-1 config, it reaches everyone (upgraded brokers too) on the inter-broker listener; once the
controller is a broker with the round-2 config, it reaches everyone on CONTROLLER -- including
brokers not yet restarted, which serve that listener on their *data* plane until they are. That only
works because round 1 published a CONTROLLER endpoint on every broker: :func:`migration_states` with
``one_round=True`` shows the failure of skipping it.

Model assumption (not Kafka's rule): a restart of the controller's broker moves the controller to the
lowest-numbered other broker (in Kafka, whichever broker's ZooKeeper write lands first).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .examples import kip291_broker
from .registration import (
    KIP291_TIMESTAMP_MS,
    BrokerEndPointNotAvailableException,
    ControllerRoute,
    broker_registration,
    controller_endpoint,
)
from .resolve import resolve

__all__ = ["ClusterState", "migration_states", "controller_routes", "migration_steps", "migration_summary"]


#: how the tables name each stage's config
CONFIG_LABELS = {"before": "before", "round 1": "+CONTROLLER endpoint", "round 2": "+control.plane.listener.name"}


@dataclass(frozen=True)
class ClusterState:
    """The cluster after one step of the migration."""

    step: int
    round: int  #: 0 = before, 1, 2 (the one-round shortcut is round 1)
    action: str
    controller: int  #: broker id of the active controller
    stages: dict  #: broker id -> "before" | "round 1" | "round 2"
    props: dict  #: broker id -> properties
    restarted: int | None = None  #: the broker this step restarted


def migration_states(broker_ids=(1, 2, 3), controller: int = 1, one_round: bool = False) -> list[ClusterState]:
    """Every state of the rolling migration, restarting brokers in ``broker_ids`` order each round.

    ``one_round=True`` is the shortcut the KIP warns against: each broker goes straight to the final
    config (CONTROLLER endpoint *and* ``control.plane.listener.name``) in a single rolling restart.
    """
    ids = list(broker_ids)
    if len(set(ids)) != len(ids) or len(ids) < 2:
        raise ValueError(f"need at least two distinct broker ids, not {broker_ids}")
    if controller not in ids:
        raise ValueError(f"the controller ({controller}) must be one of the brokers {ids}")
    stages = dict.fromkeys(ids, "before")
    states = [_state(0, 0, "before: every broker runs its original config", controller, stages, None)]
    rounds = [(1, "round 2")] if one_round else [(1, "round 1"), (2, "round 2")]
    for rnd, stage in rounds:
        for b in ids:
            stages = {**stages, b: stage}
            what = (
                "adds the CONTROLLER endpoint"
                if stage == "round 1"
                else "sets control.plane.listener.name=CONTROLLER"
                if not one_round
                else "adds the CONTROLLER endpoint and sets control.plane.listener.name"
            )
            action = f"{'one round' if one_round else f'round {rnd}'}: broker {b} restarts and {what}"
            if b == controller:
                new = min(x for x in ids if x != b)
                action += f"; the controller moves from broker {b} to broker {new}"
                controller = new
            states.append(_state(len(states), rnd, action, controller, stages, b))
    return states


def _state(step, rnd, action, controller, stages, restarted) -> ClusterState:
    return ClusterState(
        step, rnd, action, controller, dict(stages), {b: kip291_broker(b, s) for b, s in stages.items()}, restarted
    )


def controller_routes(state: ClusterState) -> dict[int, ControllerRoute | BrokerEndPointNotAvailableException]:
    """For each broker, how the controller reaches it (or the exception the controller gets)."""
    ctl = resolve(state.props[state.controller])
    routes = {}
    for b, props in state.props.items():
        reg = broker_registration(resolve(props), timestamp_ms=KIP291_TIMESTAMP_MS)
        try:
            routes[b] = controller_endpoint(ctl, reg, b)
        except BrokerEndPointNotAvailableException as exc:
            routes[b] = exc
    return routes


def migration_steps(broker_ids=(1, 2, 3), controller: int = 1, one_round: bool = False) -> pd.DataFrame:
    """One row per (step, broker): its config, and the endpoint the controller uses to reach it.

    ``served by`` says whether the broker handles those controller requests on its dedicated
    control plane or queues them with client traffic on its data plane.
    """
    rows = []
    for st in migration_states(broker_ids, controller, one_round):
        routes = controller_routes(st)
        for b, props in st.props.items():
            bl = resolve(props)
            r = routes[b]
            failed = isinstance(r, BrokerEndPointNotAvailableException)
            rows.append(
                {
                    "step": st.step,
                    "round": st.round,
                    "action": st.action,
                    "controller": st.controller,
                    "broker": b,
                    "config": CONFIG_LABELS[st.stages[b]],
                    "listeners": props["listeners"],
                    "advertised.listeners": props["advertised.listeners"],
                    "control.plane.listener.name": props.get("control.plane.listener.name"),
                    "controller connects to": f"BrokerEndPointNotAvailableException: {r}"
                    if failed
                    else r.connection_string,
                    "served by": None if failed else f"{bl.plane(r.listener_name)} plane",
                }
            )
    return pd.DataFrame(rows)


def migration_summary(broker_ids=(1, 2, 3), controller: int = 1, one_round: bool = False) -> pd.DataFrame:
    """:func:`migration_steps` with one row per step: who restarted, the controller after the step, and per
    broker ``[its config] the listener the controller uses, the plane that serves it``.

    Configs are abbreviated: ``before``, ``+endpoint`` (round 1: CONTROLLER added to the listeners),
    ``+name`` (round 2: control.plane.listener.name set).
    """
    short = {
        CONFIG_LABELS["before"]: "before",
        CONFIG_LABELS["round 1"]: "+endpoint",
        CONFIG_LABELS["round 2"]: "+name",
    }
    df = migration_steps(broker_ids, controller, one_round)
    states = migration_states(broker_ids, controller, one_round)
    rows = []
    for st, (step, g) in zip(states, df.groupby("step", sort=True)):
        rnd = "one round" if one_round else f"round {st.round}"
        restarted = "-" if st.restarted is None else f"{rnd}, broker {st.restarted}"
        row = {"step": step, "restarted": restarted, "controller": st.controller}
        for _, r in g.iterrows():
            target = r["controller connects to"]
            if r["served by"] is None:
                cell = "unreachable: " + target.split(":", 1)[0]
            else:
                cell = f"{target.split('://', 1)[0]}, {r['served by']}"
            row[f"broker {r['broker']}"] = f"[{short[r['config']]}] {cell}"
        rows.append(row)
    return pd.DataFrame(rows).set_index("step")
