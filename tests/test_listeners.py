"""Listener resolution against Kafka 2.8: the KIP-291 page's examples and KafkaConfigTest's rules.

Every expected message below is Kafka's text as docs/kafka-reference.md §2 records it (read from
KafkaConfig.scala / CoreUtils.scala / EndPoint.scala, branch 2.8), written out here by hand.
"""

import json

import pytest

from kafka_lab.listeners import (
    KIP291_AS_PRINTED,
    KIP291_TIMESTAMP_MS,
    BrokerEndPointNotAvailableException,
    ConfigException,
    EndPoint,
    broker_registration,
    controller_endpoint,
    fix_hint,
    kip291_broker,
    kip291_properties_text,
    parse_csv_map,
    parse_endpoint,
    parse_properties,
    registered_endpoints,
    registration_json,
    resolve,
)
from kafka_lab.listeners.errors import UnknownConfigWarning
from kafka_lab.listeners.known_configs import KAFKA_28_BROKER_CONFIGS
from kafka_lab.listeners.registration import _java_string_hash

KIP_BEFORE = dict(KIP291_AS_PRINTED, **{"inter.broker.listener.name": "INTERNAL"})
KIP_AFTER = {
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,EXTERNAL:SSL",
    "advertised.listeners": "CONTROLLER://broker1.example.com:9091,INTERNAL://broker1.example.com:9092,"
    "EXTERNAL://host1.example.com:9093",
    "listeners": "CONTROLLER://192.1.1.8:9091,INTERNAL://192.1.1.8:9092,EXTERNAL://10.1.1.5:9093",
    "inter.broker.listener.name": "INTERNAL",
}


def rejected(props):
    with pytest.raises(ConfigException) as info:
        resolve(props)
    return info.value


def strs(endpoints):
    return [e.connection_string for e in endpoints]


# ------------------------------------------------------------------------------------- KIP-291's examples


def test_kip291_before_example():
    b = resolve(KIP_BEFORE)
    assert strs(b.listeners) == ["INTERNAL://192.1.1.8:9092", "EXTERNAL://10.1.1.5:9093"]
    assert strs(b.advertised_listeners) == ["INTERNAL://broker1.example.com:9092", "EXTERNAL://host1.example.com:9093"]
    assert b.listener_security_protocol_map == {"INTERNAL": "PLAINTEXT", "EXTERNAL": "SSL"}
    assert (b.inter_broker_listener_name, b.inter_broker_security_protocol) == ("INTERNAL", "PLAINTEXT")
    assert b.control_plane_listener is None and b.data_plane_listeners == b.listeners


def test_kip291_as_printed_has_no_inter_broker_listener():
    """The page's three lines alone: the inter-broker listener defaults to PLAINTEXT, which is not advertised."""
    e = rejected(KIP291_AS_PRINTED)
    assert str(e) == (
        "requirement failed: inter.broker.listener.name must be a listener name defined in "
        "advertised.listeners. The valid options based on currently configured listeners are "
        "INTERNAL,EXTERNAL"
    )
    assert e.kafka_exception == "IllegalArgumentException"


def test_kip291_after_example_with_control_plane():
    b = resolve(dict(KIP_AFTER, **{"control.plane.listener.name": "CONTROLLER"}))
    # "the broker will derive the dedicated endpoint to be CONTROLLER://192.1.1.8:9091"
    assert b.control_plane_listener == EndPoint("CONTROLLER", "192.1.1.8", 9091, "PLAINTEXT")
    assert strs(b.data_plane_listeners) == ["INTERNAL://192.1.1.8:9092", "EXTERNAL://10.1.1.5:9093"]
    assert (b.control_plane_listener_name, b.control_plane_security_protocol) == ("CONTROLLER", "PLAINTEXT")
    assert b.privileged_listener_name == "CONTROLLER"


def test_kip291_round_one_control_listener_is_just_data_plane():
    b = resolve(KIP_AFTER)
    assert b.control_plane_listener is None
    assert strs(b.data_plane_listeners) == strs(b.listeners)
    assert b.controller_to_broker_listener_name == "INTERNAL"
    assert b.privileged_listener_name == "INTERNAL"


def test_kip291_registration_json_before():
    reg = broker_registration(resolve(KIP_BEFORE), timestamp_ms=KIP291_TIMESTAMP_MS)
    # the KIP's payload, field by field
    assert reg["listener_security_protocol_map"] == {"INTERNAL": "PLAINTEXT", "EXTERNAL": "SSL"}
    assert reg["endpoints"] == ["INTERNAL://broker1.example.com:9092", "EXTERNAL://host1.example.com:9093"]
    assert reg["port"] == 9092 and reg["jmx_port"] == -1 and reg["version"] == 5 and reg["features"] == {}
    assert reg["timestamp"] == "1532467569343" and isinstance(reg["timestamp"], str)
    # Kafka takes host from the first PLAINTEXT endpoint (INTERNAL); the KIP's "host1.example.com" is hand-written
    assert reg["host"] == "broker1.example.com"
    assert "rack" not in reg
    assert json.loads(json.dumps(reg)) == reg


def test_kip291_registration_json_after():
    reg = broker_registration(
        resolve(dict(KIP_AFTER, **{"control.plane.listener.name": "CONTROLLER"})), timestamp_ms=KIP291_TIMESTAMP_MS
    )
    assert reg["listener_security_protocol_map"] == {
        "CONTROLLER": "PLAINTEXT",
        "INTERNAL": "PLAINTEXT",
        "EXTERNAL": "SSL",
    }
    assert reg["endpoints"] == [
        "CONTROLLER://broker1.example.com:9091",
        "INTERNAL://broker1.example.com:9092",
        "EXTERNAL://host1.example.com:9093",
    ]
    # the first PLAINTEXT endpoint is now CONTROLLER: Kafka publishes 9091 (the KIP copied 9092 from the first payload)
    assert (reg["host"], reg["port"]) == ("broker1.example.com", 9091)


