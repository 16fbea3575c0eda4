"""``generate-logs --mode kraft``: a Kafka 4.0 KRaft cluster's logs, checked against 4.0's source and the model's run.

Each template is checked against the text of Kafka 4.0's source (apache/kafka trunk of the 4.0 development, the
file named beside each case; docs/kafka-reference.md §8.10). The written directories are read back with the
reference parser (:mod:`kafka_lab.logs.parse`) and compared with the ground truth, which the generator computes from
the simulation's records, not from the lines.
"""

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kafka_lab.logs import kraft as K
from kafka_lab.logs import kraft_messages as k
from kafka_lab.logs.parse import Parsed, parse_lines
from kafka_lab.logs.scenario import generate

ROOT = Path(__file__).resolve().parent.parent
QC = "org.apache.kafka.controller.QuorumController"
RCM = "org.apache.kafka.controller.ReplicationControlManager"
CCM = "org.apache.kafka.controller.ClusterControlManager"
BHM = "org.apache.kafka.controller.BrokerHeartbeatManager"
RAFT = "org.apache.kafka.raft.KafkaRaftClient"
BLM = "kafka.server.BrokerLifecycleManager"
BMP = "kafka.server.metadata.BrokerMetadataPublisher"
SC = "state.change.logger"
_CTRL = "metadata/src/main/java/org/apache/kafka/controller/"

