"""Listener resolution of a KRaft node against Kafka 4.0 (docs/kafka-reference.md §8.3).

The independent truths: Kafka's own KafkaConfigTest cases (trunk 1eb7644, the 4.0 development; each test
names its Kafka test), the messages written out by hand from KafkaConfig.scala / QuorumConfig.java /
CoreUtils.scala / ConfigDef.java, PR #18414's test (process.roles and node.id required, 4.0), and the Java
behaviour Kafka's messages depend on, as OpenJDK 17 printed it (java.util.HashMap's iteration order,
String.hashCode, String.split, InetSocketAddress, Integer.parseInt).
"""

import warnings

import pytest

from kafka_lab.listeners import (
    BrokerListeners,
    ConfigException,
    KafkaConfigWarning,
    KRaftNodeListeners,
    resolve,
    resolve_kraft,
)
from kafka_lab.listeners.errors import UnknownConfigWarning
from kafka_lab.listeners.kraft import java_hashmap_order, java_string_hash

BROKER = {  # a broker-only node of a three-controller quorum
    "process.roles": "broker",
    "node.id": "4",
    "controller.listener.names": "CONTROLLER",
    "controller.quorum.voters": "1@c1:9093,2@c2:9093,3@c3:9093",
}
CONTROLLER = {
    "process.roles": "controller",
    "node.id": "1",
    "listeners": "CONTROLLER://c1:9093",
    "controller.listener.names": "CONTROLLER",
    "controller.quorum.voters": "1@c1:9093,2@c2:9093,3@c3:9093",
}
COMBINED = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
    "controller.listener.names": "CONTROLLER",
    "controller.quorum.voters": "1@localhost:9093",
}


def rejected(props):
    with pytest.raises(ConfigException) as info:
        resolve(props)
    return info.value


def strs(endpoints):
    return [e.connection_string for e in endpoints]


# ---------------------------------------------------------------------------- the mode and the result


def test_process_roles_chooses_kraft_and_the_28_rules_stay():
    assert isinstance(resolve(BROKER), KRaftNodeListeners)
    assert isinstance(resolve({}), BrokerListeners)
    assert isinstance(resolve({"process.roles": None}), BrokerListeners)  # None is "not set", as everywhere
    assert isinstance(
        resolve(
            "process.roles=broker\nnode.id=4\ncontroller.listener.names=CONTROLLER\n"
            "controller.quorum.bootstrap.servers=c1:9093\n"
        ),
        KRaftNodeListeners,
    )


def test_a_broker_reaches_the_controllers_over_the_first_controller_listener():
    b = resolve(BROKER)
    assert b.process_roles == ("broker",) and b.is_broker and not b.is_controller and not b.is_voter
    assert b.node_id == 4
    assert strs(b.listeners) == ["PLAINTEXT://:9092"]  # SocketServerConfigs.LISTENERS_DEFAULT
    assert strs(b.advertised_broker_listeners) == ["PLAINTEXT://:9092"]
    assert b.advertised_controller_listeners == ()
    assert b.controller_listener_name == "CONTROLLER" and b.controller_security_protocol == "PLAINTEXT"
    assert b.listener_security_protocol_map["CONTROLLER"] == "PLAINTEXT"  # KRaft's default mapping
    assert b.voters == {1: ("c1", 9093), 2: ("c2", 9093), 3: ("c3", 9093)}
    assert b.inter_broker_listener_name == "PLAINTEXT" and b.inter_broker_security_protocol == "PLAINTEXT"
    assert b.control_plane_listener is None and strs(b.data_plane_listeners) == ["PLAINTEXT://:9092"]


def test_a_controller_advertises_its_controller_listener_and_is_a_voter():
    c = resolve(CONTROLLER)
    assert c.is_controller and not c.is_broker and c.is_voter
    assert strs(c.advertised_controller_listeners) == ["CONTROLLER://c1:9093"]
    assert c.advertised_broker_listeners == () and c.data_plane_listeners == ()
    assert c.inter_broker_listener_name is None


def test_combined_node():
    n = resolve(COMBINED)
    assert n.process_roles == ("broker", "controller")
    assert strs(n.advertised_broker_listeners) == ["PLAINTEXT://:9092"]
    assert strs(n.advertised_controller_listeners) == ["CONTROLLER://:9093"]
    assert strs(n.data_plane_listeners) == ["PLAINTEXT://:9092"]


def test_bootstrap_servers_stand_in_for_voters():
    b = resolve({**BROKER, "controller.quorum.voters": None, "controller.quorum.bootstrap.servers": "c1:9093, c2:9093"})
    assert b.voters == {} and b.bootstrap_servers == (("c1", 9093), ("c2", 9093))


