"""Lab 01's guided exercises: listeners, advertised listeners and the controller's endpoint.

Every check resolves the learner's answer with :mod:`kafka_lab.listeners` (Kafka 2.8's rules and
messages), so the feedback is what Kafka itself would say.
"""

from __future__ import annotations

from kafka_lab.exercises import correct, exercise, incorrect
from kafka_lab.exercises.answers import Choices, choice
from kafka_lab.listeners import (
    KIP291_TIMESTAMP_MS,
    LISTENER_KEYS,
    SECURITY_PROTOCOLS,
    ConfigException,
    EndPoint,
    broker_registration,
    controller_endpoint,
    fix_hint,
    kip291_broker,
    kip291_properties_text,
    parse_endpoint,
    parse_properties,
    resolve,
)

__all__ = ["BROKEN_ROUND_2", "SAME_LISTENER_CHOICES", "same_listener_outcome"]


def _props(answer):
    """The answer as properties: a dict, or server.properties text. None when it is neither."""
    if isinstance(answer, dict) and all(isinstance(k, str) for k in answer):
        return answer
    if isinstance(answer, str):
        return parse_properties(answer)
    return None


_NOT_PROPS = (
    "answer with the broker's properties, as text (one key=value per line, in triple quotes) or as a dict of strings."
)


def _resolved(answer, refused: str, whole_config: bool = False):
    """The two "write a config" checks start alike: ``(broker, None)``, or ``(None, verdict)`` when
    the answer is not a config or Kafka refuses it (``refused`` opens the message). ``whole_config``:
    an answer that only repeats advertised.listeners is a fragment, not the fixed config."""
    props = _props(answer)
    if props is None:
        return None, incorrect(f"{type(answer).__name__} is not a broker config.", hint=_NOT_PROPS)
    if whole_config and "listeners" not in props and "advertised.listeners" in props and len(props) <= 2:
        return None, incorrect(
            "that is only part of a config: Kafka reads the whole file, and without "
            "listeners it binds PLAINTEXT://:9092 only.",
            hint="start from the whole config and change what needs changing.",
        )
    glued = next(
        (k for k, v in props.items() if isinstance(v, str) and any(f"{key}=" in v for key in LISTENER_KEYS)), None
    )
    if glued is not None:
        return None, incorrect(
            f"the value of {glued} contains another setting ({props[glued]!r}).",
            hint="put each key=value on a line of its own (a comma separates a list's entries).",
        )
    try:
        return resolve(props), None
    except ConfigException as exc:
        return None, incorrect(f"{refused}: {exc}", hint=fix_hint(exc, props))
    except TypeError as exc:  # e.g. {"listeners": 9092}: Kafka's settings are text
        return None, incorrect(f"{exc}.", hint=_NOT_PROPS)


# ------------------------------------------------------------------------------------ 1. fix the config

_round2 = kip291_broker(1, "round 2")
#: broker1's round-2 config with CONTROLLER forgotten in advertised.listeners (the KIP's "if the
#: advertised.listeners config is explicitly configured ... should also be added")
BROKEN_ROUND_2 = kip291_properties_text(
    {**_round2, "advertised.listeners": "INTERNAL://broker1.example.com:9092,EXTERNAL://host1.example.com:9093"}
)
_FIXED_ROUND_2 = kip291_properties_text(_round2)
_NO_CONTROL_PLANE = kip291_properties_text(
    {k: v for k, v in _round2.items() if k != "control.plane.listener.name"}
    | {"advertised.listeners": "INTERNAL://broker1.example.com:9092,EXTERNAL://host1.example.com:9093"}
)


#: "fixed" by deleting advertised.listeners: valid, but every listener now publishes its bind address
_NO_ADVERTISED = BROKEN_ROUND_2.replace("advertised.listeners=", "# advertised.listeners=")


#: CONTROLLER published at INTERNAL's port: Kafka accepts it (advertised ports may repeat), the controller would not
_WRONG_PORT = _FIXED_ROUND_2.replace("CONTROLLER://broker1.example.com:9091", "CONTROLLER://broker1.example.com:9092")
#: only the line that was changed, not the whole config
_ONLY_THE_LINE = next(line for line in _FIXED_ROUND_2.splitlines() if line.startswith("advertised.listeners="))


