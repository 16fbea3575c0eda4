"""What lab 01 prints, asserted with the same calls the notebook makes.

The truths are the KIP-291 page's examples (its configs, JSON payloads and controller endpoints),
Kafka 2.8's messages from docs/kafka-reference.md §2, and the KIP's migration plan.
"""

import json
from html import escape
from pathlib import Path

import pytest

from kafka_lab.exercises import check
from kafka_lab.exercises.lab01 import BROKEN_ROUND_2, SAME_LISTENER_CHOICES, same_listener_outcome
from kafka_lab.listeners import (
    KIP291_AS_PRINTED,
    KIP291_REGISTRATION_AS_PRINTED,
    KIP291_TIMESTAMP_MS,
    PRESETS,
    broker_registration,
    controller_endpoint,
    kip291_broker,
    listener_table,
    migration_steps,
    migration_summary,
    registration_json,
    resolve,
)
from kafka_lab.ui.lab01 import (
    listener_panel,
    migration_html,
    migration_panel,
    render_config,
    show_config,
    show_registrations,
    show_table,
)

LAB = Path(__file__).resolve().parent.parent / "labs" / "01_listeners.ipynb"


def test_lab_makes_these_calls():
    src = "\n".join("".join(c["source"]) for c in json.loads(LAB.read_text())["cells"])
    for call in (
        'kip291_broker(1, "before")',
        "show_table(listener_table(resolve(before)))",
        "show_table(listener_table(resolve({})))",
        "show_config(KIP291_AS_PRINTED)",
        "listener_panel()",
        "broker_registration(resolve(before), timestamp_ms=KIP291_TIMESTAMP_MS)",
        'kip291_broker(1, "round 2")',
        "migration_summary()",
        "migration_panel()",
        "show_config(BROKEN_ROUND_2, hint=False)",
        "SAME_LISTENER_CHOICES",
        "print(registration_json(reg_before))",
        "show_registrations(KIP291_REGISTRATION_AS_PRINTED, reg_before)",
    ):
        assert call in src, call


def test_section1_before_table():
    t = listener_table(resolve(kip291_broker(1, "before")))
    assert t["binds (listeners)"].tolist() == ["INTERNAL://192.1.1.8:9092", "EXTERNAL://10.1.1.5:9093"]
    assert t["publishes (advertised.listeners)"].tolist() == [
        "INTERNAL://broker1.example.com:9092",
        "EXTERNAL://host1.example.com:9093",
    ]
    assert t["security protocol"].tolist() == ["PLAINTEXT", "SSL"]
    assert t["plane"].tolist() == ["data", "data"]
    assert t["used by"].tolist() == ["controller, other brokers", "clients"]


def test_section1_default_table():
    t = listener_table(resolve({}))
    assert t.to_dict("records") == [
        {
            "listener": "PLAINTEXT",
            "security protocol": "PLAINTEXT",
            "binds (listeners)": "PLAINTEXT://:9092",
            "which means": "every interface (empty host), port 9092",
            "publishes (advertised.listeners)": "PLAINTEXT://<host name>:9092",
            "plane": "data",
            "used by": "controller, other brokers, clients",
        }
    ]
    # what is published is what the registration writes: the machine's name in place of the empty host
    reg = broker_registration(resolve({}), timestamp_ms=1, canonical_host_name="box1")
    assert reg["endpoints"] == ["PLAINTEXT://box1:9092"]
    assert listener_table(resolve({}), "box1")["publishes (advertised.listeners)"].tolist() == reg["endpoints"]


def test_section1_tables_are_shown_compactly():
    """The notebook shows listener_table through show_table: every value, no index, "which means" under the bind address."""
    for config in (kip291_broker(1, "before"), {}):
        t = listener_table(resolve(config))
        html = show_table(t).data
        for record in t.to_dict("records"):
            for value in record.values():
                assert escape(str(value), quote=False) in html
        assert "<th></th>" not in html and "which means</span></th>" in html
    html = show_table(listener_table(resolve({}))).data
    assert "PLAINTEXT://:9092<br><span class='kl-means'>every interface (empty host), port 9092</span>" in html