def test_resolve_kraft_says_what_it_accepts():
    with pytest.raises(TypeError, match="a mapping of Kafka property names"):
        resolve_kraft(["process.roles=broker"])
    with pytest.raises(TypeError, match="property names are strings"):
        resolve_kraft({1: "x"})
    with pytest.raises(TypeError, match="listeners must be a string"):
        resolve({**BROKER, "listeners": 9092})


# ------------------------------------------------------------------------ Kafka's KafkaConfigTest cases


def test_control_plane_listener_name_not_allowed_with_kraft():  # testControlPlaneListenerNameNotAllowedWithKRaft
    props = {
        "process.roles": "broker,controller",
        "listeners": "PLAINTEXT://localhost:9092,SSL://localhost:9093",
        "controller.listener.names": "SSL",
        "node.id": "2",
        "controller.quorum.voters": "2@localhost:9093",
        "control.plane.listener.name": "SSL",
    }
    exc = rejected(props)
    assert str(exc) == "requirement failed: control.plane.listener.name is not supported in KRaft mode."
    assert exc.kafka_exception == "IllegalArgumentException" and exc.config_key == "control.plane.listener.name"
    # the note says what 4.0 itself does with the removed setting
    (note,) = exc.__notes__
    assert "4.0 removed the setting (KAFKA-18353)" in note and "ignore it without a word" in note
    del props["control.plane.listener.name"]
    resolve(props)


def test_control_plane_listener_missing_from_the_map_is_reported_as_39_does():
    exc = rejected({**COMBINED, "control.plane.listener.name": "cp"})
    assert (
        str(exc)
        == "Listener with CP defined in control.plane.listener.name not found in listener.security.protocol.map."
    )
    assert exc.__notes__


def test_controller_listener_defined_for_kraft_controller():  # testControllerListenerDefinedForKRaftController
    props = {
        "process.roles": "controller",
        "listeners": "SSL://localhost:9093",
        "node.id": "2",
        "controller.quorum.voters": "2@localhost:9093",
    }
    assert str(rejected(props)) == (
        "requirement failed: The listeners config must only contain KRaft controller listeners from "
        "controller.listener.names when process.roles=controller"
    )
    props["controller.listener.names"] = "SSL"
    resolve(props)
    props.update(
        {
            "listener.security.protocol.map": "CONTROLLER:SSL",
            "listeners": "CONTROLLER://localhost:9093",
            "controller.listener.names": "CONTROLLER",
        }
    )
    assert resolve(props).advertised_controller_listeners[0].security_protocol == "SSL"


def test_controller_listener_defined_for_kraft_broker():  # testControllerListenerDefinedForKRaftBroker
    props = {"process.roles": "broker", "node.id": "1", "controller.quorum.voters": "2@localhost:9093"}
    assert str(rejected(props)) == (
        "requirement failed: controller.listener.names must contain at least one value when running KRaft with "
        "just the broker role"
    )
    props["controller.listener.names"] = "SSL"
    resolve(props)
    props.update(
        {
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
            "controller.listener.names": "CONTROLLER",
        }
    )
    assert resolve(props).controller_security_protocol == "SSL"


@pytest.mark.parametrize(
    "listeners, names, advertised, expected",
    [
        # testEffectAdvertiseControllerListenerForControllerWithAdvertisement
        (
            "CONTROLLER://localhost:9093",
            "CONTROLLER",
            "CONTROLLER://lb1.example.com:9000",
            ["CONTROLLER://lb1.example.com:9000"],
        ),
        # ...WithoutAdvertisement
        ("CONTROLLER://localhost:9093", "CONTROLLER", None, ["CONTROLLER://localhost:9093"]),
        # ...WithMixedAdvertisement
        (
            "CONTROLLER://localhost:9093,CONTROLLER_NEW://localhost:9094",
            "CONTROLLER,CONTROLLER_NEW",
            "CONTROLLER://lb1.example.com:9000",
            ["CONTROLLER://lb1.example.com:9000", "CONTROLLER_NEW://localhost:9094"],
        ),
    ],
)
def test_effective_advertised_controller_listeners(listeners, names, advertised, expected):
    props = {
        "process.roles": "controller",
        "listeners": listeners,
        "node.id": "2",
        "controller.quorum.voters": "2@localhost:9093",
        "controller.listener.names": names,
        "advertised.listeners": advertised,
    }
    c = resolve(props)
    assert strs(c.advertised_controller_listeners) == expected
    assert all(e.security_protocol == "PLAINTEXT" for e in c.advertised_controller_listeners)