#: (4.0 source file, the message as 4.0 writes it with these arguments, the call, level, logger). The message
#: text is the source's format string with its arguments put in, and the LogContext prefix of the class.
TEMPLATES = [
    (
        _CTRL + "QuorumController.java",  # log.info("Becoming the active controller at epoch {}, next write offset {}."
        "[QuorumController id=3001] Becoming the active controller at epoch 3, next write offset 244.",
        k.becoming_active(3001, 3, 244),
        "INFO",
        QC,
    ),
    (
        _CTRL + "QuorumController.java",  # log.info("In the new epoch {}, the leader is {}.", ..., newLeaderName)
        "[QuorumController id=3002] In the new epoch 3, the leader is 3001.",
        k.new_epoch_leader(3002, 3, 3001),
        "INFO",
        QC,
    ),
    (
        _CTRL + "QuorumController.java",  # newLeaderName: "(none)" when leaderId() is empty
        "[QuorumController id=3002] In the new epoch 2, the leader is (none).",
        k.new_epoch_leader(3002, 2, None),
        "INFO",
        QC,
    ),
    (
        _CTRL + "QuorumController.java",  # log.warn("Renouncing the leadership due to a metadata log event. " + ...
        "[QuorumController id=3000] Renouncing the leadership due to a metadata log event. We were the leader at "
        "epoch 1, but in the new epoch 2, the leader is 3001. Reverting to last stable offset 47.",
        k.renouncing(3000, 1, 2, 3001, 47),
        "WARN",
        QC,
    ),
    (
        _CTRL + "ReplicationControlManager.java",  # log.info("Fencing broker {} because its session has timed out."
        "[QuorumController id=3000] Fencing broker 3 because its session has timed out.",
        k.fencing_broker(3000, 3),
        "INFO",
        RCM,
    ),
    (
        _CTRL + "ReplicationControlManager.java",  # log.info("{}: changing {} partition(s)", context, ...)
        "[QuorumController id=3000] handleBrokerFenced: changing 6 partition(s)",
        k.changing_partitions(3000, "handleBrokerFenced", 6),
        "INFO",
        RCM,
    ),
    (
        _CTRL + "ReplicationControlManager.java",  # generateLeaderAndIsrUpdates("enterControlledShutdown[" + id + "]"
        "[QuorumController id=3000] enterControlledShutdown[2]: changing 4 partition(s)",
        k.changing_partitions(3000, "enterControlledShutdown[2]", 4),
        "INFO",
        RCM,
    ),
    (
        _CTRL + "BrokerHeartbeatManager.java",  # log.info("The request from broker {} to unfence has been granted " +
        "[QuorumController id=3000] The request from broker 1 to unfence has been granted because it has caught up "
        "with the offset of its register broker record 61.",
        k.unfence_granted(3000, 1, 61),
        "INFO",
        BHM,
    ),
    (
        _CTRL + "BrokerHeartbeatManager.java",  # log.info("Unfenced broker {} has requested and been granted a " +
        "[QuorumController id=3000] Unfenced broker 2 has requested and been granted a controlled shutdown.",
        k.controlled_shutdown_granted(3000, 2),
        "INFO",
        BHM,
    ),
    (
        _CTRL + "BrokerHeartbeatManager.java",  # log.info("The request from broker {} to shut down has been granted "
        "[QuorumController id=3000] The request from broker 2 to shut down has been granted since the lowest active "
        "offset 93 is now greater than the broker's controlled shutdown offset 92.",
        k.shutdown_granted(3000, 2, 93, 92),
        "INFO",
        BHM,
    ),
    (
        _CTRL + "ClusterControlManager.java",  # log.info("Registering a new incarnation of broker {}. Previous " + ...
        "[QuorumController id=3000] Registering a new incarnation of broker 3. Previous incarnation ID was "
        "eCnSFBSdTIe3KrsYhyV9Hg; new incarnation ID is T5LpGgZuRIyDmS_33pR3Qw. Generated 0 record(s) to clean up "
        "previous incarnations. Broker epoch will become 215.",
        k.registering_new_incarnation(3000, 3, "eCnSFBSdTIe3KrsYhyV9Hg", "T5LpGgZuRIyDmS_33pR3Qw", 0, 215),
        "INFO",
        CCM,
    ),
    (
        "raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java",  # logger.info("Become candidate due to ...
        "[RaftManager id=3001] Become candidate due to fetch timeout",
        k.become_candidate_fetch_timeout(3001),
        "INFO",
        RAFT,
    ),
    (
        "raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java",  # "Election has timed out, backing off for
        "[RaftManager id=3001] Election has timed out, backing off for 100ms before becoming a candidate again",
        k.election_timed_out(3001, 100.0),
        "INFO",
        RAFT,
    ),
    (
        "raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java",  # "Re-elect as candidate after election
        "[RaftManager id=3001] Re-elect as candidate after election backoff has completed",
        k.reelect_after_backoff(3001),
        "INFO",
        RAFT,
    ),
    (
        "raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java",  # "Insufficient remaining votes to become
        "[RaftManager id=3002] Insufficient remaining votes to become leader (rejected by [3000, 3001]). We will "
        "backoff before retrying election again",
        k.insufficient_votes(3002, [3001, 3000]),
        "INFO",
        RAFT,
    ),
    (
        "raft/src/main/java/org/apache/kafka/raft/KafkaRaftClient.java",  # "Truncated to offset {} from Fetch
        "[RaftManager id=3001] Truncated to offset 48 from Fetch response from leader 3002",
        k.raft_truncated(3001, 48, 3002),
        "INFO",
        RAFT,
    ),
    (
        "core/src/main/scala/kafka/server/BrokerLifecycleManager.scala",  # s"Successfully registered broker $nodeId
        "[BrokerLifecycleManager id=2] Successfully registered broker 2 with broker epoch 36",
        k.registered(2, 36),
        "INFO",
        BLM,
    ),
    (
        "core/src/main/scala/kafka/server/BrokerLifecycleManager.scala",
        "[BrokerLifecycleManager id=2] The broker has caught up. Transitioning from STARTING to RECOVERY.",
        k.caught_up(2),
        "INFO",
        BLM,
    ),
    (
        "core/src/main/scala/kafka/server/BrokerLifecycleManager.scala",
        "[BrokerLifecycleManager id=2] The broker has been unfenced. Transitioning from RECOVERY to RUNNING.",
        k.unfenced(2),
        "INFO",
        BLM,
    ),
    (
        "core/src/main/scala/kafka/server/BrokerLifecycleManager.scala",
        "[BrokerLifecycleManager id=2] Beginning controlled shutdown.",
        k.beginning_controlled_shutdown(2),
        "INFO",
        BLM,
    ),
    (
        "core/src/main/scala/kafka/server/BrokerLifecycleManager.scala",  # s"Skipping controlled shutdown because
        "[BrokerLifecycleManager id=2] Skipping controlled shutdown because we are in state RECOVERY.",
        k.skipping_controlled_shutdown(2, "RECOVERY"),
        "INFO",
        BLM,
    ),
    (
        "core/src/main/scala/kafka/server/BrokerLifecycleManager.scala",
        "[BrokerLifecycleManager id=2] The controller has asked us to exit controlled shutdown.",
        k.exit_controlled_shutdown(2),
        "INFO",
        BLM,
    ),
    (
        "core/src/main/scala/kafka/server/BrokerLifecycleManager.scala",  # ShutdownEvent: s"Transitioning from
        "[BrokerLifecycleManager id=2] Transitioning from PENDING_CONTROLLED_SHUTDOWN to SHUTTING_DOWN.",
        k.transitioning_to_shutting_down(2, "PENDING_CONTROLLED_SHUTDOWN"),
        "INFO",
        BLM,
    ),
    (
        "core/src/main/scala/kafka/server/metadata/BrokerMetadataPublisher.scala",  # + OffsetAndEpoch.toString
        "[BrokerMetadataPublisher id=3] Publishing initial metadata at offset OffsetAndEpoch(offset=151, epoch=1) "
        "with metadata.version 4.0-IV0.",
        k.publishing_initial_metadata(3, 151, 1),
        "INFO",
        BMP,
    ),
    (
        "core/src/main/scala/kafka/server/ReplicaManager.scala",  # applyLocalLeadersDelta (StateChangeLogger prefix)
        "[Broker id=1] Transitioning 4 partition(s) to local leaders.",
        k.transitioning_local(1, 4, True),
        "INFO",
        SC,
    ),
    (
        "core/src/main/scala/kafka/server/ReplicaManager.scala",  # applyLocalFollowersDelta
        "[Broker id=1] Transitioning 2 partition(s) to local followers.",
        k.transitioning_local(1, 2, False),
        "INFO",
        SC,
    ),
    (
        "core/src/main/scala/kafka/server/ReplicaManager.scala",
        "[Broker id=1] Stopped fetchers as part of become-follower for 2 partitions",
        k.fetchers_become_follower(1, 2, False),
        "INFO",
        SC,
    ),
    (
        "core/src/main/scala/kafka/server/ReplicaManager.scala",
        "[Broker id=1] Started fetchers as part of become-follower for 2 partitions",
        k.fetchers_become_follower(1, 2, True),
        "INFO",
        SC,
    ),
    (
        "core/src/main/scala/kafka/server/ReplicaManager.scala",
        "[Broker id=1] Stopped fetchers as part of controlled shutdown for 6 partitions",
        k.stopped_fetchers_controlled_shutdown(1, 6),
        "INFO",
        SC,
    ),
]


