"""The control plane has two sides (KIP-291; docs/kafka-reference.md §2 and §3).

Kafka 2.8, ``ControllerChannelManager.addNewBroker``: the controller picks the listener it uses for *every*
broker from its own config, ``config.controlPlaneListenerName.getOrElse(config.interBrokerListenerName)``,
then ``broker.node(thatName)`` (``BrokerEndPointNotAvailableException: End point with listener name X not
found for broker N`` when the broker registered no such endpoint). ``SocketServer`` gives a listener the
control plane's acceptor, processor and queue only on a broker whose own ``control.plane.listener.name``
names it (``KafkaConfig.dataPlaneListeners`` = its listeners less that one). The truth each test checks
against is read straight from the brokers' properties (Kafka's keys), not from the model's listener code.
"""

from itertools import product

import pytest

from kafka_lab.incident_stats import incident_summary
from kafka_lab.listeners import CLIENT_LISTENER, BrokerEndPointNotAvailableException, cluster_broker
from kafka_lab.sim import Cluster, unavailability_incident
from kafka_lab.sim.cluster import cluster_properties

TOPIC = "orders"


def _expected(props: dict, controller: int) -> dict:
    """Kafka's rule on the raw properties: broker -> (listener, plane) of the controller's requests."""
    ctl = props[controller]
    name = ctl.get("control.plane.listener.name") or ctl.get("inter.broker.listener.name") or "PLAINTEXT"
    return {b: (name, "control" if p.get("control.plane.listener.name") == name else "data") for b, p in props.items()}


def _routes_seen(res, since_ms: float = 0.0, until_ms: float = float("inf"), apis=("LeaderAndIsr",)) -> dict:
    """broker -> {(listener, plane)} of the controller's requests sent in [since_ms, until_ms)."""
    r = res.requests
    r = r[r["api"].isin(apis) & (r["sent_ms"] >= since_ms) & (r["sent_ms"] < until_ms)]
    return {int(b): {(x.listener, x.plane) for x in g.itertuples()} for b, g in r.groupby("broker_id")}


@pytest.mark.parametrize("controller", [1, 3])
@pytest.mark.parametrize("setting", list(product((False, True), repeat=3)))
def test_the_controllers_config_picks_the_listener_and_each_brokers_own_config_the_plane(setting, controller):
    """controller-listener-from-its-own-config. Every half-migrated cluster of three, with the controller on
    broker 1 or 3: each broker's LeaderAndIsr arrives on the listener the controller's properties name, and on
    the control plane only where that broker's properties name it too."""
    cp = dict(zip((1, 2, 3), setting))
    c = Cluster(3, seed=0, control_plane=cp, controller_id=controller)
    c.create_topic(TOPIC, assignment={0: [1, 2, 3]})
    c.controller.elect_leader((TOPIC, 0), 2, at_ms=1.0)
    res = c.run(20.0)
    props = {b: cluster_properties(b, control_plane=cp[b]) for b in (1, 2, 3)}
    assert _routes_seen(res) == {b: {route} for b, route in _expected(props, controller).items()}


def test_the_control_plane_on_broker_2_only_is_no_control_plane_when_the_controller_is_on_broker_1():
    """KIP-291 case 1.2 half-migrated the other way round: broker 2 (the busy new leader) names CONTROLLER, the
    controller's broker 1 does not. The controller still connects to broker 2's inter-broker listener, which
    its data plane serves behind the backlog: everything is as with no control plane at all."""
    load = {"producers": 200, "burst": 1, "rate_per_s": 20, "partitions": 20, "until_ms": 60}
    only_2 = unavailability_incident(control_plane={1: False, 2: True, 3: False}, **load)
    none = unavailability_incident(control_plane=False, **load)
    r = only_2.requests
    lai_2 = r[(r["api"] == "LeaderAndIsr") & (r["broker_id"] == 2)].iloc[0]
    assert (lai_2["listener"], lai_2["plane"]) == (only_2.cluster.brokers[1].config.inter_broker_listener_name, "data")
    assert lai_2["requestQueueTime"] > 10  # behind broker 2's backlog, as without the control plane
    assert not (r["plane"] == "control").any()  # broker 2's control plane never sees a request
    # and since clients keep their own listener whatever the control plane (below), every record fares the same
    assert only_2.ledger.equals(none.ledger) and only_2.unavailability.equals(none.unavailability)
    assert incident_summary(only_2) == incident_summary(none)