@exercise(
    "01.fix_config",
    solution=_FIXED_ROUND_2,
    wrong=[BROKEN_ROUND_2, _NO_CONTROL_PLANE, _NO_ADVERTISED, _WRONG_PORT, _ONLY_THE_LINE],
    prompt="Broker 1's round-2 config (BROKEN_ROUND_2) is rejected by Kafka. Fix it so that Kafka accepts it "
    "and the broker keeps its dedicated control plane on CONTROLLER.",
    explanation="advertised.listeners is set explicitly, so the KIP's round 1 must add the CONTROLLER "
    "endpoint there too: CONTROLLER://broker1.example.com:9091.",
)
def _(answer):
    broker, verdict = _resolved(answer, "Kafka still refuses to start", whole_config=True)
    if verdict is not None:
        return verdict
    if broker.control_plane_listener is None:
        return incorrect(
            "Kafka accepts this, but the broker has no dedicated control plane any more: controller "
            "requests queue behind client traffic again.",
            hint="keep control.plane.listener.name=CONTROLLER and make the CONTROLLER listener valid.",
        )
    cp, published = broker.control_plane_listener, broker.advertised(broker.control_plane_listener_name)
    other = next((e for e in broker.listeners if e.port == published.port and e != cp), None)
    if other is not None:
        return incorrect(
            f"Kafka accepts this, but broker 1 publishes {published.connection_string} for the controller, "
            f"and port {published.port} is {other.listener_name}'s socket: controller requests would "
            "arrive on the data plane after all.",
            hint=f"publish CONTROLLER at the port it binds ({cp.port}).",
        )
    for ep in resolve(kip291_broker(1, "before")).advertised_listeners:
        now = broker.advertised(ep.listener_name)
        if now != ep:
            got = now.connection_string if now else "nothing"
            return incorrect(
                f"Kafka accepts this, but broker 1 now publishes {got} for {ep.listener_name} instead of "
                f"{ep.connection_string}: whoever used that address can no longer find the broker.",
                hint="keep the INTERNAL and EXTERNAL entries of advertised.listeners as they were; "
                "only add what the control plane needs.",
            )
    return correct(
        f"Kafka binds the control plane on {broker.control_plane_listener.connection_string} and publishes "
        f"{broker.advertised(broker.control_plane_listener_name).connection_string} for the controller: "
        "a control.plane.listener.name must be in advertised.listeners, not just in listeners."
    )


# ------------------------------------------------------------------------------ 2. the controller's endpoint


def _mid_round_2_route():
    """Round 2 half done: broker 1 restarted with control.plane.listener.name, broker 2 (the controller) not yet."""
    controller = resolve(kip291_broker(2, "round 1"))
    broker1 = resolve(kip291_broker(1, "round 2"))
    return controller_endpoint(controller, broker_registration(broker1, timestamp_ms=KIP291_TIMESTAMP_MS), 1), broker1