def test_voter_ports_need_not_match_the_listeners():
    # testPortInQuorumVotersNotRequiredToMatchFirstControllerListenerPortForThisKRaftController
    props = {
        "process.roles": "controller,broker",
        "listeners": "PLAINTEXT://localhost:9092,SSL://localhost:9093,SASL_SSL://localhost:9094",
        "node.id": "2",
        "controller.quorum.voters": "2@localhost:9093,3@anotherhost:9094",
        "controller.listener.names": "SSL,SASL_SSL",
    }
    resolve(props)
    for listeners in (
        "PLAINTEXT://localhost:9092,SSL://localhost:5555,SASL_SSL://localhost:9094",
        "PLAINTEXT://localhost:9092,SSL://localhost:9093,SASL_SSL://localhost:5555",
    ):
        resolve({**props, "listeners": listeners})
    for voters in ("2@localhost:5555,3@anotherhost:9094", "2@localhost:9093,3@anotherhost:5555"):
        resolve({**props, "controller.quorum.voters": voters})


def test_separate_controller_listener_for_kraft_broker_controller():
    # testSeparateControllerListenerDefinedForKRaftBrokerController
    props = {
        "process.roles": "broker,controller",
        "listeners": "SSL://localhost:9093",
        "controller.listener.names": "SSL",
        "node.id": "2",
        "controller.quorum.voters": "2@localhost:9093",
    }
    assert str(rejected(props)) == (
        "requirement failed: There must be at least one broker advertised listener. Perhaps all listeners appear in "
        "controller.listener.names?"
    )
    resolve({**props, "listeners": "PLAINTEXT://localhost:9092,SSL://localhost:9093"})
    resolve(
        {
            **props,
            "listeners": "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
            "controller.listener.names": "CONTROLLER",
        }
    )


NOT_IN_MAP = (
    "Controller listener with name CONTROLLER defined in controller.listener.names not found in "
    "listener.security.protocol.map  (an explicit security mapping for each controller listener is required if "
    "listener.security.protocol.map is non-empty, or if there are security protocols other than PLAINTEXT in use)"
)


def test_controller_listener_name_maps_to_plaintext_by_default():
    # testControllerListenerNameMapsToPlaintextByDefaultForKRaft
    props = {
        "process.roles": "broker",
        "controller.listener.names": "CONTROLLER",
        "node.id": "1",
        "controller.quorum.voters": "2@localhost:9093",
    }
    assert resolve(props).listener_security_protocol_map["CONTROLLER"] == "PLAINTEXT"
    # not when there is an SSL or SASL controller listener
    exc = rejected({**props, "controller.listener.names": "CONTROLLER,SSL"})
    assert str(exc) == NOT_IN_MAP and exc.kafka_exception == "ConfigException"
    # nor an SSL or SASL listener
    assert str(rejected({**props, "listeners": "SSL://localhost:9092"})) == NOT_IN_MAP
    # nor when it is mapped otherwise, or anything is given
    mapped = {**props, "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL"}
    assert resolve(mapped).listener_security_protocol_map["CONTROLLER"] == "SSL"
    assert str(rejected({**props, "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"})) == NOT_IN_MAP
    # an SSL controller listener is SSL by the default map
    assert resolve({**props, "controller.listener.names": "SSL"}).controller_security_protocol == "SSL"


def test_the_plaintext_default_is_keyed_by_the_name_as_written():
    # derived from code: new ListenerName(name), not normalised, so a lower-case controller listener name is not
    # found by the upper-cased lookup of the broker's check
    assert str(rejected({**BROKER, "controller.listener.names": "controller"})) == NOT_IN_MAP


def test_multiple_controller_listener_names_map_to_plaintext():
    # testMultipleControllerListenerNamesMapToPlaintextByDefaultForKRaft
    c = resolve(
        {
            "process.roles": "controller",
            "listeners": "CONTROLLER1://localhost:9092,CONTROLLER2://localhost:9093",
            "controller.listener.names": "CONTROLLER1,CONTROLLER2",
            "node.id": "1",
            "controller.quorum.voters": "1@localhost:9092",
        }
    )
    assert (
        c.listener_security_protocol_map["CONTROLLER1"]
        == c.listener_security_protocol_map["CONTROLLER2"]
        == "PLAINTEXT"
    )