@pytest.mark.parametrize("source, want, got, level, logger", TEMPLATES, ids=[t[1][:60] for t in TEMPLATES])
def test_each_template_is_kafka_40s(source, want, got, level, logger):
    assert got == (level, logger, want), source


def test_java_and_kafka_formats():
    """A ``HashSet<Integer>`` prints in bucket order (an Integer's hash is itself, 16 buckets): 3016 (bucket 8)
    before 3001 (bucket 9); ``Uuid.toString`` is URL-safe base64 without padding; no active broker is
    ``Long.MAX_VALUE``."""
    assert k.java_int_set([3001, 3016]) == "[3016, 3001]"
    assert k.java_int_set([3002, 3000]) == "[3000, 3002]"
    assert k.kafka_uuid("00000000-0000-0000-0000-000000000000") == "AAAAAAAAAAAAAAAAAAAAAA"
    assert k.kafka_uuid("ffffffff-ffff-ffff-ffff-ffffffffffff") == "_" * 21 + "w"  # "/...w==", URL-safe, unpadded
    assert len(k.kafka_uuid("bootstrap-incarnation-1")) == 22
    assert k.LONG_MAX == 2**63 - 1


@pytest.fixture(scope="module")
def kraft_logs(tmp_path_factory):
    """3 brokers, seed 0, the whole timeline (an hour is longer)."""
    root = tmp_path_factory.mktemp("kraft")
    generate(root, hours=1.0, brokers=3, seed=0, mode="kraft")
    return root


def _truth(root):
    return json.loads((root / "ground-truth.json").read_text())


def _parse(root) -> dict:
    """``{file relative to root: Parsed}``."""
    out = {}
    for f in sorted(root.glob("*-*/*.log*")):
        rel = str(f.relative_to(root))
        with open(f, encoding="utf-8") as fh:
            out[rel] = parse_lines(fh, rel, Parsed())
    return out