def test_section2_as_printed_error():
    html = show_config(KIP291_AS_PRINTED).data
    assert (
        "requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. "
        "The valid options based on currently configured listeners are INTERNAL,EXTERNAL"
    ) in html
    assert "Traceback" not in html


EXPECTED_PRESETS = {
    "KIP-291 broker1, after (dedicated controller listener)": [
        "CONTROLLER://192.1.1.8:9091",
        "CONTROLLER://broker1.example.com:9091",
        "dedicated control plane on",
    ],
    "KIP-291 broker1, before": ["INTERNAL://broker1.example.com:9092", "share the data plane"],
    "KIP-291 broker1, after round 1 (endpoint added, name not set)": [
        "CONTROLLER://broker1.example.com:9091",
        "connects on <b>INTERNAL</b>",
    ],
    "KIP-291 broker1 as printed (no inter.broker.listener.name)": [
        "The valid options based on currently configured listeners are INTERNAL,EXTERNAL"
    ],
    "Kafka 2.8 defaults (nothing set)": ["PLAINTEXT://:9092", "PLAINTEXT://broker1.example.com:9092"],
    "legacy host.name / advertised.host.name": ["PLAINTEXT://192.1.1.8:9092", "PLAINTEXT://broker1.example.com:9092"],
    "all interfaces, nothing advertised (broken)": [
        "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
        "Use a routable IP address."
    ],
    "IPv6 listeners": ["INTERNAL://[fe80::1%eth0]:9092", "EXTERNAL://[::]:9093", "EXTERNAL://[2001:db8::8]:9093"],
}


@pytest.mark.parametrize("name", list(PRESETS))
def test_panel_presets(name):
    html = render_config(PRESETS[name])
    for text in EXPECTED_PRESETS[name]:
        assert text in html, (name, text)
    assert ("kl-config-error" in html) == ("broken" in name or "as printed" in name)


def test_no_preset_answers_exercise_3():
    """Exercise 3 asks what Kafka does with control.plane.listener.name equal to the inter-broker listener;
    the panel above it must not offer that config ready-made."""
    verdict = "should have a different value from the inter broker listener name"
    assert verdict in check("01.same_listener", "B").message
    for name, text in PRESETS.items():
        assert verdict not in render_config(text), name


def test_panel_reacts_to_the_primary_control():
    panel = listener_panel()
    choose, text, out = panel.children
    assert "kl-primary-control" in choose._dom_classes and "kl-primary-output" in out._dom_classes
    first = out.value
    choose.value = "all interfaces, nothing advertised (broken)"
    assert out.value != first and "nonroutable meta-address 0.0.0.0" in out.value
    text.value = "listeners=PLAINTEXT://h:9092,SSL://h:9092\n"
    assert "Each listener must have a different port, listeners: PLAINTEXT://h:9092,SSL://h:9092" in out.value


def test_section3_registration_json():
    reg = broker_registration(resolve(kip291_broker(1, "before")), timestamp_ms=KIP291_TIMESTAMP_MS)
    # what `get /brokers/ids/1` shows on 2.8: version 5 with features, compact, keys in a 2.8 broker's order
    assert registration_json(reg) == (
        '{"features":{},"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT","EXTERNAL":"SSL"},'
        '"endpoints":["INTERNAL://broker1.example.com:9092","EXTERNAL://host1.example.com:9093"],"jmx_port":-1,'
        '"port":9092,"host":"broker1.example.com","version":5,"timestamp":"1532467569343"}'
    )