def test_after_a_controller_move_the_new_controllers_config_decides():
    """onControllerFailover builds the channels again: while broker 1 (no control.plane.listener.name) is the
    controller, brokers 2 and 3 get their requests on INTERNAL although they name CONTROLLER; once broker 1's
    restart moves the controller to broker 2 or 3, every broker gets them on CONTROLLER, broker 1 (which still
    does not name it) on its data plane."""
    cp = {1: False, 2: True, 3: True}
    c = Cluster(3, seed=1, control_plane=cp, controller_id=1)
    c.create_topic(TOPIC, assignment={0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]})
    c.controller.elect_leader((TOPIC, 1), 3, at_ms=1.0)
    c.restart_broker(1, at_ms=50.0, down_ms=100.0)
    res = c.run(400.0)
    history = c.controller.history
    assert history[0][1] == 1 and history[-1][1] in (2, 3)
    moved_at = history[-1][0]
    props = {b: cluster_properties(b, control_plane=cp[b]) for b in (1, 2, 3)}
    apis = ("LeaderAndIsr", "UpdateMetadata")
    before = _routes_seen(res, until_ms=50.0, apis=apis)
    assert before == {b: {_expected(props, 1)[b]} for b in (1, 2, 3)}
    assert (
        before[2] == before[3] == {(props[1].get("inter.broker.listener.name", "PLAINTEXT"), "data")}
    )  # their control planes idle: broker 1 decides
    after = _routes_seen(res, since_ms=moved_at, apis=apis)
    assert after == {b: {_expected(props, history[-1][1])[b]} for b in after} and set(after) == {1, 2, 3}
    assert after[1] == {("CONTROLLER", "data")} and after[2] == after[3] == {("CONTROLLER", "control")}
    assert res.requests["api"].isin(apis).sum() > 6  # a real comparison: requests on both sides of the move


def test_a_controller_whose_listener_a_broker_did_not_register_is_refused_with_kafkas_message():
    """Broker.node: a broker that did not register the controller's listener gets Kafka's exception and message,
    at the call that builds the cluster (every broker may become the controller), not deep inside a run."""
    with_name = cluster_properties(1, control_plane=True)
    round_1 = cluster_properties(2, control_plane=False)  # CONTROLLER published, not named
    before = dict(round_1)  # before round 1: no CONTROLLER endpoint at all
    for key in ("listeners", "listener.security.protocol.map"):
        before[key] = ",".join(x for x in before[key].split(",") if not x.startswith("CONTROLLER"))
    with pytest.raises(BrokerEndPointNotAvailableException) as e:
        Cluster({1: with_name, 2: before}, controller_id=2)  # broker 2 is the controller, 1 could become it
    assert str(e.value) == "End point with listener name CONTROLLER not found for broker 2"
    assert any("round 1" in note for note in e.value.__notes__)
    assert sorted(Cluster({1: with_name, 2: round_1}).brokers) == [1, 2]


@pytest.mark.parametrize("control_plane", [False, True, {1: True, 2: False, 3: False}, {1: False, 2: True, 3: True}])
def test_clients_use_their_own_listener_never_the_controllers(control_plane):
    """clients-on-their-own-listener. KIP-291's example broker: other brokers replicate over INTERNAL, clients
    come in on EXTERNAL, the controller (once named) on CONTROLLER. Whatever the control plane, the producers'
    and consumers' requests arrive on EXTERNAL, followers' fetches on INTERNAL, and CONTROLLER carries the
    controller's requests and nothing else, on every broker (it once carried the clients' Produce on brokers
    without the control plane: the first data-plane listener that was not the inter-broker one)."""
    c = Cluster(3, seed=2, control_plane=control_plane)
    c.create_topic(TOPIC, 6, 3)
    for i in range(3):
        c.producer(f"p{i}", topic=TOPIC, acks="all").open_loop(200.0)
    c.consumer("c1", topic=TOPIC)
    c.controller.elect_leader((TOPIC, 0), 2, at_ms=20.0)
    r = c.run(150.0).requests
    clients = r[r["client_id"].str.match(r"^(p\d|c1)$")]
    followers = r[r["client_id"].str.startswith("broker-") & (r["api"] == "Fetch")]
    assert len(clients) > 50 and set(clients["api"]) >= {"Produce", "Fetch", "Metadata"}
    assert set(clients["listener"]) == {CLIENT_LISTENER} and set(clients["plane"]) == {"data"}
    assert len(followers) > 10 and set(followers["listener"]) == {"INTERNAL"}
    on_controller = r[r["listener"] == "CONTROLLER"]
    assert set(on_controller["api"]) <= {"LeaderAndIsr", "UpdateMetadata", "StopReplica"}