def test_distinct_controller_and_advertised_listeners_for_kraft_broker():
    # testDistinctControllerAndAdvertisedListenersAllowedForKRaftBroker
    props = {
        "process.roles": "broker",
        "listeners": "PLAINTEXT://A:9092,SSL://B:9093,SASL_SSL://C:9094",
        "advertised.listeners": "PLAINTEXT://A:9092,SSL://B:9093",
        "controller.listener.names": "SASL_SSL",
        "node.id": "2",
        "controller.quorum.voters": "3@localhost:9094",
    }
    assert str(rejected(props)) == (
        "requirement failed: controller.listener.names must not contain a value appearing in the 'listeners' "
        "configuration when running KRaft with just the broker role"
    )
    props["listeners"] = "PLAINTEXT://A:9092,SSL://B:9093"
    resolve(props)
    del props["advertised.listeners"]
    resolve(props)


def test_controller_listeners_can_be_advertised_for_kraft_combined():
    # testControllerListenersCanBeAdvertisedForKRaftCombined
    listeners = "PLAINTEXT://A:9092,SSL://B:9093,SASL_SSL://C:9094"
    props = {
        "process.roles": "broker,controller",
        "listeners": listeners,
        "advertised.listeners": listeners,
        "inter.broker.listener.name": "SASL_SSL",
        "controller.listener.names": "PLAINTEXT,SSL",
        "node.id": "2",
        "controller.quorum.voters": "2@localhost:9092",
    }
    n = resolve(props)
    assert strs(n.advertised_broker_listeners) == ["SASL_SSL://C:9094"]
    assert strs(n.advertised_controller_listeners) == ["PLAINTEXT://A:9092", "SSL://B:9093"]
    del props["advertised.listeners"]
    resolve(props)


def test_advertised_listeners_for_kraft_controller_only():
    # testAdvertisedListenersAllowedForKRaftControllerOnlyRole
    correct = "PLAINTEXT://A:9092,SSL://B:9093"
    props = {
        "process.roles": "controller",
        "listeners": correct,
        "advertised.listeners": correct,
        "controller.listener.names": "PLAINTEXT,SSL",
        "node.id": "2",
        "controller.quorum.voters": "2@localhost:9092",
    }
    resolve(props)
    del props["advertised.listeners"]
    wrong = {**props, "listeners": "PLAINTEXT://A:9092,SSL://B:9093,SASL_SSL://C:9094"}
    assert str(rejected(wrong)) == (
        "requirement failed: The listeners config must only contain KRaft controller listeners from "
        "controller.listener.names when process.roles=controller"
    )
    extra = {**props, "controller.listener.names": "PLAINTEXT,SSL,SASL_SSL"}
    assert str(rejected(extra)) == (
        "requirement failed: controller.listener.names must only contain values appearing in the 'listeners' "
        "configuration when running the KRaft controller role"
    )


@pytest.mark.parametrize(
    "listeners, message",
    [  # testIPv4AndIPv6SamePortListeners, on a KRaft broker (CoreUtils.listenerListToEndPoints, 3.1 and later)
        (
            "PLAINTEXT://[::1]:9092,SSL://[::1]:9092",
            "requirement failed: If you have two listeners on the same port then one needs to be IPv4 and the other "
            "IPv6, listeners: PLAINTEXT://[::1]:9092,SSL://[::1]:9092, port: 9092",
        ),
        (
            "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9092",
            "requirement failed: If you have two listeners on the same port then one needs to be IPv4 and the other "
            "IPv6, listeners: PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9092, port: 9092",
        ),
        (  # the pair is right, but a third listener without an IP host shares the port: no "requirement failed: "
            "SSL://[::1]:9096,PLAINTEXT://127.0.0.1:9096,SASL_SSL://:9096",
            "If you have two listeners on the same port then one needs to be IPv4 and the other IPv6, listeners: "
            "SSL://[::1]:9096,PLAINTEXT://127.0.0.1:9096,SASL_SSL://:9096, port: 9096",
        ),
        (
            "PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9092",
            "requirement failed: Each listener must have a different name, listeners: "
            "PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9092",
        ),
        (
            "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9092,SASL_SSL://127.0.0.1:9092",
            "Each listener must have a different port unless exactly one listener has an IPv4 address and the other "
            "IPv6 address, listeners: PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9092,SASL_SSL://127.0.0.1:9092, "
            "port: 9092",
        ),
        (  # testDuplicateListeners
            "PLAINTEXT://localhost:9091,SSL://localhost:9091",
            "requirement failed: Each listener must have a different port, listeners: "
            "PLAINTEXT://localhost:9091,SSL://localhost:9091",
        ),
    ],
)
def test_listener_ports_as_31_checks_them(listeners, message):
    exc = rejected({**BROKER, "listeners": listeners})
    assert str(exc) == message
    assert exc.kafka_exception == "IllegalArgumentException" and exc.config_key == "listeners"