def _records(root):
    return [r for p in _parse(root).values() for r in p.records]


def test_one_directory_per_node_with_4_0s_files(kraft_logs):
    """log4j2.yaml's appenders (each file created at start): the same four on brokers and controller nodes; the
    controllers' own directories, ids 3000 and up; no request line (see the module); lines agree with the truth."""
    truth = _truth(kraft_logs)
    dirs = sorted(p.name for p in kraft_logs.iterdir() if p.is_dir())
    assert dirs == ["broker-1", "broker-2", "broker-3", "controller-3000", "controller-3001", "controller-3002"]
    assert truth["mode"] == "kraft" and truth["controllers"] == [3000, 3001, 3002]
    for d in dirs:
        names = {p.name for p in (kraft_logs / d).iterdir()}
        assert names == {"server.log", "state-change.log", "kafka-request.log", "controller.log"}
        assert (kraft_logs / d / "kafka-request.log").read_text() == ""
    parsed = _parse(kraft_logs)
    assert {f: p.lines_read for f, p in parsed.items()} == truth["files"]
    assert sum(len(p.records) for p in parsed.values()) == truth["lines"]["records"] == truth["lines"]["lines_read"]
    assert not any(p.rejected for p in parsed.values())


def test_each_logger_goes_to_the_file_4_0s_log4j2_yaml_names(kraft_logs):
    """``org.apache.kafka.controller`` to controller.log, ``state.change.logger`` to state-change.log, the rest to
    server.log; the quorum controller's lines on controller nodes only, a broker's lifecycle and state changes on
    brokers only; no ZooKeeper-mode logger anywhere."""
    by = Counter()
    for r in _records(kraft_logs):
        node, log = r.file.split("/")
        kind = node.split("-")[0]
        want = (
            "controller.log"
            if r.logger.startswith("org.apache.kafka.controller.")
            else "state-change.log"
            if r.logger == "state.change.logger"
            else "server.log"
        )
        assert log == want, (r.file, r.logger)
        by[(kind, r.logger)] += 1
        assert not r.logger.startswith(("kafka.controller", "kafka.zk", "kafka.zookeeper", "org.apache.zookeeper"))
        assert r.logger != "kafka.server.KafkaServer"
    controller_side = {QC, RCM, CCM, BHM}
    assert {lg for (kind, lg) in by if kind == "broker"} & controller_side == set()
    assert {lg for (kind, lg) in by if kind == "controller"} & {BLM, BMP, SC} == set()
    assert {lg for (_k, lg) in by} == {QC, RCM, CCM, BHM, RAFT, BLM, BMP, SC}


def _lines(root, pattern, dirs="*-*"):
    rx = re.compile(pattern)
    out = []
    for f in sorted(root.glob(f"{dirs}/*.log")):
        for line in f.read_text().splitlines():
            if rx.search(line):
                out.append((f.parent.name, line))
    return out


def _ms(line, start):
    import datetime as _dt

    t = _dt.datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=_dt.UTC)
    s = _dt.datetime.fromisoformat(start).replace(tzinfo=_dt.UTC)
    return round((t - s).total_seconds() * 1000)


def test_elections_fences_and_unfences_are_the_runs(kraft_logs):
    """Each activation, fence, unfence and registration the model recorded is one line of the active controller at
    its time (whole ms); the crash's broker is fenced once, broker.session.timeout.ms (9000) after its last
    heartbeat; the failover's new leader is another controller, at a higher epoch."""
    truth = _truth(kraft_logs)
    start = truth["start"]
    act = _lines(kraft_logs, r"Becoming the active controller at epoch")
    got = [(_ms(ln, start), int(d.split("-")[1]), int(re.search(r"epoch (\d+)", ln)[1])) for d, ln in act]
    assert got == [(e["time_ms"], e["controller"], e["epoch"]) for e in truth["elections"]]
    assert len(got) == 2 and got[0][1:] == (3000, 1) and got[1][1] != 3000 and got[1][2] > 1
    fences = _lines(kraft_logs, r"Fencing broker \d+ because its session has timed out\.")
    want = [(f["time_ms"], f["controller"], f["broker"]) for f in truth["fences"]]
    got = [(_ms(ln, start), int(d.split("-")[1]), int(re.search(r"broker (\d+)", ln)[1])) for d, ln in fences]
    assert got == want
    crash = next(e for e in truth["timeline"] if e["event"] == "crash")
    assert [b for _t, _c, b in got] == [crash["node"]]
    # its last heartbeat came at most broker.heartbeat.interval.ms (2000, plus the answer's trip) before the crash
    assert crash["time_ms"] + 9000 - 2100 <= got[0][0] <= crash["time_ms"] + 9000
    unf = _lines(kraft_logs, r"to unfence has been granted")
    assert len(unf) == len(truth["unfences"]) == 4  # each restart's broker, and the crashed one back
    ran = _lines(kraft_logs, r"The broker has been unfenced\.", "broker-*")
    assert [(_ms(ln, start), int(d.split("-")[1])) for d, ln in ran] == sorted(
        (u["time_ms"], u["broker"]) for u in truth["broker_unfenced"]
    )
    reg = _lines(kraft_logs, r"Registering a new incarnation of broker")
    assert len(reg) == len(truth["registrations"]) == len(truth["broker_registered"]) == 4