def test_the_clients_listener_is_refused_as_a_control_plane_and_falls_back_to_the_inter_broker_listener():
    named = {b: cluster_broker(True, broker_id=b) for b in (1, 2)}
    with pytest.raises(ValueError, match="the clients' listener CONTROLLER is broker 1's control plane"):
        Cluster(named, client_listener="CONTROLLER")
    # a broker with one listener for clients and brokers (lab 03's PLAINTEXT and CONTROLLER): clients share it
    from kafka_lab.listeners import control_plane_broker

    two = Cluster({b: control_plane_broker(False, broker_id=b) for b in (1, 2)})
    assert {two.client_listener(b) for b in two.brokers.values()} == {"PLAINTEXT"}
    other = Cluster(2, client_listener="internal")  # a name as given, upper-cased as Kafka's listener names are
    assert other.client_listener(other.brokers[1]) == "INTERNAL"


@pytest.mark.parametrize("setting", list(product((False, True), repeat=2)))
def test_alter_isr_takes_the_listener_the_leaders_config_names_and_the_controllers_config_picks_the_plane(setting):
    """alter-isr-through-the-senders-listener. The other direction (2.8, ``MetadataCacheControllerNodeProvider``,
    used by ``AlterIsrManager``): a leader's AlterIsr goes to the controller's endpoint of the listener the
    *leader's* config names for the controller (control.plane.listener.name, else INTERNAL), served on the
    controller's broker's control plane only if that broker names it too."""
    leader_cp, controller_cp = setting
    cp = {1: controller_cp, 2: leader_cp, 3: False}
    c = Cluster(3, seed=0, control_plane=cp, controller_id=1, broker_overrides={"replica.lag.time.max.ms": 100})
    c.create_topic("t", assignment={0: [2, 1, 3]})  # broker 2 leads, broker 1 is the controller
    c.producer("p", topic="t", acks=1).open_loop(1000)
    c.brokers[3].fetchers.stop_fetching(("t", 0))
    r = c.run(400).requests
    alter = r[r["api"] == "AlterIsr"]
    props = {b: cluster_properties(b, control_plane=cp[b]) for b in (1, 2, 3)}
    name = _expected(props, 2)[1][0]  # the leader's choice of listener; its plane on the controller's broker
    plane = "control" if props[1].get("control.plane.listener.name") == name else "data"
    assert len(alter) >= 1 and set(alter["broker_id"]) == {1}
    assert set(zip(alter["listener"], alter["plane"])) == {(name, plane)}


@pytest.mark.parametrize("bad", [0, 4, True, "1", 1.5, None])
def test_the_incidents_controller_is_one_of_their_three_brokers(bad):
    with pytest.raises(ValueError, match=r"controller is the broker the controller runs on: 1, 2 or 3, got"):
        unavailability_incident(control_plane=False, controller=bad, producers=1, until_ms=5)


def test_server_startup_names_each_listeners_plane_control_plane_first():
    """SocketServer.startup (2.8): createControlPlaneAcceptorAndProcessor, then createDataPlaneAcceptorsAndProcessors,
    each logging 'Created control-plane acceptor and processor for endpoint : ListenerName(X)' / 'Created
    data-plane acceptor and processors for endpoint : ...'. The broker's own control.plane.listener.name decides:
    a CONTROLLER listener it does not name is one more data-plane acceptor."""
    from kafka_lab.logs.render import server_startup
    from kafka_lab.sim import Cluster

    c = Cluster(2, control_plane={1: True, 2: False})
    created = {
        b: [msg.split("Created ", 1)[1] for _lvl, _logger, msg in server_startup(c, b) if "Created " in msg]
        for b in (1, 2)
    }
    assert created[1] == [
        "control-plane acceptor and processor for endpoint : ListenerName(CONTROLLER)",
        "data-plane acceptor and processors for endpoint : ListenerName(INTERNAL)",
        "data-plane acceptor and processors for endpoint : ListenerName(EXTERNAL)",
    ]
    assert created[2] == [
        f"data-plane acceptor and processors for endpoint : ListenerName({name})"
        for name in ("CONTROLLER", "INTERNAL", "EXTERNAL")
    ]