def test_one_ipv4_and_one_ipv6_listener_may_share_a_port():  # 2.8 refused this pair (§2); 3.1 allows it
    # (an SSL listener turns off KRaft's PLAINTEXT default for CONTROLLER, so the map says it)
    pmap = "PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT"
    b = resolve(
        {**BROKER, "listeners": "PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092", "listener.security.protocol.map": pmap}
    )
    assert [e.port for e in b.listeners] == [9092, 9092]


def test_advertised_listeners_may_share_a_port():  # testDuplicateListeners, second half
    props = {
        **BROKER,
        "listener.security.protocol.map": "HOST:SASL_SSL,LB:SASL_SSL,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "HOST",
        "listeners": "HOST://localhost:9091,LB://localhost:9092",
        "advertised.listeners": "HOST://localhost:9091,LB://localhost:9091",
    }
    resolve(props)
    assert str(rejected({**props, "advertised.listeners": "HOST://localhost:9091,HOST://localhost:9091"})) == (
        "requirement failed: Each listener must have a different name, listeners: HOST://localhost:9091,HOST://localhost:9091"
    )


@pytest.mark.parametrize(  # testInvalidQuorumVoterConfig, each with the message QuorumConfig gives
    "voters, message",
    [
        (
            "1",
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1@",
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1:",
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "blah@",
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1@kafka1",
            "Failed to parse host name from entry 1@kafka1 for the configuration controller.quorum.voters. Each entry "
            "should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1@kafka1:9092,",
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1@kafka1:9092,2",
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1@kafka1:9092,2@",
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1@kafka1:9092,2@blah",
            "Failed to parse host name from entry 2@blah for the configuration controller.quorum.voters. Each entry "
            "should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1@kafka1:9092,2@blah,",
            "Failed to parse host name from entry 2@blah for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        (
            "1@kafka1:9092:1@kafka2:9092",
            "Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.",
        ),
        ("x@kafka1:9092", "Failed to parse voter ID as an integer from x"),
        (" 1 @kafka1:9092", "Failed to parse voter ID as an integer from 1 "),  # trimmed as a whole, not per entry
    ],
)
def test_invalid_quorum_voters(voters, message):
    exc = rejected({**BROKER, "controller.quorum.voters": voters})
    assert str(exc) == message
    assert exc.kafka_exception == "ConfigException" and exc.config_key == "controller.quorum.voters"


def test_valid_quorum_voters():  # testValidQuorumVotersParsing*, testControllerQuorumVoterStringsToNodes
    assert resolve({**BROKER, "controller.quorum.voters": "1@127.0.0.1:9092"}).voters == {1: ("127.0.0.1", 9092)}
    many = resolve({**BROKER, "controller.quorum.voters": "1@kafka1:9092,2@kafka2:9092,3@kafka3:9092"})
    assert many.voters == {1: ("kafka1", 9092), 2: ("kafka2", 9092), 3: ("kafka3", 9092)}
    assert resolve({**BROKER, "controller.quorum.voters": "3000@example.com:9093"}).voters == {
        3000: ("example.com", 9093)
    }
    assert resolve({**BROKER, "controller.quorum.voters": "+7@[::1]:9093, -2@h:0"}).voters == {
        7: ("::1", 9093),
        -2: ("h", 0),
    }


def test_quorum_bootstrap_servers():  # testParseQuorumBootstrapServers
    b = resolve(
        {**BROKER, "controller.quorum.voters": "", "controller.quorum.bootstrap.servers": "kafka1:9092,kafka2:9092"}
    )
    assert b.bootstrap_servers == (("kafka1", 9092), ("kafka2", 9092))
    assert str(rejected({**BROKER, "controller.quorum.bootstrap.servers": "kafka1"})) == (
        "Failed to parse host name from kafka1 for the configuration controller.quorum.bootstrap.servers. Each entry "
        'should be in the form "{host}:{port}"'
    )


def test_process_roles_and_node_id_are_required():  # PR #18414 (KAFKA-18331), KafkaConfigTest in 4.0
    with pytest.raises(
        ConfigException, match=r'^Missing required configuration "process\.roles" which has no default value\.$'
    ):
        resolve_kraft({})
    props = {"process.roles": "controller"}
    assert str(rejected(props)) == 'Missing required configuration "node.id" which has no default value.'
    assert (
        str(rejected({**props, "node.id": -1}))
        == "Invalid value -1 for configuration node.id: Value must be at least 0"
    )


# ------------------------------------------------------------------ each rule, with its exact message

VOTERS_FORM = "Each entry should be in the form `{id}@{host}:{port}`."