def test_section3_the_kips_version_4_beside_it():
    """The prose: endpoints, map, port, jmx_port and timestamp match the KIP's; version, features and host differ."""
    reg = broker_registration(resolve(kip291_broker(1, "before")), timestamp_ms=KIP291_TIMESTAMP_MS)
    kip = KIP291_REGISTRATION_AS_PRINTED
    same = {k for k in kip if kip[k] == reg.get(k)}
    assert same == {"endpoints", "listener_security_protocol_map", "port", "jmx_port", "timestamp"}
    assert (kip["version"], reg["version"]) == (4, 5) and "features" not in kip and reg["features"] == {}
    assert (kip["host"], reg["host"]) == ("host1.example.com", "broker1.example.com")
    # with version=4 (an inter.broker.protocol.version before 2.7) Kafka writes what the KIP shows, host aside
    v4 = broker_registration(resolve(kip291_broker(1, "before")), timestamp_ms=KIP291_TIMESTAMP_MS, version=4)
    assert {k: v for k, v in v4.items() if k != "host"} == {k: v for k, v in kip.items() if k != "host"}
    html = show_registrations(kip, reg).data
    assert "the KIP&#x27;s example (version 4)" in html and "what Kafka 2.8 writes (version 5)" in html


def test_the_port_9091_after_the_change_is_explained():
    """After round 2 the first PLAINTEXT endpoint is CONTROLLER's, so Kafka publishes port 9091 (the KIP shows 9092);
    the panel says where host and port come from, and the lab says why."""
    reg = broker_registration(resolve(kip291_broker(1, "round 2")), timestamp_ms=KIP291_TIMESTAMP_MS)
    assert (reg["host"], reg["port"]) == ("broker1.example.com", 9091)
    html = render_config(PRESETS["KIP-291 broker1, after (dedicated controller listener)"])
    assert "first PLAINTEXT endpoint, CONTROLLER://broker1.example.com:9091" in html.replace("&quot;", '"')
    src = "\n".join("".join(c["source"]) for c in json.loads(LAB.read_text())["cells"])
    assert '`"port": 9091`' in src and '`"port": 9092`' in src


def test_section3_controller_routes():
    before, after = kip291_broker(1, "before"), kip291_broker(1, "round 2")
    printed = []
    for ctl_config in (before, after):
        reg = broker_registration(resolve(ctl_config), timestamp_ms=KIP291_TIMESTAMP_MS)
        r = controller_endpoint(resolve(ctl_config), reg, broker_id=1)
        printed.append((r.connection_string, r.security_protocol, r.dedicated))
    assert printed == [
        ("INTERNAL://broker1.example.com:9092", "PLAINTEXT", False),
        ("CONTROLLER://broker1.example.com:9091", "PLAINTEXT", True),
    ]


def test_section4_migration_summary():
    s = migration_summary()
    assert list(s.index) == list(range(7))
    assert s["controller"].tolist() == [1, 2, 1, 1, 2, 1, 1]
    assert s["restarted"].tolist() == ["-"] + [f"round {r}, broker {b}" for r in (1, 2) for b in (1, 2, 3)]
    brokers = ["broker 1", "broker 2", "broker 3"]
    names = [[s.loc[i, b].split("] ")[1].split(",")[0] for b in brokers] for i in s.index]
    # before and through round 1 the controller uses the inter-broker listener (KIP: "should still behave in
    # the same way"); from the moment the controller runs the round-2 config, it uses CONTROLLER everywhere
    assert names[:5] == [["INTERNAL"] * 3] * 5
    assert names[5:] == [["CONTROLLER"] * 3] * 2
    assert s.loc[4, "broker 1"] == "[+name] INTERNAL, data plane"
    assert s.loc[5, "broker 3"] == "[+endpoint] CONTROLLER, data plane"
    assert s.loc[6].tolist()[2:] == ["[+name] CONTROLLER, control plane"] * 3
    # both sides (docs/kafka-reference.md §2): a broker's control plane is used only when the controller's broker
    # names CONTROLLER too; the lab says so where the table shows it (step 4: broker 1's unused, step 5: broker 3's
    # data plane)
    for step, row in s.iterrows():
        ctl_named = s.loc[step, f"broker {row['controller']}"].startswith("[+name]")
        for b in brokers:
            assert row[b].endswith("control plane") == (ctl_named and row[b].startswith("[+name]")), (step, b)
    cells = json.loads(LAB.read_text())["cells"]
    prose = " ".join(" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    for text in (
        "**Both sides matter.**",
        "only when the controller's broker **and** that broker both set the name",
        "At step 4 broker 1 has a control plane that nobody uses",
        "Both sides need the setting.",
    ):
        assert text in prose, text