def test_kip291_controller_uses_inter_broker_listener_without_control_plane():
    """'...it knows to use the endpoint INTERNAL://broker1.example.com:9092 and security protocol PLAINTEXT'."""
    reg = broker_registration(resolve(KIP_BEFORE), timestamp_ms=KIP291_TIMESTAMP_MS)
    route = controller_endpoint(resolve(KIP_BEFORE), reg, 1)
    assert route.connection_string == "INTERNAL://broker1.example.com:9092"
    assert route.security_protocol == "PLAINTEXT" and not route.dedicated


def test_kip291_controller_uses_control_plane_listener():
    """'...it will use the corresponding endpoint CONTROLLER://broker1.example.com:9091 and the security protocol PLAINTEXT'."""
    after = dict(KIP_AFTER, **{"control.plane.listener.name": "CONTROLLER"})
    reg = broker_registration(resolve(after), timestamp_ms=KIP291_TIMESTAMP_MS)
    route = controller_endpoint(resolve(after), reg, 1)
    assert route.connection_string == "CONTROLLER://broker1.example.com:9091"
    assert route.security_protocol == "PLAINTEXT" and route.dedicated


def test_controller_decides_with_its_own_config():
    """Round 2 half done: a round-1 controller still reaches an upgraded broker on INTERNAL, and vice versa."""
    upgraded = broker_registration(resolve(kip291_broker(1, "round 2")), timestamp_ms=1)
    old_ctl = resolve(kip291_broker(2, "round 1"))
    assert controller_endpoint(old_ctl, upgraded, 1).connection_string == "INTERNAL://broker1.example.com:9092"
    not_yet = broker_registration(resolve(kip291_broker(3, "round 1")), timestamp_ms=1)
    new_ctl = resolve(kip291_broker(1, "round 2"))
    assert controller_endpoint(new_ctl, not_yet, 3).connection_string == "CONTROLLER://broker3.example.com:9091"


def test_controller_cannot_reach_broker_without_the_listener():
    before = broker_registration(resolve(kip291_broker(3, "before")), timestamp_ms=1)
    with pytest.raises(BrokerEndPointNotAvailableException) as info:
        controller_endpoint(resolve(kip291_broker(1, "round 2")), before, 3)
    assert str(info.value) == "End point with listener name CONTROLLER not found for broker 3"


def test_registration_reads_back_with_its_own_map():
    reg = broker_registration(resolve(KIP_BEFORE), timestamp_ms=5)
    assert registered_endpoints(json.dumps(reg)) == [
        EndPoint("INTERNAL", "broker1.example.com", 9092, "PLAINTEXT"),
        EndPoint("EXTERNAL", "host1.example.com", 9093, "SSL"),
    ]


def test_registration_rack_and_no_plaintext_and_empty_host():
    """KIP-36: rack when broker.rack is set; host null / port -1 without a PLAINTEXT endpoint; empty host -> hostname."""
    b = resolve(
        {"listeners": "SSL://:9093", "security.inter.broker.protocol": "SSL", "broker.rack": "dc1", "broker.id": "7"}
    )
    reg = broker_registration(b, timestamp_ms=2233345666, jmx_port=9999, canonical_host_name="host1")
    assert reg["rack"] == "dc1" and reg["jmx_port"] == 9999 and reg["timestamp"] == "2233345666"
    assert (reg["host"], reg["port"]) == (None, -1)
    assert reg["endpoints"] == ["SSL://host1:9093"]
    assert b.broker_id == 7
    v4 = broker_registration(b, timestamp_ms=1, version=4)
    assert v4["version"] == 4 and "features" not in v4 and reg["version"] == 5 and reg["features"] == {}


def test_registration_reads_as_a_28_broker_writes_it():
    """``get /brokers/ids/0`` on a Kafka 2.8 broker (a published zookeeper-shell session, broker host "kafka")."""
    b = resolve({"listeners": "PLAINTEXT://kafka:9092"})
    assert registration_json(broker_registration(b, timestamp_ms=1647406227247)) == (
        '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://kafka:9092"],'
        '"jmx_port":-1,"port":9092,"host":"kafka","version":5,"timestamp":"1647406227247"}'
    )
    # the order is a Scala 2.13 HashMap's: String.hashCode (as Java computes it), spread, 16 buckets
    assert _java_string_hash("features") == 4004308029 and _java_string_hash("é") == 233
    assert _java_string_hash("\U0001f600") == 1772899  # a surrogate pair: two UTF-16 units, as Java counts
    racked = broker_registration(resolve({"listeners": "PLAINTEXT://h:9092", "broker.rack": "r1"}), timestamp_ms=1)
    assert list(racked)[:4] == ["features", "listener_security_protocol_map", "endpoints", "rack"]
    assert json.loads(registration_json(racked)) == racked and registration_json(racked, indent=2).startswith("{\n")


def test_registration_port_zero_uses_bound_port():
    b = resolve({"listeners": "PLAINTEXT://h:0"})
    assert broker_registration(b, timestamp_ms=1, bound_ports={"PLAINTEXT": 40123})["endpoints"] == [
        "PLAINTEXT://h:40123"
    ]


# ------------------------------------------------------------------------------------------- defaults