@exercise(
    "01.controller_endpoint",
    solution="INTERNAL://broker1.example.com:9092",
    wrong=[
        "CONTROLLER://broker1.example.com:9091",
        "CONTROLLER://192.1.1.8:9091",
        "INTERNAL://192.1.1.8:9092",
        "EXTERNAL://host1.example.com:9093",
        "broker1.example.com:9092",
        "INTERNAL",
        "INTERNAL://broker1.example.com",
        "PLAINTEXT://broker1.example.com:9092",
    ],
    prompt="Mid round 2: broker 1 has restarted with control.plane.listener.name=CONTROLLER; broker 2, the "
    "controller, still runs its round-1 config. Which endpoint does the controller use to reach broker 1?",
    explanation="The controller picks the listener name from its own config: round 1 has no "
    "control.plane.listener.name, so it uses the inter-broker listener INTERNAL, at the address "
    "broker 1 published.",
)
def _(answer):
    route, broker1 = _mid_round_2_route()
    if isinstance(answer, EndPoint):
        answer = answer.connection_string
    if not isinstance(answer, str):
        return incorrect(
            f"{type(answer).__name__} is not an endpoint.", hint="answer with a string like 'NAME://host:port'."
        )
    names = {e.listener_name for e in broker1.advertised_listeners}
    if answer.strip().upper() in names:
        return incorrect(
            f"{answer.strip()} is a listener name; the exercise asks for the whole endpoint.",
            hint='write it as NAME://host:port, as in broker 1\'s registration ("endpoints").',
        )
    if "://" not in answer:
        return incorrect(
            "an endpoint starts with its listener name: the name is how the controller chooses.",
            hint='write it as NAME://host:port, as in the registration\'s "endpoints".',
        )
    name = answer.strip().split("://", 1)[0].upper()
    if name not in names and name in {p.upper() for p in SECURITY_PROTOCOLS}:
        return incorrect(
            f"{name} is a security protocol, and no listener of broker 1 is called {name}: the controller "
            "picks a listener by its *name*.",
            hint=f"broker 1's listener names are {', '.join(sorted(names))}; which one does the controller's "
            "config name?",
        )
    try:
        ep = parse_endpoint(answer.strip(), broker1.listener_security_protocol_map)
    except ConfigException as exc:
        return incorrect(f"that is not an endpoint of broker 1 ({exc}).", hint="write it as NAME://host:port.")
    truth = route.endpoint
    if ep == truth:
        return correct(
            f"{truth.connection_string}: the controller (broker 2) has no control.plane.listener.name yet, "
            f"so it uses its inter-broker listener {route.listener_name} -- at the address broker 1 "
            "published in ZooKeeper. Broker 1 serves it on its data plane until the controller changes."
        )
    if ep.listener_name == truth.listener_name:
        bound = broker1.listener(ep.listener_name)
        what = (
            "is what broker 1 binds, not what it publishes"
            if ep == bound
            else "is not the address broker 1 published for that listener"
        )
        return incorrect(
            f"right listener, wrong address: {ep.connection_string} {what}.",
            hint="the controller only knows broker 1's registration in ZooKeeper (advertised.listeners).",
        )
    if ep.listener_name == broker1.control_plane_listener_name:
        return incorrect(
            "CONTROLLER is what a controller *with* control.plane.listener.name would use. Whose config decides?",
            hint="the controller (broker 2) applies its own config to every broker's "
            "registration, and broker 2 has not restarted in round 2 yet.",
        )
    return incorrect(
        f"{ep.listener_name} is for clients, not for brokers or the controller.",
        hint="without control.plane.listener.name, the controller uses the inter-broker listener.",
    )


# ---------------------------------------------------------------------- 3. control plane = inter-broker listener

SAME_LISTENER_CHOICES = Choices(
    {
        "A": "The broker starts; controller requests simply share the INTERNAL listener's data-plane queue.",
        "B": "The broker refuses to start: control.plane.listener.name must differ from the inter-broker listener.",
        "C": "The broker starts, but the controller cannot connect (BrokerEndPointNotAvailableException).",
        "D": "The broker starts and ignores control.plane.listener.name.",
    }
)
_SAME = kip291_broker(1, "round 2") | {"control.plane.listener.name": "INTERNAL"}


def same_listener_outcome() -> tuple[str, str]:
    """Resolve broker1 with control.plane.listener.name=INTERNAL (= inter.broker.listener.name): (choice, message)."""
    try:
        broker = resolve(_SAME)
    except ConfigException as exc:
        return ("B", str(exc)) if exc.config_key == "control.plane.listener.name" else ("?", str(exc))
    return ("A", "") if broker.control_plane_listener is None else ("D", "")