def test_section4_skipping_round_one_fails():
    s = migration_summary(one_round=True)
    assert s.loc[2, "broker 3"] == "[before] unreachable: BrokerEndPointNotAvailableException"
    assert s.loc[3, "broker 3"] == "[+name] CONTROLLER, control plane"
    df = migration_steps(one_round=True)
    row = df[(df["step"] == 2) & (df["broker"] == 3)].iloc[0]
    assert row["controller connects to"] == (
        "BrokerEndPointNotAvailableException: End point with listener name CONTROLLER not found for broker 3"
    )


def test_section4_panel_and_steps_agree():
    df = migration_steps()
    assert len(df) == 21 and set(df["step"]) == set(range(7))
    html = migration_html(5)
    assert "Controller: <b>broker 1</b>" in html and "CONTROLLER://broker3.example.com:9091" in html
    panel = migration_panel()
    slider, box = panel.children[0].children
    box.value = True
    assert slider.max == 3
    slider.value = 2
    assert "BrokerEndPointNotAvailableException" in panel.children[1].value


def test_exercise_1_starting_config_error():
    html = show_config(BROKEN_ROUND_2, hint=False).data
    assert (
        "requirement failed: control.plane.listener.name must be a listener name defined in advertised.listeners. "
        "The valid options based on currently configured listeners are INTERNAL,EXTERNAL"
    ) in html
    # the exercise shows Kafka's refusal, not the lab's advice on how to fix it (that is the exercise)
    assert "to advertised.listeners too" in show_config(BROKEN_ROUND_2).data
    assert "to advertised.listeners too" not in html
    assert check("01.fix_config", BROKEN_ROUND_2).status == "incorrect"


def test_exercise_2_truth_is_the_inter_broker_endpoint():
    assert check("01.controller_endpoint", "INTERNAL://broker1.example.com:9092").ok
    assert check("01.controller_endpoint", " internal://broker1.example.com:9092 ").ok


def test_exercise_3_choices_and_truth():
    letter, message = same_listener_outcome()
    assert letter == "B" and set(SAME_LISTENER_CHOICES) == {"A", "B", "C", "D"}
    assert message.endswith("Currently they both have the value ListenerName(INTERNAL)")
    assert check("01.same_listener", message).ok


def test_exercise_4_accepts_other_valid_shapes():
    ok = {"listeners": "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://broker1.example.com:9092"}
    assert check("01.all_interfaces", ok).ok
    named = (
        "listener.security.protocol.map=CLIENT:PLAINTEXT\nlisteners=CLIENT://0.0.0.0:9092\n"
        "advertised.listeners=CLIENT://broker1.example.com:9092\ninter.broker.listener.name=CLIENT\n"
    )
    assert check("01.all_interfaces", named).ok


def test_exercise_4_accepts_every_wildcard_bind():
    # the lab's §1: an empty host binds Java's wildcard address in 2.8, like 0.0.0.0 (and :: for IPv6)
    for host in ("", "[::]"):
        fb = check(
            "01.all_interfaces",
            f"listeners=PLAINTEXT://{host}:9092\nadvertised.listeners=PLAINTEXT://broker1.example.com:9092\n",
        )
        assert fb.ok and "default interface" in fb.message, str(fb)
    legacy = "listeners=PLAINTEXT://0.0.0.0:9092\nadvertised.host.name=broker1.example.com\n"  # advertised.port = port
    assert check("01.all_interfaces", legacy).ok