def test_defaults():
    b = resolve({})
    assert strs(b.listeners) == ["PLAINTEXT://:9092"] and b.listeners[0].host is None
    assert b.advertised_listeners == b.listeners
    assert (b.inter_broker_listener_name, b.inter_broker_security_protocol) == ("PLAINTEXT", "PLAINTEXT")
    assert b.listener_security_protocol_map == {p: p for p in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")}
    assert b.control_plane_listener is None and b.broker_id == -1


def test_listener_defaults_host_and_port():  # KafkaConfigTest.testListenerDefaults
    b = resolve({"host.name": "myhost", "port": "1111"})
    assert strs(b.listeners) == strs(b.advertised_listeners) == ["PLAINTEXT://myhost:1111"]
    b = resolve({"port": "1111"})
    assert strs(b.listeners) == ["PLAINTEXT://:1111"] and b.advertised_listeners[0].host is None


def test_advertise_defaults():  # KafkaConfigTest.testAdvertiseDefaults
    b = resolve({"host.name": "fake-host", "port": "9999"})
    assert b.advertised_listeners == (EndPoint("PLAINTEXT", "fake-host", 9999, "PLAINTEXT"),)


def test_advertise_configured():  # testAdvertiseConfigured
    b = resolve({"advertised.host.name": "routable-host", "advertised.port": "1234"})
    assert b.advertised_listeners == (EndPoint("PLAINTEXT", "routable-host", 1234, "PLAINTEXT"),)
    assert strs(b.listeners) == ["PLAINTEXT://:9092"]


def test_advertised_port_defaults_to_port():  # testAdvertisePortDefault
    b = resolve({"advertised.host.name": "routable-host", "port": "9999"})
    assert b.advertised_listeners == (EndPoint("PLAINTEXT", "routable-host", 9999, "PLAINTEXT"),)


def test_advertised_host_defaults_to_host_name():  # testAdvertiseHostNameDefault
    b = resolve({"host.name": "routable-host", "advertised.port": "9999"})
    assert b.advertised_listeners == (EndPoint("PLAINTEXT", "routable-host", 9999, "PLAINTEXT"),)


def test_advertised_port_defaults_to_port_not_to_listeners_port():
    b = resolve({"listeners": "PLAINTEXT://h:1111", "advertised.host.name": "a"})
    assert strs(b.advertised_listeners) == ["PLAINTEXT://a:9092"]


def test_listener_names_with_advertised_unset():  # testListenerNamesWithAdvertisedListenerUnset
    b = resolve(
        {
            "listeners": "CLIENT://localhost:9091,REPLICATION://localhost:9092,INTERNAL://localhost:9093",
            "listener.security.protocol.map": "CLIENT:SSL,REPLICATION:SSL,INTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "REPLICATION",
        }
    )
    assert (
        b.listeners
        == b.advertised_listeners
        == (
            EndPoint("CLIENT", "localhost", 9091, "SSL"),
            EndPoint("REPLICATION", "localhost", 9092, "SSL"),
            EndPoint("INTERNAL", "localhost", 9093, "PLAINTEXT"),
        )
    )
    assert (b.inter_broker_listener_name, b.inter_broker_security_protocol) == ("REPLICATION", "SSL")


def test_listener_and_advertised_listener_names():  # testListenerAndAdvertisedListenerNames
    b = resolve(
        {
            "listeners": "EXTERNAL://localhost:9091,INTERNAL://localhost:9093",
            "advertised.listeners": "EXTERNAL://lb1.example.com:9000,INTERNAL://host1:9093",
            "listener.security.protocol.map": "EXTERNAL:SSL,INTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
        }
    )
    assert b.advertised_listeners == (
        EndPoint("EXTERNAL", "lb1.example.com", 9000, "SSL"),
        EndPoint("INTERNAL", "host1", 9093, "PLAINTEXT"),
    )


def test_case_insensitive_listener_protocol():  # testCaseInsensitiveListenerProtocol
    b = resolve({"listeners": "plaintext://localhost:9091,SsL://localhost:9092"})
    assert b.listeners == (
        EndPoint("PLAINTEXT", "localhost", 9091, "PLAINTEXT"),
        EndPoint("SSL", "localhost", 9092, "SSL"),
    )


def test_values_are_trimmed_and_lists_split_on_spaced_commas():
    b = resolve(
        {
            "listeners": "  INTERNAL://a:1 ,  EXTERNAL://b:2,, ",
            "port": " 5 ",
            "listener.security.protocol.map": " INTERNAL : PLAINTEXT , EXTERNAL:ssl ",
            "inter.broker.listener.name": " internal ",
        }
    )
    assert strs(b.listeners) == ["INTERNAL://a:1", "EXTERNAL://b:2"]
    assert b.listener_security_protocol_map == {"INTERNAL": "PLAINTEXT", "EXTERNAL": "SSL"}
    assert b.inter_broker_listener_name == "INTERNAL"


def test_unknown_keys_ignored_and_none_is_unset():
    with pytest.warns(UnknownConfigWarning):
        assert resolve({"zookeeper.connect": "zk:2181", "listener": "x", "advertised.listeners": None}) == resolve({})


def test_an_unknown_key_gets_kafkas_warning(recwarn):
    """A typo is ignored, as a 2.8 broker ignores it, but not silently: Kafka's AbstractConfig.logUnused words."""
    with pytest.warns(UnknownConfigWarning) as caught:
        b = resolve("listeners=PLAINTEXT://h:9092\nadvertised.listener=PLAINTEXT://broker1:9092\n")
    assert [str(w.message) for w in caught] == [
        "The configuration 'advertised.listener' was supplied but isn't a known config."
    ]
    assert b.advertised_listeners == b.listeners  # the setting it meant stays unset
    assert caught[0].filename == __file__  # the warning points at the caller, not into the package


def test_known_keys_are_kafka_28s_broker_configs(recwarn):
    """Every key of KafkaConfig's ConfigDef in 2.8 (generated from its source), and per-listener settings."""
    assert len(KAFKA_28_BROKER_CONFIGS) == 233
    assert {
        "listeners",
        "control.plane.listener.name",
        "num.io.threads",
        "queued.max.requests",
        "broker.rack",
        "host.name",
        "advertised.port",
        "controller.listener.names",
        "ssl.keystore.location",
        "controller.quorum.voters",
        "log.message.timestamp.type",
    } <= KAFKA_28_BROKER_CONFIGS
    assert not {"advertised.listener", "listener", "num.io.thread", "acks"} & KAFKA_28_BROKER_CONFIGS
    resolve(
        {
            "listeners": "SSL://h:9093",
            "security.inter.broker.protocol": "SSL",
            "num.io.threads": "8",
            "listener.name.ssl.ssl.keystore.location": "/ks.jks",
            "zookeeper.connect": "zk:2181",
        }
    )
    assert not [w for w in recwarn if issubclass(w.category, UnknownConfigWarning)]


@pytest.mark.parametrize("props", [9092, ["listeners=PLAINTEXT://:9092"], b"listeners=PLAINTEXT://:9092", None])
def test_resolve_says_what_it_accepts(props):
    with pytest.raises(
        TypeError,
        match=r"a mapping of Kafka property names to values .* server\.properties file, "
        r"not ",
    ):
        resolve(props)


def test_property_names_are_strings():
    with pytest.raises(TypeError, match="property names are strings"):
        resolve({9092: "listeners"})


def test_security_inter_broker_protocol_picks_listener():
    b = resolve({"listeners": "SSL://h:9093,PLAINTEXT://h:9092", "security.inter.broker.protocol": "ssl"})
    assert (b.inter_broker_listener_name, b.inter_broker_security_protocol) == ("SSL", "SSL")


def test_ipv6():
    b = resolve({"listeners": "PLAINTEXT://[::1]:9092,SSL://::1:9093,SASL_SSL://[fe80::1%3]:9094"})
    assert [e.host for e in b.listeners] == ["::1", "::1", "fe80::1%3"]
    assert strs(b.listeners) == ["PLAINTEXT://[::1]:9092", "SSL://[::1]:9093", "SASL_SSL://[fe80::1%3]:9094"]


def test_port_zero_may_repeat_and_advertised_may_share_ports():  # testDuplicateListeners
    resolve({"listeners": "PLAINTEXT://a:0,SSL://b:0"})
    b = resolve(
        {
            "listener.security.protocol.map": "HOST:SASL_SSL,LB:SASL_SSL",
            "inter.broker.listener.name": "HOST",
            "listeners": "HOST://localhost:9091,LB://localhost:9092",
            "advertised.listeners": "HOST://localhost:9091,LB://localhost:9091",
        }
    )
    assert [e.port for e in b.advertised_listeners] == [9091, 9091]


def test_control_plane_listener_name():  # testControlPlaneListenerName
    b = resolve(
        {
            "listeners": "PLAINTEXT://localhost:0,CONTROLLER://localhost:5000",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
            "control.plane.listener.name": "CONTROLLER",
        }
    )
    assert b.control_plane_listener == EndPoint("CONTROLLER", "localhost", 5000, "SSL")
    assert strs(b.data_plane_listeners) == ["PLAINTEXT://localhost:0"]
    assert b.advertised("CONTROLLER") is not None and b.inter_broker_listener_name != "CONTROLLER"


def test_lower_case_control_plane_name_quirk():
    """dataPlaneListeners compares the raw value: a lower-case name leaves the listener in the data plane too."""
    b = resolve(
        {
            "listeners": "PLAINTEXT://h:1,CONTROLLER://h:2",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
            "control.plane.listener.name": "controller",
        }
    )
    assert b.control_plane_listener.listener_name == "CONTROLLER"
    assert "CONTROLLER" in [e.listener_name for e in b.data_plane_listeners]


def test_controller_listener_names_dropped_from_advertised_and_data_plane():
    b = resolve(
        {
            "listeners": "PLAINTEXT://h:1,CTL://h:2",
            "controller.listener.names": "CTL",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CTL:PLAINTEXT",
        }
    )
    assert strs(b.advertised_listeners) == ["PLAINTEXT://h:1"] and strs(b.data_plane_listeners) == ["PLAINTEXT://h:1"]


def test_controller_listener_names_split_on_plain_commas_and_not_upper_cased():
    # 2.8: controllerListenerNames = value.split(","), compared with the normalised listener names
    base = {
        "listeners": "PLAINTEXT://h:1,CTL://h:2",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CTL:PLAINTEXT",
    }
    for value in ("ctl", "OTHER, CTL"):  # lower case; " CTL" keeps its space after a plain split
        b = resolve(dict(base, **{"controller.listener.names": value}))
        assert strs(b.advertised_listeners) == strs(b.data_plane_listeners) == ["PLAINTEXT://h:1", "CTL://h:2"]
    b = resolve(dict(base, **{"controller.listener.names": "  CTL  "}))  # ConfigDef trims the whole value
    assert strs(b.advertised_listeners) == ["PLAINTEXT://h:1"]


def test_controller_listener_may_be_advertised_at_another_endpoint():
    # only an advertised endpoint *identical* to a controller listener (name, host, port, protocol) is refused
    b = resolve(
        {
            "listeners": "PLAINTEXT://h:1,CTL://h:2",
            "advertised.listeners": "PLAINTEXT://h:1,CTL://lb:2",
            "controller.listener.names": "CTL",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CTL:PLAINTEXT",
        }
    )
    assert strs(b.advertised_listeners) == ["PLAINTEXT://h:1", "CTL://lb:2"]
    assert strs(b.data_plane_listeners) == ["PLAINTEXT://h:1"]


# ------------------------------------------------------------------------------ every rule, Kafka's message

RULES = [
    (
        {"listeners": "PLAINTEXT://localhost:9091,SSL://localhost:9091"},
        "requirement failed: Each listener must have a different port, listeners: "
        "PLAINTEXT://localhost:9091,SSL://localhost:9091",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listeners": "PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092"},  # 2.8: no IPv4 + IPv6 exception (3.1+ has one)
        "requirement failed: Each listener must have a different port, listeners: "
        "PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listeners": "PLAINTEXT://localhost:9091,PLAINTEXT://localhost:9092"},
        "requirement failed: Each listener must have a different name, listeners: "
        "PLAINTEXT://localhost:9091,PLAINTEXT://localhost:9092",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listeners": "PLAINTEXT://localhost:9091,plaintext://localhost:9092"},
        "requirement failed: Each listener must have a different name, listeners: "
        "PLAINTEXT://localhost:9091,plaintext://localhost:9092",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {
            "listener.security.protocol.map": "HOST:SASL_SSL,LB:SASL_SSL",
            "inter.broker.listener.name": "HOST",
            "listeners": "HOST://localhost:9091,LB://localhost:9092",
            "advertised.listeners": "HOST://localhost:9091,HOST://localhost:9091",
        },
        "requirement failed: Each listener must have a different name, listeners: "
        "HOST://localhost:9091,HOST://localhost:9091",
        "IllegalArgumentException",
        "advertised.listeners",
    ),
    (
        {
            "listeners": "SSL://localhost:9091",
            "inter.broker.listener.name": "SSL",
            "security.inter.broker.protocol": "SSL",
        },
        "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.",
        "ConfigException",
        "inter.broker.listener.name",
    ),
    (
        {
            "listeners": "SSL://localhost:9091",
            "inter.broker.listener.name": "SSL",
            "security.inter.broker.protocol": "PLAINTEXT",
        },  # the default value, but set: still rejected
        "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.",
        "ConfigException",
        "inter.broker.listener.name",
    ),
    (
        {"listeners": "SSL://localhost:9091", "inter.broker.listener.name": "replication"},
        "Listener with name REPLICATION defined in inter.broker.listener.name not found in "
        "listener.security.protocol.map.",
        "ConfigException",
        "inter.broker.listener.name",
    ),
    (
        {"listeners": "SSL://localhost:0", "security.inter.broker.protocol": "PLAINTEXT"},
        "requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. "
        "The valid options based on currently configured listeners are SSL",
        "IllegalArgumentException",
        "security.inter.broker.protocol",
    ),
    (
        {
            "listeners": "TRACE://localhost:9091,SSL://localhost:9093",
            "advertised.listeners": "PLAINTEXT://localhost:9092",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,TRACE:PLAINTEXT,SSL:SSL",
        },
        "requirement failed: advertised.listeners listener names must be equal to or a subset of the ones defined in "
        "listeners. Found PLAINTEXT. The valid options based on the current configuration are TRACE,SSL",
        "IllegalArgumentException",
        "advertised.listeners",
    ),
    (
        {"listeners": "PLAINTEXT://0.0.0.0:9092"},
        "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
        "Use a routable IP address.",
        "IllegalArgumentException",
        "advertised.listeners",
    ),
    (
        {"listeners": "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
        "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
        "Use a routable IP address.",
        "IllegalArgumentException",
        "advertised.listeners",
    ),
    (
        {
            "listeners": "PLAINTEXT://h:1,CTL://h:2",
            "advertised.listeners": "PLAINTEXT://h:1,CTL://h:2",
            "controller.listener.names": "CTL",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CTL:PLAINTEXT",
        },
        "requirement failed: advertised.listeners cannot contain any of controller.listener.names",
        "IllegalArgumentException",
        "advertised.listeners",
    ),
    (
        dict(KIP_AFTER, **{"control.plane.listener.name": "CTRL"}),
        "Listener with CTRL defined in control.plane.listener.name not found in listener.security.protocol.map.",
        "ConfigException",
        "control.plane.listener.name",
    ),
    (
        dict(
            KIP_BEFORE,
            **{
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,EXTERNAL:SSL",
                "control.plane.listener.name": "CONTROLLER",
            },
        ),
        "requirement failed: control.plane.listener.name must be a listener name defined in advertised.listeners. "
        "The valid options based on currently configured listeners are INTERNAL,EXTERNAL",
        "IllegalArgumentException",
        "control.plane.listener.name",
    ),
    (
        dict(KIP_AFTER, **{"control.plane.listener.name": "internal"}),
        "requirement failed: control.plane.listener.name, when defined, should have a different value from the inter "
        "broker listener name. Currently they both have the value ListenerName(INTERNAL)",
        "IllegalArgumentException",
        "control.plane.listener.name",
    ),
    (
        {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,a:FOO,A:SSL"},
        "Invalid security protocol `FOO` defined in listener.security.protocol.map",
        "ConfigException",
        "listener.security.protocol.map",
    ),
    (
        {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,UNUSED:TLS"},
        "Invalid security protocol `TLS` defined in listener.security.protocol.map",
        "ConfigException",
        "listener.security.protocol.map",
    ),
    (
        {"listener.security.protocol.map": "A:SSL,,B:SSL"},
        "Error parsing configuration property 'listener.security.protocol.map': begin 0, end -1, length 0",
        "IllegalArgumentException",
        "listener.security.protocol.map",
    ),
    (
        {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL"},
        "Error parsing configuration property 'listener.security.protocol.map': begin 0, end -1, length 3",
        "IllegalArgumentException",
        "listener.security.protocol.map",
    ),
    (
        {"security.inter.broker.protocol": "TLS"},
        "Invalid security protocol `TLS` defined in security.inter.broker.protocol",
        "ConfigException",
        "security.inter.broker.protocol",
    ),
    (
        {"listeners": "BAD://localhost:9091"},  # testBadListenerProtocol
        "Error creating broker listeners from 'BAD://localhost:9091': No security protocol defined for listener BAD",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listeners": "PLAINTEXT://localhost"},
        "Error creating broker listeners from 'PLAINTEXT://localhost': Unable to parse PLAINTEXT://localhost to a "
        "broker endpoint",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listeners": "PLAINTEXT://h:9092/"},
        "Error creating broker listeners from 'PLAINTEXT://h:9092/': Unable to parse PLAINTEXT://h:9092/ to a "
        "broker endpoint",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listeners": "PLAINTEXT://h:+1"},
        "Error creating broker listeners from 'PLAINTEXT://h:+1': Unable to parse PLAINTEXT://h:+1 to a "
        "broker endpoint",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listeners": "PLAINTEXT://h:99999999999"},
        "Error creating broker listeners from 'PLAINTEXT://h:99999999999': For input string: \"99999999999\"",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listeners": "BAD://h:99999999999"},  # port is converted before the protocol is looked up
        "Error creating broker listeners from 'BAD://h:99999999999': For input string: \"99999999999\"",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"listener.security.protocol.map": "SSL:SSL", "security.inter.broker.protocol": "SSL"},
        "Error creating broker listeners from 'PLAINTEXT://:9092': No security protocol defined for listener PLAINTEXT",
        "IllegalArgumentException",
        "listeners",
    ),
    (
        {"port": "90x2"},
        "Invalid value 90x2 for configuration port: Not a number of type INT",
        "ConfigException",
        "port",
    ),
    (
        {"advertised.port": " x "},
        "Invalid value  x  for configuration advertised.port: Not a number of type INT",
        "ConfigException",
        "advertised.port",
    ),
    (
        {"listeners": "PLAINTEXT://h:1", "advertised.host.name": "bad host"},
        "Error creating broker listeners from 'PLAINTEXT://bad host:9092': Unable to parse PLAINTEXT://bad host:9092 "
        "to a broker endpoint",
        "IllegalArgumentException",
        "advertised.host.name",
    ),
    # KafkaConfig.validateValues' broker.id range (ZooKeeper mode)
    (
        {"broker.id": "1001"},
        "requirement failed: broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id",
        "IllegalArgumentException",
        "broker.id",
    ),
    (
        {"broker.id": -2},  # broker.id has no ConfigDef validator: the require reports -2 too
        "requirement failed: broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id",
        "IllegalArgumentException",
        "broker.id",
    ),
    (
        {"broker.id": "11", "reserved.broker.max.id": "10"},
        "requirement failed: broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id",
        "IllegalArgumentException",
        "broker.id",
    ),
    (
        {"broker.id.generation.enable": "false"},  # the default broker.id, -1, asks for a generated id
        "requirement failed: broker.id must be greater than or equal to 0",
        "IllegalArgumentException",
        "broker.id",
    ),
    (
        {"reserved.broker.max.id": " -1"},
        "Invalid value -1 for configuration reserved.broker.max.id: Value must be at least 0",
        "ConfigException",
        "reserved.broker.max.id",
    ),
    (
        {"broker.id.generation.enable": "yes"},
        "Invalid value yes for configuration broker.id.generation.enable: Expected value to be either true or false",
        "ConfigException",
        "broker.id.generation.enable",
    ),
]


@pytest.mark.parametrize("props,message,java_class,key", RULES, ids=[r[1][:60] for r in RULES])
def test_rule_and_exact_message(props, message, java_class, key):
    e = rejected(props)
    assert str(e) == message
    assert e.kafka_exception == java_class and e.config_key == key
    assert isinstance(e, ValueError)


def test_wrapped_errors_keep_the_inner_class():
    assert rejected({"listeners": "PLAINTEXT://localhost"}).inner_exception == "KafkaException"
    assert rejected({"listeners": "BAD://h:1"}).inner_exception == "IllegalArgumentException"


# ------------------------------------------------------------------------------------- order of checks


def test_advertised_error_before_duplicate_port_in_listeners():
    e = rejected({"listeners": "PLAINTEXT://h:9092,SSL://h:9092", "advertised.listeners": "FOO://h:9092"})
    assert str(e) == (
        "Error creating broker listeners from 'FOO://h:9092': No security protocol defined for listener FOO"
    )


def test_map_error_before_everything():
    e = rejected(
        {
            "listeners": "garbage",
            "advertised.listeners": "garbage",
            "listener.security.protocol.map": "X:Y",
            "inter.broker.listener.name": "nope",
        }
    )
    assert str(e) == "Invalid security protocol `Y` defined in listener.security.protocol.map"


@pytest.mark.parametrize(
    "props",
    [
        {"broker.id": "1000"},
        {"broker.id": "-1"},
        {"broker.id": 0},
        {"broker.id": "5000", "reserved.broker.max.id": "5000"},
        {"broker.id": 2000, "broker.id.generation.enable": " FALSE "},
        {"broker.id": "2000", "broker.id.generation.enable": False},
    ],
)
def test_broker_ids_kafka_starts_with(props):
    """-1 to reserved.broker.max.id (1000 by default), or any id from 0 when ids are not generated."""
    assert resolve(props).broker_id == int(props["broker.id"])


def test_broker_id_range_before_any_listener_and_after_every_parse():
    """validateValues checks broker.id first; ConfigDef has parsed every typed setting before that."""
    e = rejected({"broker.id": "1001", "listeners": "garbage", "listener.security.protocol.map": "X:Y"})
    assert e.config_key == "broker.id" and e.kafka_exception == "IllegalArgumentException"
    assert rejected({"broker.id": "1001", "port": "x"}).config_key == "port"
    assert rejected({"broker.id": "x", "reserved.broker.max.id": "-1"}).config_key == "reserved.broker.max.id"


def test_int_parse_before_map():
    e = rejected({"port": "x", "listener.security.protocol.map": "X:Y"})
    assert e.config_key == "port"


def test_listeners_parsed_before_inter_broker_name():
    e = rejected({"listeners": "PLAINTEXT://h", "inter.broker.listener.name": "NOPE"})
    assert "Unable to parse" in str(e)


def test_inter_broker_config_errors_before_requires():
    e = rejected({"listeners": "PLAINTEXT://0.0.0.0:1", "inter.broker.listener.name": "NOPE"})
    assert str(e).startswith("Listener with name NOPE")


def test_inter_broker_advertised_before_subset():
    e = rejected({"listeners": "PLAINTEXT://h:1", "advertised.listeners": "SSL://h:2"})
    assert str(e).startswith("requirement failed: inter.broker.listener.name must be")


def test_subset_before_zero_address():
    e = rejected({"listeners": "SSL://h:2", "advertised.listeners": "PLAINTEXT://0.0.0.0:1"})
    assert str(e).startswith("requirement failed: advertised.listeners listener names must be")


def test_zero_address_before_control_plane():
    e = rejected({"listeners": "PLAINTEXT://0.0.0.0:1", "control.plane.listener.name": "PLAINTEXT"})
    assert "0.0.0.0" in str(e)


def test_control_plane_map_lookup_before_advertised_check():
    e = rejected({"control.plane.listener.name": "NOWHERE"})
    assert e.kafka_exception == "ConfigException"


# ----------------------------------------------------------------------------------------- small parsers


def test_parse_endpoint_regex_cases():
    assert parse_endpoint("PLAINTEXT://[::1]:9092").host == "::1"
    assert parse_endpoint("PLAINTEXT://::1:9092").host == "::1"
    assert parse_endpoint("PLAINTEXT://h:-1").port == -1
    assert parse_endpoint("PLAINTEXT://:9092") == EndPoint("PLAINTEXT", None, 9092, "PLAINTEXT")
    assert parse_endpoint("A://B://h:1", {"A://B": "SSL"}).listener_name == "A://B"
    assert parse_endpoint("ssl://h:1").connection_string == "SSL://h:1"


def test_parse_csv_map_quirks():
    assert parse_csv_map("a:SSL, A:PLAINTEXT ,a:SASL_SSL") == {"a": "SASL_SSL", "A": "PLAINTEXT"}
    assert parse_csv_map("host:port:SSL") == {"host:port": "SSL"}  # split at the last ':'
    assert parse_csv_map("A:SSL,") == {"A": "SSL"}  # Java drops trailing empty strings
    assert parse_csv_map("") == {}


def test_parse_properties():
    text = "# comment\n! also\n  listeners = PLAINTEXT://h:1  \nport:9093\nhost.name h\nx=a\\\n  b\nx2=\n"
    assert parse_properties(text) == {
        "listeners": "PLAINTEXT://h:1  ",
        "port": "9093",
        "host.name": "h",
        "x": "ab",
        "x2": "",
    }
    assert resolve("listeners=PLAINTEXT://h:1\n").listeners[0].host == "h"


def test_package_docstring_examples():
    import doctest

    import kafka_lab.listeners as pkg
    import kafka_lab.listeners.hints as hints

    assert doctest.testmod(pkg).failed == 0
    assert doctest.testmod(hints).attempted > 0 and doctest.testmod(hints).failed == 0


# A config that breaks each rule, the start of Kafka's message, and what the hint must name (and must not).
_AFTER = kip291_properties_text(kip291_broker(1, "round 2"))
HINT_CASES = [
    # the trial's case: a listener dropped from the map is reported while advertised.listeners is parsed
    (
        _AFTER.replace(",EXTERNAL:SSL", ""),
        "Error creating broker listeners from 'CONTROLLER://",
        ["EXTERNAL has no entry in listener.security.protocol.map", "add EXTERNAL:PLAINTEXT"],
        ["0.0.0.0"],
    ),
    (
        {"listeners": "PLAINTEXT://:9092,INTERNAL://:9093"},
        "Error creating broker listeners from",
        ["INTERNAL has no entry in listener.security.protocol.map"],
        ["advertised"],
    ),
    ({"listeners": "PLAINTEXT//h:9092"}, "Error creating broker listeners", ["not NAME://host:port"], []),
    ({"listeners": "PLAINTEXT://h:90x"}, "Error creating broker listeners", ["not NAME://host:port"], []),
    (
        {"listeners": "PLAINTEXT://h:9092,SSL://h:9092"},
        "requirement failed: Each listener must have a different port",
        ["its own port"],
        [],
    ),
    (
        {"listeners": "PLAINTEXT://h:9092,PLAINTEXT://h:9093"},
        "requirement failed: Each listener must have a different name",
        ["only once"],
        [],
    ),
    ({"listener.security.protocol.map": "PLAINTEXT:FOO"}, "Invalid security protocol `FOO`", ["NAME:PROTOCOL"], []),
    (
        {"security.inter.broker.protocol": "INTERNAL"},
        "Invalid security protocol `INTERNAL`",
        ["inter.broker.listener.name instead"],
        [],
    ),
    (
        {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,,SSL:SSL"},
        "Error parsing configuration property",
        ["lacks its ':'"],
        [],
    ),
    (
        {"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
        "Only one of",
        ["remove security.inter.broker.protocol"],
        [],
    ),
    (
        {"inter.broker.listener.name": "INTERNAL"},
        "Listener with name INTERNAL defined in inter.broker.listener.name",
        ["add INTERNAL:PROTOCOL"],
        [],
    ),
    (
        dict(KIP291_AS_PRINTED),
        "requirement failed: inter.broker.listener.name must be",
        ["PLAINTEXT by default", "INTERNAL,EXTERNAL"],
        ["0.0.0.0"],
    ),
    (
        {
            "listeners": "PLAINTEXT://h:9092",
            "advertised.listeners": "PLAINTEXT://h:9092,SSL://h:9093",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL",
        },
        "requirement failed: advertised.listeners listener names must be",
        ["does not bind"],
        ["0.0.0.0"],
    ),
    (
        {"listeners": "PLAINTEXT://0.0.0.0:9092"},
        "requirement failed: advertised.listeners cannot use",
        ["falls back to listeners"],
        [],
    ),
    (
        {"listeners": "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
        "requirement failed: advertised.listeners cannot use",
        ["publish a host name"],
        ["falls back"],
    ),
    (
        {"control.plane.listener.name": "CONTROLLER"},
        "Listener with CONTROLLER defined in control.plane.listener.name",
        ["add CONTROLLER:PROTOCOL"],
        [],
    ),
    (
        _AFTER.replace("CONTROLLER://broker1.example.com:9091,", ""),
        "requirement failed: control.plane.listener.name must",
        ["add its endpoint", "advertised.listeners"],
        ["0.0.0.0"],
    ),
    (
        _AFTER.replace("control.plane.listener.name=CONTROLLER", "control.plane.listener.name=INTERNAL"),
        "requirement failed: control.plane.listener.name, when defined",
        ["a listener of its own"],
        [],
    ),
    ({"port": "90x"}, "Invalid value 90x for configuration port", ["port is a whole number"], []),
    (
        {"broker.id": "1001"},
        "requirement failed: broker.id must be greater than or equal to -1",
        ["raise reserved.broker.max.id", "1000 unless set"],
        [],
    ),
    (
        {"broker.id.generation.enable": "false"},
        "requirement failed: broker.id must be greater than or equal to 0",
        ["set broker.id to 0 or more"],
        [],
    ),
    (
        {"reserved.broker.max.id": "-5"},
        "Invalid value -5 for configuration reserved.broker.max.id: Value must be at least 0",
        ["reserved.broker.max.id must be at least 0"],
        [],
    ),
    (
        {"broker.id.generation.enable": "on"},
        "Invalid value on for configuration broker.id.generation.enable",
        ["is true or false"],
        [],
    ),
    (
        {
            "listeners": "PLAINTEXT://h:9092",
            "controller.listener.names": "PLAINTEXT",
            "advertised.listeners": "PLAINTEXT://h:9092",
        },
        "requirement failed: advertised.listeners cannot contain",
        ["KRaft"],
        [],
    ),
]


@pytest.mark.parametrize("config, message, says, never", HINT_CASES)
def test_hints_follow_the_cause_kafka_names(config, message, says, never):
    props = parse_properties(config) if isinstance(config, str) else config
    with pytest.raises(ConfigException) as info:
        resolve(props)
    assert str(info.value).startswith(message), str(info.value)
    hint = fix_hint(info.value, props)
    for text in says:
        assert text in hint, (hint, text)
    for text in never:
        assert text not in hint, (hint, text)
    assert not hint.startswith("look at")  # every message the model raises has a hint of its own


def test_the_kip291_configs_have_one_home():
    """listeners/examples.py builds the KIP's broker, lab 03's control-plane broker and the clusters' broker; the
    simulation's shorthands (sim.scenario.kip291_properties, sim.experiments.lab_properties,
    sim.cluster_properties) give exactly its properties (docs/kafka-reference.md §2: control.plane.listener.name
    turns the plane on)."""
    from kafka_lab.listeners import CLIENT_LISTENER, cluster_broker, control_plane_broker, kip291_broker
    from kafka_lab.sim import cluster_properties
    from kafka_lab.sim.experiments import lab_properties
    from kafka_lab.sim.scenario import kip291_properties

    for cp, stage in ((True, "round 2"), (False, "round 1")):
        assert kip291_properties(cp) == kip291_broker(1, stage, **{"broker.id": None})
        assert kip291_properties(cp, **{"num.io.threads": 4}) == kip291_broker(
            1, stage, **{"broker.id": None, "num.io.threads": 4}
        )
        threads = {"num.io.threads": 8, "num.network.threads": 3, "queued.max.requests": 500}
        assert lab_properties(cp) == control_plane_broker(cp, **threads)
        assert cluster_properties(3, control_plane=cp) == cluster_broker(cp, broker_id=3, **threads)
        # the KIP's listener names and roles: INTERNAL between brokers, EXTERNAL for clients, CONTROLLER bound
        res = resolve(cluster_broker(cp))
        assert res.inter_broker_listener_name == "INTERNAL" and res.listener(CLIENT_LISTENER) is not None
        assert res.controller_to_broker_listener_name == ("CONTROLLER" if cp else "INTERNAL")
        assert {e.listener_name for e in res.advertised_listeners} == {"CONTROLLER", "INTERNAL", "EXTERNAL"}
    on, off = resolve(control_plane_broker(True)), resolve(control_plane_broker(False))
    assert on.control_plane_listener.connection_string == "CONTROLLER://:9091" and off.control_plane_listener is None
    assert off.controller_to_broker_listener_name == "PLAINTEXT"
    assert "control.plane.listener.name" not in kip291_broker(1, "round 2", **{"control.plane.listener.name": None})