def test_the_fencing_line_comes_before_the_changes_it_makes(kraft_logs):
    """maybeFenceOneStaleBroker logs, then handleBrokerFenced generates the partition changes (and logs them)."""
    log = (kraft_logs / "controller-3000" / "controller.log").read_text().splitlines()
    i = next(i for i, ln in enumerate(log) if "Fencing broker" in ln)
    assert "handleBrokerFenced: changing" in log[i + 1]
    assert log[i][:25] == log[i + 1][:25]


def test_a_controlled_shutdown_stops_fetching_and_a_new_leader_epoch_restarts_it(kraft_logs):
    """applyLocalFollowersDelta: in controlled shutdown a follower of a partition without it in the ISR stops
    fetching (all six: the controller took it out of every ISR); a restarted broker's first delta makes every
    partition new, so each starts fetching; an ISR change alone restarts nothing."""
    sc = (kraft_logs / "broker-1" / "state-change.log").read_text().splitlines()
    stop = [i for i, ln in enumerate(sc) if "Stopped fetchers as part of controlled shutdown for 6 partitions" in ln]
    assert len(stop) == 1
    assert "Transitioning 6 partition(s) to local followers." in sc[stop[0] - 1]
    after = sc[stop[0] + 1 : stop[0] + 4]
    assert [ln.split("] ", 2)[2] for ln in after] == [
        "Transitioning 6 partition(s) to local followers. (state.change.logger)",
        "Stopped fetchers as part of become-follower for 6 partitions (state.change.logger)",
        "Started fetchers as part of become-follower for 6 partitions (state.change.logger)",
    ]
    # broker 1's controlled shutdown takes it out of every ISR and moves its leaderships: on broker 3, a follower
    # whose leader stayed has an ISR change only, and restarts nothing
    ctl = (kraft_logs / "controller-3000" / "controller.log").read_text().splitlines()
    at = next(ln[:24] for ln in ctl if "enterControlledShutdown[1]: changing" in ln)
    sc3 = (kraft_logs / "broker-3" / "state-change.log").read_text().splitlines()
    first = next(i for i, ln in enumerate(sc3) if ln[:24] >= at)
    then = [ln for ln in sc3[first:] if ln[:21] == sc3[first][:21]]  # that second
    n = sum(int(re.search(r"(\d+) partition\(s\) to local followers", ln)[1]) for ln in then if "local followers" in ln)
    started = sum(int(re.search(r"for (\d+) partitions", ln)[1]) for ln in then if "Started fetchers" in ln)
    assert n > 0 and started < n
    # the move at 5 s: one partition's new leader epoch on each follower, one new local leader
    at5 = [
        ln
        for f in ("broker-1", "broker-2", "broker-3")
        for ln in (kraft_logs / f / "state-change.log").read_text().splitlines()
        if ln.startswith("[2024-03-04 00:00:05,")
    ]
    assert sum("1 partition(s) to local leaders" in ln for ln in at5) == 1
    assert sum("Started fetchers as part of become-follower for 1 partitions" in ln for ln in at5) == 2