@pytest.mark.parametrize(
    "ex_id, answer, says",
    [
        (
            "01.fix_config",
            BROKEN_ROUND_2.replace(
                "advertised.listeners=", "advertised.listeners=CONTROLLER://broker1.example.com:9092,"
            ),
            "INTERNAL's socket",
        ),
        (
            "01.fix_config",
            "advertised.listeners=CONTROLLER://broker1.example.com:9091,"
            "INTERNAL://broker1.example.com:9092,EXTERNAL://host1.example.com:9093",
            "only part of a config",
        ),
        ("01.fix_config", {"listeners": 9092}, "must be a string"),
        ("01.controller_endpoint", "INTERNAL", "is a listener name"),
        ("01.controller_endpoint", "INTERNAL://192.1.1.8:9092", "what broker 1 binds"),
        ("01.controller_endpoint", "INTERNAL://broker1.example.com:9093", "not the address broker 1 published"),
        ("01.controller_endpoint", "CONTROLLER://broker1.example.com:9091", "Whose config decides"),
        (
            "01.all_interfaces",
            "listeners=PLAINTEXT://0.0.0.0:9092, advertised.listeners=PLAINTEXT://broker1.example.com:9092",
            "contains another setting",
        ),
        ("01.all_interfaces", "listeners=PLAINTEXT://0.0.0.0:9092\n", "0.0.0.0"),
    ],
)
def test_typical_wrong_answers_get_specific_feedback(ex_id, answer, says):
    fb = check(ex_id, answer)
    assert fb.status == "incorrect" and says in fb.message, str(fb)


@pytest.mark.parametrize("answer", ["b", " B. ", "B)", SAME_LISTENER_CHOICES["B"]])
def test_exercise_3_accepts_the_letter_in_any_usual_form(answer):
    assert check("01.same_listener", answer).ok
    assert not check("01.same_listener", SAME_LISTENER_CHOICES["A"]).ok


def test_plane_sizes_the_lab_states():
    """§1 and the panel: the data plane's queue is queued.max.requests = 500 by default; KIP-291's control plane
    has 1 network thread, a queue of 20 and 1 handler (docs/kafka-reference.md §3: literals in SocketServer/KafkaServer)."""
    from kafka_lab.sim.server.config import (
        CONTROL_PLANE_HANDLERS,
        CONTROL_PLANE_PROCESSORS,
        CONTROL_PLANE_QUEUE_CAPACITY,
        BrokerConfig,
    )

    assert (CONTROL_PLANE_PROCESSORS, CONTROL_PLANE_QUEUE_CAPACITY, CONTROL_PLANE_HANDLERS) == (1, 20, 1)
    defaults = BrokerConfig.from_properties({})
    assert (defaults.queued_max_requests, defaults.num_io_threads, defaults.num_network_threads) == (500, 8, 3)
    src = "\n".join("".join(c["source"]) for c in json.loads(LAB.read_text())["cells"])
    assert "`queued.max.requests`, 500 by default" in src
    assert "one network thread, a request queue of 20, one request-handler thread" in src
    assert "1 thread, queue of 20" in render_config(PRESETS["KIP-291 broker1, after (dedicated controller listener)"])


def test_exercise_4_zero_address_hint_depends_on_what_was_written():
    unset = check("01.all_interfaces", "listeners=PLAINTEXT://0.0.0.0:9092\n")
    assert "falls back to listeners" in unset.hint
    explicit = check(
        "01.all_interfaces", "listeners=PLAINTEXT://0.0.0.0:9092\nadvertised.listeners=PLAINTEXT://0.0.0.0:9092\n"
    )
    assert "not 0.0.0.0" in explicit.hint and "falls back" not in explicit.hint


def test_the_panel_hints_at_the_cause_not_at_the_setting_reported():
    """The trial: dropping EXTERNAL from the map of the 'after' preset got a hint about 0.0.0.0 (the error is
    reported while advertised.listeners is parsed). The hint now names the missing map entry."""
    text = PRESETS["KIP-291 broker1, after (dedicated controller listener)"].replace(",EXTERNAL:SSL", "")
    html = render_config(text)
    assert "No security protocol defined for listener EXTERNAL" in html
    assert "EXTERNAL has no entry in listener.security.protocol.map" in html and "0.0.0.0" not in html