@exercise(
    "01.same_listener",
    solution="B",
    wrong=["A", "C", "D", "E", "c)", 2, SAME_LISTENER_CHOICES["A"]],
    prompt="What happens if broker 1 sets control.plane.listener.name=INTERNAL while inter.broker.listener.name "
    "is INTERNAL too? Answer with a letter of SAME_LISTENER_CHOICES (or Kafka's exact message).",
    explanation="KafkaConfig requires the two names to differ, at start-up: the point of the control plane is "
    "a listener that no other traffic uses.",
)
def _(answer):
    letter, message = same_listener_outcome()
    if not isinstance(answer, str):
        return incorrect(f"{type(answer).__name__} is not a letter.", hint="answer with 'A', 'B', 'C' or 'D'.")
    a = choice(answer, SAME_LISTENER_CHOICES) or answer.strip()  # a letter, or a choice's text, or Kafka's message
    if a in (message, letter):
        return correct(
            f"Kafka refuses to start with: {message}. A dedicated plane needs a listener of its own; "
            "validation catches it before any socket is bound."
        )
    feedback = {
        "A": "that would be the case *without* control.plane.listener.name; with it, Kafka checks the value first.",
        "C": "the controller never gets that far: the broker itself does not start.",
        "D": "Kafka does not ignore a setting it validates.",
    }
    if a in feedback:
        return incorrect(
            feedback[a],
            hint="set the preset 'control plane on the inter-broker listener' in "
            "the panel above and read Kafka's message.",
        )
    return incorrect(f"{a!r} is not one of the choices.", hint="answer with 'A', 'B', 'C' or 'D'.")


# --------------------------------------------------------------------------------- 4. bind all interfaces

#: hosts whose bind is every interface (see kafka_lab.listeners.bind_description): empty, 0.0.0.0, ::
_WILDCARD_HOSTS = (None, "0.0.0.0", "::")
_ALL_IFACES = (
    "broker.id=1\nlisteners=PLAINTEXT://0.0.0.0:9092\nadvertised.listeners=PLAINTEXT://broker1.example.com:9092\n"
)


@exercise(
    "01.all_interfaces",
    solution=_ALL_IFACES,
    wrong=[
        "broker.id=1\nlisteners=PLAINTEXT://0.0.0.0:9092\n",
        "broker.id=1\nlisteners=PLAINTEXT://broker1.example.com:9092\n",
        "broker.id=1\nlisteners=PLAINTEXT://0.0.0.0:9092\nadvertised.listeners=PLAINTEXT://0.0.0.0:9092\n",
        "broker.id=1\nlisteners=PLAINTEXT://0.0.0.0:9092\nadvertised.listeners=PLAINTEXT://broker1.example.com:9093\n",
        "listeners=PLAINTEXT://0.0.0.0:9092, advertised.listeners=PLAINTEXT://broker1.example.com:9092",
    ],
    prompt="Write a config for broker 1 that binds PLAINTEXT on port 9092 on all interfaces and that clients "
    "reach as broker1.example.com:9092.",
    explanation="listeners=PLAINTEXT://0.0.0.0:9092 binds every interface; since advertised.listeners would "
    "otherwise inherit 0.0.0.0, set advertised.listeners=PLAINTEXT://broker1.example.com:9092.",
)
def _(answer):
    broker, verdict = _resolved(answer, "Kafka refuses to start")
    if verdict is not None:
        return verdict
    binds = [e for e in broker.listeners if e.host in _WILDCARD_HOSTS and e.port == 9092]
    if not binds:
        return incorrect(
            "Kafka accepts it, but no listener binds every interface on port 9092.",
            hint="the host in listeners is where the broker binds; 0.0.0.0 means every interface.",
        )
    published = broker.advertised(binds[0].listener_name)
    if published is None or (published.host, published.port) != ("broker1.example.com", 9092):
        got = published.connection_string if published else "nothing"
        return incorrect(
            f"the broker publishes {got} for that listener, so clients would not use broker1.example.com:9092.",
            hint="advertised.listeners is what clients are told.",
        )
    note = (
        ""
        if binds[0].host == "0.0.0.0"
        else " (An empty host or :: binds every interface in Kafka 2.8's code too, though the docs promise only "
        "'the default interface' for an empty host; 0.0.0.0 says what you mean.)"
    )
    return correct(
        f"binds {binds[0].connection_string}, publishes {published.connection_string}: listeners is where "
        "the broker listens, advertised.listeners what everyone else is told -- and 0.0.0.0 is only "
        "meaningful for the first." + note
    )