def test_a_broker_that_ran_before_the_log_began_logs_no_initial_publication(kraft_logs):
    """BrokerMetadataPublisher logs its first publication once per process: only a broker started in the run."""
    pubs = _lines(kraft_logs, r"Publishing initial metadata at offset", "broker-*")
    truth = _truth(kraft_logs)
    assert len(pubs) == len(truth["broker_registered"]) == 4
    epochs = [int(re.search(r"OffsetAndEpoch\(offset=\d+, epoch=(\d+)\)", ln)[1]) for _d, ln in pubs]
    assert epochs == [1, 1, 1, 1]  # the failover (epoch 3) comes after every restart


def test_the_failover_is_logged_by_the_raft_clients_and_each_controller(kraft_logs):
    truth = _truth(kraft_logs)
    cand = _lines(kraft_logs, r"Become candidate due to fetch timeout", "controller-*")
    assert {d for d, _ln in cand} == {"controller-3001", "controller-3002"}  # the voters left
    changes = _lines(kraft_logs, r"In the new epoch \d+, the leader is ")
    assert len(changes) == len(truth["leader_changes"])
    new = truth["elections"][-1]
    named = [ln for _d, ln in changes if ln.split("(org.")[0].endswith(f"the leader is {new['controller']}. ")]
    assert len(named) == 2  # the two other controllers learn the new leader


def test_same_seed_same_files_and_hours_cut_the_timeline(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    generate(a, hours=1.0, brokers=2, seed=4, mode="kraft", rolling_restart=False)
    generate(b, hours=1.0, brokers=2, seed=4, mode="kraft", rolling_restart=False)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    ta = _truth(a)
    assert [e["event"] for e in ta["timeline"]] == ["move", "crash", "controller_restart"]
    # 20 s: the move and the crash (at 12.5 s), not its fence (9 s after the broker's last heartbeat)
    tc = generate(c, hours=20 / 3600, brokers=2, seed=4, mode="kraft", rolling_restart=False)
    assert tc["run_ms"] == 20_000 and tc["fences"] == []
    assert tc["lines"]["records"] < ta["lines"]["records"]
    assert [e["event"] for e in tc["timeline"]] == ["move", "crash"]


def test_damage_is_counted_in_kraft_logs(tmp_path):
    t = generate(tmp_path, hours=1.0, brokers=3, seed=2, mode="kraft", damage=0.2)
    parsed = _parse(tmp_path)
    assert sum(p.lines_read for p in parsed.values()) == t["lines"]["lines_read"]
    assert sum(len(p.rejected) for p in parsed.values()) == t["lines"]["rejected"] > 0


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"mode": "kraf"}, "--mode is 'zk'"),
        ({"mode": "kraft", "request_format": "text"}, "writes no request lines"),
        ({"mode": "kraft", "event_every_s": 60}, "runs its own timeline"),
        ({"mode": "kraft", "damage": 0.9}, "--damage"),
    ],
)
def test_bad_mode_and_options_are_refused_at_the_call(tmp_path, kw, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        generate(tmp_path / "x", hours=0.01, **kw)
    assert not (tmp_path / "x").exists()  # refused before anything is written


def test_cli_mode(tmp_path):
    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "kafka_lab.cli", "generate-logs", *args, "--quiet"],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )

    bad = run(str(tmp_path / "a"), "--mode", "kraft2")
    assert bad.returncode == 2 and "argument --mode: invalid choice: 'kraft2' (choose from 'zk', 'kraft')" in bad.stderr
    bad = run(str(tmp_path / "b"), "--mode", "kraft", "--event-every", "60")
    assert bad.returncode != 0 and "runs its own timeline" in bad.stderr and "Traceback" not in bad.stderr
    ok = run(str(tmp_path / "c"), "--mode", "kraft", "--hours", "0.05", "--brokers", "2")
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "c" / "controller-3000" / "controller.log").exists()
    again = run(str(tmp_path / "c"), "--mode", "kraft", "--hours", "0.05", "--brokers", "2", "--replace")
    assert again.returncode == 0, again.stderr


def test_the_timeline_is_what_the_module_says():
    ev, length = K.timeline(3)
    assert [(e, n) for _t, e, n in ev] == [
        ("move", 1),
        ("restart", 1),
        ("restart", 2),
        ("restart", 3),
        ("crash", 3),
        ("controller_restart", "active"),
    ]
    assert K.CRASH_DOWN_MS > 9000  # longer than broker.session.timeout.ms: fenced before it comes back
    assert length == ev[-1][0] + K.CONTROLLER_EVERY_MS + K.TAIL_MS