RULES = [
    # (properties, Kafka's message, Java class, the setting it names)
    (
        {**BROKER, "broker.id": "x"},
        "Invalid value x for configuration broker.id: Not a number of type INT",
        "ConfigException",
        "broker.id",
    ),
    (
        {**BROKER, "process.roles": "broker,"},
        "Invalid value  for configuration process.roles: String must be one of: broker, controller",
        "ConfigException",
        "process.roles",
    ),
    (
        {**BROKER, "process.roles": "Broker"},
        "Invalid value Broker for configuration process.roles: String must be one of: broker, controller",
        "ConfigException",
        "process.roles",
    ),
    (
        {**BROKER, "process.roles": "broker, broker"},
        "Duplicate role names found in `process.roles`: ArrayBuffer(broker, broker)",
        "ConfigException",
        "process.roles",
    ),
    (
        {**BROKER, "node.id": "four", "broker.id": "4"},
        "Invalid value four for configuration node.id: Not a number of type INT",
        "ConfigException",
        "node.id",
    ),
    (  # node.id alone stands in for broker.id (populateSynonyms), which ConfigDef parses first
        {**BROKER, "node.id": "four"},
        "Invalid value four for configuration broker.id: Not a number of type INT",
        "ConfigException",
        "broker.id",
    ),
    (
        {**BROKER, "node.id": "-3"},
        "Invalid value -3 for configuration node.id: Value must be at least 0",
        "ConfigException",
        "node.id",
    ),
    (
        {**BROKER, "broker.id": "5"},
        "You must set `node.id` to the same value as `broker.id`.",
        "ConfigException",
        "node.id",
    ),
    (
        {**BROKER, "security.inter.broker.protocol": "ssl"},  # ConfigDef's ValidString: case-sensitive since 3.x
        "Invalid value ssl for configuration security.inter.broker.protocol: String must be one of: PLAINTEXT, SSL, "
        "SASL_PLAINTEXT, SASL_SSL",
        "ConfigException",
        "security.inter.broker.protocol",
    ),
    (
        {**BROKER, "controller.quorum.voters": "1@h:70000"},
        "port out of range:70000",
        "IllegalArgumentException",
        "controller.quorum.voters",
    ),
    (
        {**BROKER, "controller.quorum.voters": "1@h:99999999999"},
        'For input string: "99999999999"',
        "NumberFormatException",
        "controller.quorum.voters",
    ),
    (
        {**BROKER, "controller.quorum.voters": None},
        "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap "
        "controllers or controller.quorum.voters must contain a parseable set of controllers.",
        "ConfigException",
        "controller.quorum.voters",
    ),
    (
        {**BROKER, "controller.quorum.voters": "4@c4:9093"},
        "requirement failed: If process.roles contains just the 'broker' role, the node id 4 must not be included in "
        "the set of voters controller.quorum.voters=Set(4)",
        "IllegalArgumentException",
        "controller.quorum.voters",
    ),
    (
        {**BROKER, "controller.listener.names": ","},  # Java's split drops every trailing empty string
        "requirement failed: controller.listener.names must contain at least one value when running KRaft with just "
        "the broker role",
        "IllegalArgumentException",
        "controller.listener.names",
    ),
    (
        {**BROKER, "controller.listener.names": "CONTROLLER,,X"},
        "The provided listener name is null or empty string",
        "ConfigException",
        "controller.listener.names",
    ),
    (
        {**CONTROLLER, "node.id": "9", "broker.id": None},
        "requirement failed: If process.roles contains the 'controller' role, the node id 9 must be included in the "
        "set of voters controller.quorum.voters=Set(1, 2, 3)",
        "IllegalArgumentException",
        "controller.quorum.voters",
    ),
    (
        {
            **CONTROLLER,
            "inter.broker.listener.name": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
        },
        "requirement failed: controller.listener.names must not contain an explicitly set inter.broker.listener.name "
        "configuration value when process.roles=controller'",
        "IllegalArgumentException",
        "controller.listener.names",
    ),
    (
        {
            **COMBINED,
            "controller.listener.names": "CONTROLLER,OTHER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,OTHER:PLAINTEXT",
        },
        "requirement failed: controller.listener.names must only contain values appearing in the 'listeners' "
        "configuration when running the KRaft controller role",
        "IllegalArgumentException",
        "controller.listener.names",
    ),
    (
        {
            **COMBINED,
            "controller.listener.names": "OTHER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,OTHER:PLAINTEXT",
        },
        "requirement failed: controller.listener.names must contain at least one value appearing in the 'listeners' "
        "configuration when running the KRaft controller role",
        "IllegalArgumentException",
        "controller.listener.names",
    ),
    (
        {
            **BROKER,
            "listeners": "INTERNAL://:9092",
            "listener.security.protocol.map": "INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
        },
        "requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. "
        "The valid options based on currently configured listeners are INTERNAL",
        "IllegalArgumentException",
        "security.inter.broker.protocol",
    ),
    (
        {**BROKER, "inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
        "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.",
        "ConfigException",
        "inter.broker.listener.name",
    ),
    (
        {**BROKER, "inter.broker.listener.name": "internal"},
        "Listener with name INTERNAL defined in inter.broker.listener.name not found in listener.security.protocol.map.",
        "ConfigException",
        "inter.broker.listener.name",
    ),
    (
        {**BROKER, "advertised.listeners": "PLAINTEXT://h:9092,SSL://h:9093"},
        "requirement failed: advertised.listeners listener names must be equal to or a subset of the ones defined in "
        "listeners. Found PLAINTEXT,SSL. The valid options based on the current configuration are PLAINTEXT",
        "IllegalArgumentException",
        "advertised.listeners",
    ),
    (
        {**BROKER, "listeners": "PLAINTEXT://0.0.0.0:9092"},
        "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable "
        "IP address.",
        "IllegalArgumentException",
        "advertised.listeners",
    ),
    (
        {**CONTROLLER, "listeners": "CONTROLLER://0.0.0.0:9093"},
        "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable "
        "IP address.",
        "IllegalArgumentException",
        "advertised.listeners",
    ),
    (
        {**BROKER, "listeners": "://:9092"},  # ListenerName.normalised refuses a blank name (3.x)
        "Error creating broker listeners from '://:9092': The provided listener name is null or empty string",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {**BROKER, "listeners": "PLAINTEXT"},  # KRaft's default map reads each listener's name first
        "Unable to parse a listener name from PLAINTEXT",
        "KafkaException",
        "listeners",
    ),
    (
        {**BROKER, "listener.security.protocol.map": ":PLAINTEXT,CONTROLLER:PLAINTEXT"},
        "The provided listener name is null or empty string",
        "ConfigException",
        "listener.security.protocol.map",
    ),
    (
        {**BROKER, "controller.quorum.voters": "1@0.0.0.0:9093"},  # as the node starts (KafkaRaftServer)
        "Host string (0.0.0.0) is not routeable",
        "ConfigException",
        "controller.quorum.voters",
    ),
    (
        {
            **BROKER,
            "controller.listener.names": "controller",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        },  # as the node starts: RaftManager looks the name up as written
        "No enum constant org.apache.kafka.common.security.auth.SecurityProtocol.CONTROLLER",
        "IllegalArgumentException",
        "controller.listener.names",
    ),
]


@pytest.mark.parametrize("props, message, java_class, key", RULES, ids=[r[1][:60] for r in RULES])
def test_rule_and_exact_message(props, message, java_class, key):
    exc = rejected(props)
    assert str(exc) == message
    assert exc.kafka_exception == java_class
    assert exc.config_key == key


def test_an_empty_process_roles_is_refused_with_the_models_own_message():
    with pytest.raises(ValueError, match=r"process\.roles is empty: a KRaft node plays 'broker', 'controller'") as info:
        resolve({**BROKER, "process.roles": ""})
    assert not isinstance(info.value, ConfigException)  # not Kafka's message: 4.0's answer is not established


# ----------------------------------------------------------------------------------------------- order


def test_broker_id_parses_before_process_roles_and_node_id():  # ServerConfigs comes before KRaftConfigs
    assert "broker.id" in str(rejected({"process.roles": "nobody", "broker.id": "x", "node.id": "y"}))
    assert "process.roles" in str(rejected({"process.roles": "nobody", "node.id": "y", "broker.id": "1"}))
    assert "node.id" in str(rejected({"process.roles": "broker", "node.id": "y", "broker.id": "1"}))


def test_node_id_and_broker_id_are_synonyms():  # KafkaConfig.populateSynonyms
    assert resolve({**BROKER, "node.id": None, "broker.id": "4"}).node_id == 4
    assert str(rejected({**BROKER, "node.id": None, "broker.id": "x"})).startswith(
        "Invalid value x for configuration broker.id"
    )


def test_configdef_errors_come_before_the_duplicate_role():
    assert "controller.quorum.voters" in str(
        rejected({**BROKER, "process.roles": "broker,broker", "controller.quorum.voters": "1"})
    )


def test_the_quorum_check_comes_before_the_voter_check():
    props = {**BROKER, "controller.quorum.voters": None, "controller.listener.names": None}
    assert str(rejected(props)).startswith("If using process.roles, either")


def test_the_map_is_checked_in_java_hashmap_order():
    # Csv.parseCsvMap fills a java.util.HashMap: OpenJDK 17 iterates {INTERNAL, EXTERNAL, CONTROLLER} as
    # [EXTERNAL, CONTROLLER, INTERNAL], so EXTERNAL's protocol is the one reported
    exc = rejected({**BROKER, "listener.security.protocol.map": "INTERNAL:FOO,EXTERNAL:BAR,CONTROLLER:SSL"})
    assert str(exc) == "Invalid security protocol `BAR` defined in listener.security.protocol.map"


def test_listeners_parse_before_the_broker_checks():
    props = {
        **COMBINED,
        "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093,SSL://:9092",
        "advertised.listeners": "CONTROLLER://h:9093",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT",
    }
    assert "Each listener must have a different port" in str(rejected(props))


def test_the_control_plane_setting_is_refused_where_39_checks_it():
    # after the quorum check ...
    assert str(
        rejected({**COMBINED, "controller.quorum.voters": None, "control.plane.listener.name": "CONTROLLER"})
    ).startswith("If using process.roles")
    # ... and before the voter check
    exc = rejected({**BROKER, "controller.quorum.voters": "4@c:9093", "control.plane.listener.name": "PLAINTEXT"})
    assert str(exc) == "requirement failed: control.plane.listener.name is not supported in KRaft mode."


def test_a_voter_set_prints_in_java_hashmap_order():
    # parseVoterConnections fills new HashMap<>(3); OpenJDK 17 iterates the ids {1, 2, 5} as [1, 5, 2]
    exc = rejected({**BROKER, "node.id": "2", "controller.quorum.voters": "1@h:1,2@h:2,5@h:5"})
    assert str(exc).endswith("controller.quorum.voters=Set(1, 5, 2)")
    assert resolve({**BROKER, "controller.quorum.voters": "1@h:1,2@h:2,5@h:5"}).voters == {
        1: ("h", 1),
        5: ("h", 5),
        2: ("h", 2),
    }


# ------------------------------------------------------------------------------- warnings and removals


def test_more_than_one_controller_listener_name_gets_kafkas_warning():
    props = {**BROKER, "controller.listener.names": "CONTROLLER,OTHER"}
    with pytest.warns(KafkaConfigWarning) as caught:
        b = resolve(props)
    assert [str(w.message) for w in caught] == [
        "controller.listener.names has multiple entries; only the first will be used since process.roles=broker: "
        "[CONTROLLER, OTHER]"
    ]
    assert b.controller_listener_name == "CONTROLLER"


def test_the_30_legacy_settings_are_named_as_ignored():
    with pytest.warns(UnknownConfigWarning) as caught:
        resolve({**BROKER, "port": "9093", "host.name": "h"})
    assert [str(w.message) for w in caught] == [
        f"{k} is not a Kafka 4.0 config (removed in 3.0): a 4.0 node ignores it without a word; listeners and "
        "advertised.listeners say where it listens."
        for k in ("host.name", "port")
    ]


def test_a_valid_node_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resolve(BROKER), resolve(CONTROLLER), resolve(COMBINED)


# ------------------------------------------------------ the Java behaviour the messages depend on


@pytest.mark.parametrize(
    "ids, capacity, order",  # new HashMap<>(capacity), put in this order, keySet() as OpenJDK 17 prints it
    [
        ([1, 2, 5], 3, [1, 5, 2]),
        ([3, 1, 2], 3, [1, 2, 3]),
        ([1, 2, 3, 4], 4, [1, 2, 3, 4]),
        ([4, 8, 12, 16], 4, [8, 16, 4, 12]),  # the fourth put resizes the table from 4 to 8
        ([100, 200, 300], 3, [100, 200, 300]),
        ([-1, 0, 1], 3, [-1, 0, 1]),
        ([7, 7, 3], 3, [7, 3]),
        ([1000, 2000, 3000, 4000, 5000], 5, [1000, 2000, 3000, 4000, 5000]),
    ],
)
def test_java_hashmap_order_of_integers(ids, capacity, order):
    assert java_hashmap_order(ids, lambda i: i, initial_capacity=capacity) == order


def test_java_string_hash_and_order():
    assert (java_string_hash("CONTROLLER"), java_string_hash("é€"), java_string_hash("PLAINTEXT")) == (
        1122520988,
        15587,
        464861655,
    )
    assert java_hashmap_order(["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"], java_string_hash) == [
        "SASL_SSL",
        "PLAINTEXT",
        "SSL",
        "SASL_PLAINTEXT",
    ]


def test_module_docstring_example():
    import doctest

    from kafka_lab.listeners import kraft

    assert doctest.testmod(kraft).failed == 0
