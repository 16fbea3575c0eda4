"""Properties of a KRaft node's listener resolution (docs/kafka-reference.md §8.3): valid nodes resolve, the
voter rules split the nodes by role, the voter set prints every id, the 3.1 port rule, and the 2.8 path."""

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_lab.listeners import BrokerListeners, ConfigException, EndPoint, KRaftNodeListeners, format_endpoint, resolve

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.text(string.ascii_uppercase + "_", min_size=1, max_size=8).filter(lambda n: n != "CONTROLLER")
hostnames = st.from_regex(r"[a-z][a-z0-9-]{0,8}(\.[a-z0-9]{1,5}){0,2}", fullmatch=True)
ipv4 = st.tuples(*[st.integers(1, 254)] * 4).map(lambda t: ".".join(map(str, t)))
ipv6 = st.sampled_from(["::1", "2001:db8::8", "fe80::1"])
ports = st.integers(1, 65535)
protocols = st.sampled_from(["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"])
voter_ids = st.lists(st.integers(0, 40), min_size=1, max_size=6)


@st.composite
def broker_nodes(draw):
    """A valid broker-only node: data listeners, a CONTROLLER listener it does not bind, voters without it."""
    n = draw(st.integers(1, 3))
    lnames = draw(st.lists(names, min_size=n, max_size=n, unique=True))
    lports = draw(st.lists(ports, min_size=n, max_size=n, unique=True))
    protos = {nm: draw(protocols) for nm in lnames}
    bound = [EndPoint(nm, draw(st.one_of(st.none(), hostnames, ipv4)), p, protos[nm]) for nm, p in zip(lnames, lports)]
    node = draw(st.integers(0, 40))
    ids = [i for i in draw(voter_ids) if i != node] or [node + 1]
    pmap = {**protos, "CONTROLLER": draw(protocols)}
    props = {
        "process.roles": "broker",
        "node.id": str(node),
        "listeners": ",".join(format_endpoint(e) for e in bound),
        "listener.security.protocol.map": ",".join(f"{k}:{v}" for k, v in pmap.items()),
        "inter.broker.listener.name": draw(st.sampled_from(lnames)),
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": ",".join(f"{i}@c{i}:9093" for i in ids),
    }
    return props, bound, node, ids, pmap


@SETTINGS
@given(broker_nodes())
def test_valid_broker_nodes_resolve(case):
    props, bound, node, ids, pmap = case
    b = resolve(props)
    assert isinstance(b, KRaftNodeListeners)
    assert list(b.listeners) == bound and list(b.advertised_broker_listeners) == bound
    assert b.node_id == node and b.advertised_controller_listeners == () and not b.is_voter
    assert b.controller_listener_name == "CONTROLLER" and b.controller_security_protocol == pmap["CONTROLLER"]
    assert b.inter_broker_listener_name == props["inter.broker.listener.name"]
    assert set(b.voters) == set(ids) and b.voters[ids[0]] == (f"c{ids[0]}", 9093)


@SETTINGS
@given(st.sampled_from(["broker", "controller", "broker,controller"]), st.integers(0, 40), voter_ids)
def test_a_node_is_a_voter_exactly_when_it_has_the_controller_role(roles, node, ids):
    props = {
        "process.roles": roles,
        "node.id": str(node),
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": ",".join(f"{i}@c{i}:9093" for i in ids),
    }
    if roles == "controller":
        props["listeners"] = "CONTROLLER://:9093"
    elif roles == "broker,controller":
        props["listeners"] = "PLAINTEXT://:9092,CONTROLLER://:9093"
    controller = "controller" in roles
    try:
        n = resolve(props)
    except ConfigException as e:
        assert (node in ids) != controller, str(e)  # refused only for the role's voter rule
        role_words = "contains the 'controller' role" if controller else "contains just the 'broker' role"
        assert role_words in str(e) and f"the node id {node} " in str(e)
    else:
        assert (node in ids) == controller and n.is_voter == controller


@SETTINGS
@given(st.integers(0, 40), voter_ids)
def test_the_voter_set_in_a_message_names_every_voter_once(node, ids):
    ids = [*ids, node]  # the broker is among them
    props = {
        "process.roles": "broker",
        "node.id": str(node),
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": ",".join(f"{i}@h:1" for i in ids),
    }
    try:
        resolve(props)
    except ConfigException as e:
        printed = str(e).rsplit("=Set(", 1)[1].rstrip(")")
        listed = [int(x) for x in printed.split(", ")]
        assert sorted(listed) == sorted(set(ids))
        # a HashMap whose ids are all below its table size iterates them in ascending order
        table = 1 << max(0, (len(ids) - 1).bit_length())
        if len(set(ids)) <= int(table * 0.75) and all(i < table for i in ids):
            assert listed == sorted(listed)
    else:
        raise AssertionError("a broker among the voters was accepted")


def _kind(host):
    """What the strategies made: IPv6 has ':', a host name starts with a letter, an IPv4 address with a digit."""
    if host is None:
        return "name"
    if ":" in host:
        return "v6"
    return "name" if host[0].isalpha() else "v4"


@SETTINGS
@given(st.tuples(*[st.one_of(st.none(), hostnames, ipv4, ipv6)] * 2), ports)
def test_two_listeners_share_a_port_only_as_one_ipv4_and_one_ipv6(hosts, port):
    eps = [EndPoint(nm, h, port, "PLAINTEXT") for nm, h in zip(("A", "B"), hosts)]
    props = {
        "process.roles": "broker",
        "node.id": "4",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": "1@c:9093",
        "listeners": ",".join(format_endpoint(e) for e in eps),
        "listener.security.protocol.map": "A:PLAINTEXT,B:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "A",
    }
    allowed = sorted(_kind(h) for h in hosts) == ["v4", "v6"]
    try:
        resolve(props)
    except ConfigException as e:
        assert not allowed, str(e)
        assert e.config_key == "listeners" and "port" in str(e)
    else:
        assert allowed


@SETTINGS
@given(st.dictionaries(st.sampled_from(["listeners", "advertised.listeners", "broker.rack"]), st.just("X")))
def test_without_process_roles_the_28_rules_apply(props):
    try:
        assert isinstance(resolve(props), BrokerListeners)
    except ConfigException as e:
        assert "process.roles" not in str(e) and "node.id" not in str(e)
