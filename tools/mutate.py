"""Break the cluster model on purpose, one rule at a time, and see whether the tests notice.

Each :class:`Mutation` below removes or bends one rule the model claims (its docstrings in
``kafka_lab/sim/``), citing the Kafka 2.8 source the rule comes from. For each mutation the script
copies the repository (its tracked files, plus new files git does not ignore) to a scratch directory,
applies the edit there, runs the model's tests with ``PYTHONPATH`` pointing at the copy, and reports
the mutation *killed* (some test failed) or *survived* (every test passed: the rule is untested).
The worktree itself is never modified.

    python tools/mutate.py                      # every mutation; prints the table and the kill rate
    python tools/mutate.py --only lai-leader-epoch-check --only stop-replica-no-delete
    python tools/mutate.py --list               # names and rules, nothing run
    python tools/mutate.py --check              # only check that every snippet still matches
    python tools/mutate.py --jobs 2 --json out.json

An edit whose ``old`` snippet is not found exactly once in its file is an error before anything runs
(exit status 2): the list cannot rot silently when the model changes. The unmutated copy must pass
first (exit status 2 otherwise). Exit status 1 when a mutation survived, 0 when every one was killed.

Tests run with ``-x`` (stop at the first failure), fastest files first, ``CI=1`` (hypothesis
derandomised, as in CI) and ``PYTHONDONTWRITEBYTECODE=1`` (a mutated module is never shadowed by a
stale ``.pyc``). A run longer than ``--timeout`` seconds counts as killed (a mutation that makes the
model loop forever is caught, by the clock).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: the test files, in the order they run (fast rule tests first, the slow statistical ones last; the
#: KRaft listener tests and the assignment's tests, a few seconds each, for the mutations of
#: kafka_lab/listeners/kraft.py and kafka_lab/assignment/); a pattern matching nothing
#: is skipped, a file matched twice runs once
TEST_PATTERNS = [
    "tests/test_listeners_kraft*.py",
    "tests/test_assignment.py",
    "tests/test_broker_process.py",
    "tests/test_ledger_outcomes.py",
    "tests/test_cluster_*.py",
    "tests/test_ledger_times.py",
    "tests/test_sim_log.py",
    "tests/test_sim_model.py",
    "tests/test_sim_kip291.py",
    "tests/test_sim_conservation.py",
    "tests/test_lab0[3-9]*.py",
    "tests/test_sim_*.py",
    "tests/test_fencing.py",
    "tests/test_controller_scale.py",
    "tests/test_shutdown_cluster.py",
    "tests/test_lifecycle.py",
    "tests/test_logs_generate.py",
    "tests/test_cli_safety.py",
    "tests/test_fault_campaign.py",
]

SIM = "kafka_lab/sim/"


@dataclass(frozen=True)
class Mutation:
    """One deliberate break: ``edits`` are (file, exact old snippet, replacement)."""

    name: str
    edits: tuple
    rule: str
    source: str
    review: bool = False  # one of the breaks the issue's review listed


def M(name, path, old, new, rule, source, *, more=(), review=False) -> Mutation:
    return Mutation(name, ((SIM + path, old, new), *((SIM + p, o, n) for p, o, n in more)), rule, source, review)


KRAFT = "kafka_lab/listeners/kraft.py"


def K(name, old, new, rule, source) -> Mutation:
    """A break of the KRaft listener rules (docs/kafka-reference.md §8.3), in ``kafka_lab/listeners/kraft.py``."""
    return Mutation(name, ((KRAFT, old, new),), rule, source)


MUTATIONS = [
    # -- LeaderAndIsr (ReplicaManager.becomeLeaderOrFollower, Partition.makeLeader / makeFollower) ---------
    M(
        "lai-leader-epoch-check",
        "server/replica_manager.py",
        '            elif st["leader_epoch"] <= p.leader_epoch:',
        "            elif False:",
        "a LeaderAndIsr whose leader epoch is not newer than the partition's is ignored (STALE_CONTROLLER_EPOCH)",
        "ReplicaManager.becomeLeaderOrFollower: requestLeaderEpoch > currentLeaderEpoch, else STALE_CONTROLLER_EPOCH",
        review=True,
    ),
    M(
        "lai-not-in-replicas",
        "server/replica_manager.py",
        "            if me not in replicas:\n",
        "            if False:\n",
        "a LeaderAndIsr for a partition whose replicas exclude this broker is UNKNOWN_TOPIC_OR_PARTITION",
        "ReplicaManager.becomeLeaderOrFollower: partitionState.replicas.contains(localBrokerId)",
    ),
    M(
        "lai-controller-epoch",
        "server/replica_manager.py",
        "        if controller_epoch is not None and not self.check_controller_epoch(controller_epoch):\n"
        '            return {(st["topic"], st["partition"]): "STALE_CONTROLLER_EPOCH" for st in states}',
        "        if False:\n"
        '            return {(st["topic"], st["partition"]): "STALE_CONTROLLER_EPOCH" for st in states}',
        "a LeaderAndIsr from an older controller epoch is refused whole (STALE_CONTROLLER_EPOCH)",
        "ReplicaManager.becomeLeaderOrFollower: leaderAndIsrRequest.controllerEpoch < controllerEpoch",
    ),
    M(
        "make-leader-keeps-stale-follower-offsets",
        "server/replica_manager.py",
        "            if was_leader and rid in old:",
        "            if rid in old:",
        "a new leader forgets its followers' log end offsets (-1 until they fetch from it)",
        "Partition.makeLeader: if (isNewLeader) remoteReplicas.foreach(_.updateFetchState(UnknownOffsetMetadata, ...))",
        more=[
            (
                "server/replica_manager.py",
                '        p.remote = {}\n        self._event(\n            "become_follower",',
                '        self._event(\n            "become_follower",',
            )
        ],
        review=True,
    ),
    M(
        "make-leader-no-epoch-start",
        "server/replica_manager.py",
        "        p.log.assign_epoch(p.leader_epoch, p.log.leo)\n",
        "",
        "a new leader caches its epoch at its log end offset (so followers can find where the old epoch ends)",
        "Partition.makeLeader: leaderLog.maybeAssignEpochStartOffset(leaderEpoch, leaderEpochStartOffset)",
    ),
    M(
        "make-leader-isr-not-caught-up",
        "server/replica_manager.py",
        "last_caught_up_ms=now if rid in p.isr else NEVER, last_fetch_ms=now,",
        "last_caught_up_ms=NEVER, last_fetch_ms=now,",
        "a new leader counts its ISR followers as caught up 'now' (they get replica.lag.time.max.ms)",
        "Partition.makeLeader: resetLastCaughtUpTime(..., if (isrState.isr.contains(id)) curTimeMs else 0L)",
    ),
    M(
        "make-leader-no-hw-update",
        "server/replica_manager.py",
        '        # "we may need to increment high watermark since ISR could be down to 1"\n'
        "        self.maybe_increment_hw(p)\n",
        "",
        "a new leader re-computes its high watermark at once (its ISR may be down to itself)",
        "Partition.makeLeader: (maybeIncrementLeaderHW(leaderLog), isNewLeader)",
    ),
    M(
        "make-leader-keeps-fetching",
        "server/replica_manager.py",
        "        was_leader = p.leader == self.broker_id\n        if self.fetchers is not None:\n"
        '            self.fetchers.remove_partitions([p.tp])\n        p.replicas = list(st.get("replicas", p.replicas))\n'
        '        p.leader, p.leader_epoch = self.broker_id, st["leader_epoch"]',
        '        was_leader = p.leader == self.broker_id\n        p.replicas = list(st.get("replicas", p.replicas))\n'
        '        p.leader, p.leader_epoch = self.broker_id, st["leader_epoch"]',
        "a broker becoming leader stops fetching the partition",
        "ReplicaManager.makeLeaders: replicaFetcherManager.removeFetcherForPartitions(...)",
    ),
    M(
        "make-follower-keeps-purgatory",
        "server/replica_manager.py",
        "        if self.produce_purgatory is not None:\n            self.produce_purgatory.check_and_complete(p.tp)\n",
        "",
        "becoming follower completes the partition's delayed produces with NOT_LEADER_OR_FOLLOWER",
        "ReplicaManager.makeFollowers: completeDelayedFetchOrProduceRequests(partition.topicPartition)",
    ),
    M(
        "make-follower-leader-unavailable",
        "server/replica_manager.py",
        "                if cache is not None and cache.live_brokers and leader not in cache.live_brokers:",
        "                if False:",
        "a follower whose new leader is not alive in its metadata cache is not changed",
        "ReplicaManager.makeFollowers: metadataCache.getAliveBrokers.find(_.id == newLeaderBrokerId) ... case None",
    ),
    # -- StopReplica (ReplicaManager.stopReplicas) -----------------------------------------------------
    M(
        "stop-replica-no-delete",
        "server/replica_manager.py",
        "            if delete and tp in self.partitions:",
        "            if False and tp in self.partitions:",
        "StopReplica(deletePartition=true) removes the partition and its log",
        "ReplicaManager.stopReplicas: if (deletePartition) ... allPartitions.remove(topicPartition, ...)",
        review=True,
    ),
    M(
        "stop-replica-controller-epoch",
        "server/replica_manager.py",
        "        if controller_epoch is not None and not self.check_controller_epoch(controller_epoch):\n"
        '            return dict.fromkeys(partitions, "STALE_CONTROLLER_EPOCH")',
        '        if False:\n            return dict.fromkeys(partitions, "STALE_CONTROLLER_EPOCH")',
        "a StopReplica from an older controller epoch is refused whole (STALE_CONTROLLER_EPOCH)",
        "ReplicaManager.stopReplicas: controllerEpoch < this.controllerEpoch",
    ),
    M(
        "stop-replica-equal-epoch-accepted",
        "server/replica_manager.py",
        "epoch not in (-1, -2) and epoch <= p.leader_epoch:",
        "epoch not in (-1, -2) and epoch < p.leader_epoch:",
        "StopReplica with the partition's current leader epoch is FENCED_LEADER_EPOCH (2.8; 3.x accepts it)",
        "ReplicaManager.stopReplicas: requestLeaderEpoch > currentLeaderEpoch, else FENCED_LEADER_EPOCH",
    ),
    M(
        "stop-replica-older-epoch-accepted",
        "server/replica_manager.py",
        "epoch not in (-1, -2) and epoch <= p.leader_epoch:",
        "epoch not in (-1, -2) and epoch == p.leader_epoch:",
        "StopReplica with an older leader epoch is FENCED_LEADER_EPOCH",
        "ReplicaManager.stopReplicas: requestLeaderEpoch < currentLeaderEpoch → FENCED_LEADER_EPOCH",
    ),
    M(
        "stop-replica-delete-sentinel-fenced",
        "server/replica_manager.py",
        "epoch not in (-1, -2) and epoch <= p.leader_epoch:",
        "epoch not in (-1,) and epoch <= p.leader_epoch:",
        "StopReplica with the deletion sentinel epoch -2 is always applied",
        "ReplicaManager.stopReplicas: requestLeaderEpoch == LeaderAndIsr.EpochDuringDelete",
    ),
    M(
        "stop-replica-keeps-purgatory",
        "server/replica_manager.py",
        '                self._event("stopped", tp)\n'
        "            if self.produce_purgatory is not None:\n"
        "                self.produce_purgatory.check_and_complete(tp)\n",
        '                self._event("stopped", tp)\n',
        "StopReplica completes the partition's delayed produces",
        "ReplicaManager.stopReplicas: completeDelayedFetchOrProduceRequests(topicPartition)",
    ),
    M(
        "stop-replica-keeps-fetching",
        "server/replica_manager.py",
        "        if self.fetchers is not None and stop:\n            self.fetchers.remove_partitions([tp for tp, _ in stop])\n",
        "",
        "StopReplica stops the partition's fetchers",
        "ReplicaManager.stopReplicas: replicaFetcherManager.removeFetcherForPartitions(partitions)",
    ),
    # -- high watermark, appends, acks=all (Partition.scala) --------------------------------------------
    M(
        "hw-committed-isr-not-maximal",
        "server/replica_manager.py",
        "if r.leo < new and (rid in maximal or now - r.last_caught_up_ms <= lag):",
        "if r.leo < new and (rid in p.isr or now - r.last_caught_up_ms <= lag):",
        "the HW is the minimum LEO over the *maximal* ISR (a pending expand already counts)",
        "Partition.maybeIncrementLeaderHW: isrState.maximalIsr.contains(replica.brokerId)",
    ),
    M(
        "hw-ignores-recently-caught-up",
        "server/replica_manager.py",
        "if r.leo < new and (rid in maximal or now - r.last_caught_up_ms <= lag):",
        "if r.leo < new and rid in maximal:",
        "a follower caught up within replica.lag.time.max.ms holds the HW back even outside the ISR",
        "Partition.maybeIncrementLeaderHW: curTime - replica.lastCaughtUpTimeMs <= replicaLagTimeMaxMs",
    ),
    M(
        "hw-moves-backwards",
        "server/replica_manager.py",
        "        if new > p.hw:\n            p.hw = new\n",
        "        if new != p.hw:\n            p.hw = new\n",
        "the leader's HW only moves forward",
        "Log.maybeIncrementHighWatermark: only if newHighWatermark > oldHighWatermark",
    ),
    M(
        "follower-hw-beyond-leo",
        "server/replica_manager.py",
        "        new_hw = min(leader_hw, p.log.leo)",
        "        new_hw = leader_hw",
        "a follower's HW is the leader's, capped at its own LEO",
        "ReplicaFetcherThread.processPartitionData: log.updateHighWatermark (Log.updateHighWatermark caps at LEO)",
    ),
    M(
        "follower-hw-beyond-leo-empty-fetch",
        "server/fetcher.py",
        "                    p.hw = min(hw, p.log.leo)",
        "                    p.hw = hw",
        "a follower's HW from a fetch with no records is still capped at its own LEO",
        "ReplicaFetcherThread.processPartitionData: log.updateHighWatermark (Log.updateHighWatermark caps at LEO)",
    ),
    M(
        "append-ignores-min-isr",
        "server/replica_manager.py",
        "            if req.acks == -1 and len(p.isr) < p.min_isr:",
        "            if False:",
        "acks=all with an ISR smaller than min.insync.replicas fails NOT_ENOUGH_REPLICAS, nothing appended",
        "Partition.appendRecordsToLeader: inSyncSize < minIsr && requiredAcks == -1",
    ),
    M(
        "append-min-isr-for-acks-1",
        "server/replica_manager.py",
        "            if req.acks == -1 and len(p.isr) < p.min_isr:",
        "            if len(p.isr) < p.min_isr:",
        "min.insync.replicas applies to acks=all only",
        "Partition.appendRecordsToLeader: inSyncSize < minIsr && requiredAcks == -1",
    ),
    M(
        "no-not-enough-replicas-after-append",
        "server/replica_manager.py",
        '            return "NONE" if p.min_isr <= len(p.maximal_isr) else "NOT_ENOUGH_REPLICAS_AFTER_APPEND"',
        '            return "NONE"',
        "HW reached with the ISR shrunk below min.insync.replicas is NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "Partition.checkEnoughReplicasReachOffset: if (minIsr <= curMaximalIsr.size) NONE else NOT_ENOUGH_REPLICAS_AFTER_APPEND",
    ),
    M(
        "acks-all-waits-on-a-follower",
        "server/replica_manager.py",
        '        if p is None or p.leader != self.broker_id:\n            return "NOT_LEADER_OR_FOLLOWER"\n'
        "        if p.hw >= required:",
        '        if p is None:\n            return "NOT_LEADER_OR_FOLLOWER"\n        if p.hw >= required:',
        "a delayed produce on a partition no longer led here answers NOT_LEADER_OR_FOLLOWER",
        "Partition.checkEnoughReplicasReachOffset: leaderLogIfLocal ... case None => NOT_LEADER_OR_FOLLOWER",
    ),
    # -- follower fetch on the leader (Partition.readRecords, updateFollowerFetchState) --------------------
    M(
        "fetch-no-fenced-epoch",
        "server/replica_manager.py",
        "            if current_epoch < p.leader_epoch:",
        "            if False:",
        "a follower fetch with an older currentLeaderEpoch is FENCED_LEADER_EPOCH",
        "Partition.localLogWithEpochOrException: requestedEpoch < leaderEpoch → FENCED_LEADER_EPOCH",
    ),
    M(
        "fetch-no-unknown-epoch",
        "server/replica_manager.py",
        "            if current_epoch > p.leader_epoch:",
        "            if False:",
        "a follower fetch with a newer currentLeaderEpoch is UNKNOWN_LEADER_EPOCH",
        "Partition.localLogWithEpochOrException: requestedEpoch > leaderEpoch → UNKNOWN_LEADER_EPOCH",
    ),
    M(
        "fetch-divergence-ignores-epoch",
        "server/replica_manager.py",
        "                if epoch < last_epoch or end < offset:",
        "                if end < offset:",
        "a lastFetchedEpoch the leader does not have is a diverging epoch, even if it ends beyond the offset",
        "Partition.readRecords: epochEndOffset.leaderEpoch < fetchEpoch || epochEndOffset.endOffset < fetchOffset",
    ),
    M(
        "fetch-divergence-ignores-end",
        "server/replica_manager.py",
        "                if epoch < last_epoch or end < offset:",
        "                if epoch < last_epoch:",
        "a lastFetchedEpoch that ends below the fetch offset on the leader is a diverging epoch",
        "Partition.readRecords: epochEndOffset.leaderEpoch < fetchEpoch || epochEndOffset.endOffset < fetchOffset",
    ),
    M(
        "fetch-caught-up-only-at-leo",
        "server/replica_manager.py",
        "        elif offset >= r.last_fetch_leader_leo:\n            r.last_caught_up_ms = max(r.last_caught_up_ms, r.last_fetch_ms)\n",
        "",
        "a fetch reaching the leader's LEO as of the previous fetch makes the follower caught up as of that fetch",
        "Replica.updateFetchState: else if (offset >= lastFetchLeaderLogEndOffset) lastCaughtUpTimeMs = lastFetchTimeMs",
    ),
    M(
        "fetch-no-long-poll",
        "server/apis.py",
        "        if not any_data and self.replica_fetch_wait_max_ms > 0:",
        "        if False:",
        "a follower fetch with nothing new waits up to replica.fetch.wait.max.ms",
        "ReplicaManager.fetchMessages: DelayedFetch while bytesReadable < fetchMinBytes and maxWaitMs > 0",
    ),
    M(
        "append-does-not-wake-fetches",
        "server/replica_manager.py",
        "            if fetch_watchers is not None and tp in fetch_watchers:\n                fetches.check_and_complete(tp)\n"
        "        return required, bases, errors",
        "        return required, bases, errors",
        "an append wakes the follower fetches long-polling on the partition",
        "ReplicaManager.addCompletePurgatoryAction: LeaderHwChange.Same => delayedFetchPurgatory.checkAndComplete",
    ),
    # -- ISR (Partition.maybeShrinkIsr / maybeExpandIsr, isr-expiration) ---------------------------------
    M(
        "isr-expand-before-epoch-start",
        "server/replica_manager.py",
        "            if offset >= p.hw and offset >= epoch_start:",
        "            if offset >= p.hw:",
        "a follower joins the ISR only once caught up to the start of the current leader epoch",
        "Partition.isFollowerAtHighwatermark: followerEndOffset >= leaderEpochStartOffset",
    ),
    M(
        "isr-expand-below-hw",
        "server/replica_manager.py",
        "            if offset >= p.hw and offset >= epoch_start:",
        "            if offset >= epoch_start:",
        "a follower joins the ISR only once its LEO reaches the HW",
        "Partition.isFollowerAtHighwatermark: followerEndOffset >= leaderLog.highWatermark",
    ),
    M(
        "isr-shrink-caught-up-follower",
        "server/replica_manager.py",
        "                and r.leo != leo\n                and now - r.last_caught_up_ms > lag\n",
        "                and now - r.last_caught_up_ms > lag\n",
        "a follower whose LEO equals the leader's is never out of sync",
        "Partition.isFollowerOutOfSync: followerReplica.logEndOffset != leaderEndOffset && ...",
    ),
    M(
        "isr-shrink-half-lag",
        "server/replica_manager.py",
        "                and now - r.last_caught_up_ms > lag\n            ]",
        "                and now - r.last_caught_up_ms > lag / 2\n            ]",
        "out of sync means not caught up for more than replica.lag.time.max.ms",
        "Partition.isFollowerOutOfSync: (currentTimeMs - followerReplica.lastCaughtUpTimeMs) > maxLagMs",
    ),
    M(
        "isr-expiration-period",
        "server/broker.py",
        "        period = self.config.replica_lag_time_max_ms / 2.0",
        "        period = self.config.replica_lag_time_max_ms",
        "the isr-expiration task runs every replica.lag.time.max.ms / 2",
        'ReplicaManager.startup: scheduler.schedule("isr-expiration", maybeShrinkIsr _, period = replicaLagTimeMaxMs / 2)',
    ),
    M(
        "isr-two-changes-in-flight",
        "server/replica_manager.py",
        "            if p.leader != self.broker_id or p.pending_isr is not None:",
        "            if p.leader != self.broker_id:",
        "one ISR change in flight per partition",
        "Partition.maybeShrinkIsr: !isrState.isInflight",
    ),
    # -- the controller (KafkaController.processAlterIsr, ControllerChannelManager) -----------------------
    M(
        "alter-isr-no-leader-epoch-check",
        "zk/controller.py",
        '                elif leader_epoch < st["leader_epoch"]:',
        "                elif False:",
        "AlterIsr from an older leader epoch is FENCED_LEADER_EPOCH",
        "KafkaController.processAlterIsr: newLeaderAndIsr.leaderEpoch < currentLeaderAndIsr.leaderEpoch",
    ),
    M(
        "alter-isr-no-zk-version-check",
        "zk/controller.py",
        '                elif zk_version != st["zk_version"]:',
        "                elif False:",
        "AlterIsr with a zkVersion other than the znode's is INVALID_UPDATE_VERSION",
        "KafkaController.processAlterIsr: badVersionUpdates → INVALID_UPDATE_VERSION",
    ),
    M(
        "alter-isr-no-broker-epoch-check",
        "zk/controller.py",
        '            if broker is None or p.get("broker_epoch", 0) != broker.broker_epoch:',
        "            if broker is None:",
        "AlterIsr from a broker epoch the controller does not know is STALE_BROKER_EPOCH",
        "KafkaController.processAlterIsr: !brokerEpochOpt.contains(brokerEpoch) → STALE_BROKER_EPOCH",
    ),
    M(
        "alter-isr-published-with-leader-and-isr",
        "zk/controller.py",
        "                self._publish([tp for tp, _ in changed], leader_and_isr=False)",
        "                self._publish([tp for tp, _ in changed], leader_and_isr=True)",
        "an accepted AlterIsr is published with UpdateMetadata only",
        "KafkaController.processAlterIsr: processUpdateNotifications → sendUpdateMetadataRequest",
    ),
    M(
        "controller-channel-two-in-flight",
        "zk/controller.py",
        "        if self.busy or not self.queue or self.removed or self._retry_armed:",
        "        if not self.queue or self.removed or self._retry_armed:",
        "the controller has one request in flight per broker",
        "ControllerChannelManager.RequestSendThread.doWork: NetworkClientUtils.sendAndReceive (one at a time)",
    ),
    M(
        "election-keeps-leader-epoch",
        "zk/controller.py",
        '            st["leader"] = leader\n        st["leader_epoch"] += 1\n',
        '            st["leader"] = leader\n',
        "a leader election (every controller write of a partition's leader or ISR) bumps the leader epoch",
        "PartitionStateMachine.electLeaderForPartitions: leaderAndIsr.newLeaderAndIsr (leaderEpoch + 1)",
    ),
    M(
        "topic-deleted-before-every-replica",
        "zk/controller.py",
        "            waiting.discard(bid)\n            if not waiting:",
        "            waiting.discard(bid)\n            if True:",
        "a topic is deleted only when every replica has answered StopReplica(delete=true)",
        "TopicDeletionManager.completeReplicaDeletion / isTopicDeletionSuccessful: all replicas ReplicaDeletionSuccessful",
    ),
    M(
        "deleted-topic-stays-listed",
        "cluster.py",
        "        self.topics.pop(topic, None)\n",
        "        pass\n",
        "a topic whose deletion completed is no longer the cluster's: partitions_of refuses it, its name is free",
        "TopicDeletionManager.completeDeleteTopic: client.deleteTopic (deleteTopicZNode), controllerContext.removeTopic",
    ),
    M(
        "deleted-topic-crashes-its-clients",
        "clients/producer.py",
        "        tps = self.cluster.topics.get(self.topic)\n        if tps is not None:\n",
        "        tps = self.cluster.partitions_of(self.topic)\n        if tps is not None:\n",
        "a client of a deleted topic keeps the partitions it knew (answered UNKNOWN_TOPIC_OR_PARTITION), the run goes on",
        "KafkaProducer / Metadata: a deleted topic is UNKNOWN_TOPIC_OR_PARTITION in the metadata, not a client crash",
    ),
    # -- metadata cache and UpdateMetadata (ZkMetadataCache, KafkaApis) ----------------------------------
    M(
        "update-metadata-controller-epoch",
        "server/metadata_cache.py",
        '            if controller_epoch < self.controller_epoch:\n                return "STALE_CONTROLLER_EPOCH"',
        '            if False:\n                return "STALE_CONTROLLER_EPOCH"',
        "an UpdateMetadata from an older controller epoch is refused (STALE_CONTROLLER_EPOCH)",
        "KafkaApis.handleUpdateMetadataRequest / ReplicaManager.maybeUpdateMetadataCache: controllerEpoch < this.controllerEpoch",
    ),
    M(
        "metadata-leader-not-alive",
        "server/metadata_cache.py",
        '            elif st["leader"] < 0 or (self.live_brokers and st["leader"] not in self.live_brokers):',
        '            elif st["leader"] < 0:',
        "a partition whose leader is not a live broker is LEADER_NOT_AVAILABLE",
        "ZkMetadataCache.getPartitionMetadata: aliveBrokers.get(leaderBrokerId) None → LEADER_NOT_AVAILABLE",
    ),
    M(
        "metadata-from-controller-not-cache",
        "server/apis.py",
        "        req.result = self.metadata_cache.describe(req.partitions)",
        "        st = self.broker.cluster.controller.state\n"
        '        req.result = {tp: ("NONE", st[tp]["leader"], st[tp]["leader_epoch"]) for tp in req.partitions}',
        "a Metadata request is answered from this broker's metadata cache (stale until UpdateMetadata)",
        "KafkaApis.handleTopicMetadataRequest: metadataCache.getTopicMetadata",
    ),
    M(
        "leader-and-isr-writes-metadata-cache",
        "server/replica_manager.py",
        '        p.remote = {}\n        self._event(\n            "become_follower",',
        "        p.remote = {}\n"
        "        if self.metadata_cache is not None and p.tp in self.metadata_cache.partitions:\n"
        "            self.metadata_cache.partitions[p.tp] = {**self.metadata_cache.partitions[p.tp], "
        '"leader": p.leader, "leader_epoch": p.leader_epoch}\n'
        '        self._event(\n            "become_follower",',
        "the metadata cache changes only on UpdateMetadata, not on LeaderAndIsr",
        "ZkMetadataCache.updateMetadata is called only from KafkaApis.handleUpdateMetadataRequest",
    ),
    # -- follower truncation (AbstractFetcherThread) ----------------------------------------------------
    M(
        "truncate-to-leader-end-not-min",
        "server/fetcher.py",
        "        return min(f_end, leader_end, leo)",
        "        return min(leader_end, leo)",
        "a diverging follower truncates to min(leader's end of the epoch, its own end of it, its LEO)",
        "AbstractFetcherThread.getOffsetTruncationState: min(min(followerEndOffset, leaderEpochOffset.endOffset), replicaEndOffset)",
    ),
    M(
        "truncate-ignores-unknown-epoch",
        "server/fetcher.py",
        "        if f_epoch != leader_epoch:  # an epoch unknown to the follower: truncate to its own, ask again\n"
        "            return min(f_end, leo)\n",
        "",
        "an epoch the follower does not know: truncate to its own end of its largest epoch below, and ask again",
        "AbstractFetcherThread.getOffsetTruncationState: followerEpoch != leaderEpochOffset.leaderEpoch",
    ),
    M(
        "fetcher-no-error-backoff",
        "server/fetcher.py",
        "                    self.partitions[tp] = env.now + REPLICA_FETCH_BACKOFF_MS",
        "                    self.partitions[tp] = env.now",
        "a partition whose fetch failed waits replica.fetch.backoff.ms before the next fetch",
        "AbstractFetcherThread.handlePartitionsWithErrors → delayPartitions(partitions, fetchBackOffMs)",
    ),
    M(
        "fetcher-applies-stale-response",
        "server/fetcher.py",
        "                if tp not in fetching or p is None or p.leader_epoch != fetches[tp][2]:",
        "                if tp not in fetching or p is None:",
        "a fetch response for a partition whose leader epoch changed in flight is dropped",
        "AbstractFetcherThread.processFetchRequest: only if fetchState.currentLeaderEpoch == requestEpoch",
    ),
    # -- purgatory (DelayedOperation.scala, DelayedProduce.scala) ---------------------------------------
    M(
        "purgatory-size-never-incremented",
        "server/purgatory.py",
        "        self.size.add(len(keys))\n",
        "",
        "PurgatorySize counts one watch entry per key (partition) of every watched operation",
        "DelayedOperationPurgatory.watchForOperation / Watchers.watch",
        review=True,
    ),
    M(
        "purgatory-num-delayed-never-incremented",
        "server/purgatory.py",
        "        self.num_delayed.add(1)\n",
        "",
        "NumDelayedOperations counts the operations watched and not yet completed",
        "DelayedOperationPurgatory.numDelayed (timeoutTimer.size)",
    ),
    M(
        "purgatory-never-purged",
        "server/purgatory.py",
        "            if self.estimated_total - delayed > self.purge_interval:",
        "            if False:",
        "completed operations are purged from the watch lists once more than the purge interval are still watched",
        "DelayedOperationPurgatory.ExpiredOperationReaper.advanceClock: estimatedTotalOperations - numDelayed > purgeInterval",
    ),
    M(
        "purgatory-purge-at-the-interval",
        "server/purgatory.py",
        "            if self.estimated_total - delayed > self.purge_interval:",
        "            if self.estimated_total - delayed >= self.purge_interval:",
        "the purge happens when *more than* purge.interval.requests completed operations are watched",
        "DelayedOperationPurgatory.ExpiredOperationReaper.advanceClock: estimatedTotalOperations - numDelayed > purgeInterval",
    ),
    M(
        "purgatory-expiry-not-timed-out",
        "server/purgatory.py",
        '            op.errors[tp] = "REQUEST_TIMED_OUT"',
        '            op.errors[tp] = "NONE"',
        "an expired produce answers REQUEST_TIMED_OUT for the partitions still pending",
        "DelayedProduce.onExpiration / onComplete: acksPending → REQUEST_TIMED_OUT",
    ),
    M(
        "purgatory-expires-completed",
        "server/purgatory.py",
        "    def _expire(self, op) -> None:\n        if op.done:\n            return\n",
        "    def _expire(self, op) -> None:\n",
        "an operation completes once: expiry after completion does nothing",
        "DelayedOperation.forceComplete: completed.compareAndSet(false, true)",
    ),
    M(
        "purgatory-no-first-try",
        "server/purgatory.py",
        "        if self._check_all(op):\n            return self._complete(op)\n",
        "",
        "a delayed produce is tried before it is watched (answered at once when it can be)",
        "DelayedOperationPurgatory.tryCompleteElseWatch: operation.safeTryCompleteOrElse",
    ),
    M(
        "hw-move-does-not-complete-produce",
        "server/replica_manager.py",
        "            p.hw = new\n            purgatory = self.produce_purgatory\n"
        "            if purgatory is not None and purgatory.watchers:\n"
        "                purgatory.check_and_complete((p.topic, p.partition))\n            return True",
        "            p.hw = new\n            return True",
        "a HW move completes the delayed produces waiting on the partition",
        "Partition.updateFollowerFetchState: leaderHWIncremented → tryCompleteDelayedRequests",
    ),
    # -- the producer (Sender, NetworkClient, Metadata) -------------------------------------------------
    M(
        "producer-accepts-older-epoch",
        "clients/producer.py",
        "            if known is not None and epoch < known[1]:\n                continue",
        "            if False:\n                continue",
        "metadata with a leader epoch older than one already seen is ignored (KIP-320)",
        "Metadata.updateLatestMetadata: newEpoch >= currentEpoch, else keep the cached partition metadata",
    ),
    M(
        "producer-refreshes-on-request-timed-out",
        "clients/producer.py",
        "        if err in INVALID_METADATA_ERRORS:\n            self.request_update()",
        '        if err in INVALID_METADATA_ERRORS or err == "REQUEST_TIMED_OUT":\n            self.request_update()',
        "REQUEST_TIMED_OUT is retried without a metadata refresh (it is not an InvalidMetadataException)",
        "Sender.completeBatch: if (error.exception() instanceof InvalidMetadataException) metadata.requestUpdate()",
    ),
    M(
        "producer-no-refresh-on-not-leader",
        "clients/producer.py",
        "        if err in INVALID_METADATA_ERRORS:\n            self.request_update()",
        "        if False:\n            self.request_update()",
        "NOT_LEADER_OR_FOLLOWER (an InvalidMetadataException) asks for a metadata refresh",
        "Sender.completeBatch: if (error.exception() instanceof InvalidMetadataException) metadata.requestUpdate()",
    ),
    M(
        "producer-timeout-keeps-connection",
        "clients/producer.py",
        "        conn.close()\n",
        "",
        "a request unanswered after request.timeout.ms closes its connection",
        "NetworkClient.handleTimedOutRequests: selector.close(nodeId); processDisconnection",
    ),
    M(
        "producer-timeout-fails-only-that-request",
        "clients/producer.py",
        "            if r.connection is conn:",
        "            if r is req:",
        "a closed connection fails every request in flight on it",
        "NetworkClient.processDisconnection: cancelInFlightRequests(nodeId, ...)",
    ),
    M(
        "producer-ignores-retries",
        "clients/producer.py",
        '            and b.attempts <= self.cfg["retries"]\n',
        "",
        "a batch is retried at most `retries` times",
        "Sender.canRetry: batch.attempts() < this.retries",
    ),
    M(
        "producer-ignores-delivery-timeout",
        "clients/producer.py",
        '            and now - b.created_ms < self.cfg["delivery.timeout.ms"]\n',
        "",
        "a batch is not retried once delivery.timeout.ms has passed since it was created",
        "Sender.canRetry: !batch.hasReachedDeliveryTimeout(deliveryTimeoutMs, now)",
    ),
    M(
        "producer-no-retry-backoff",
        "clients/producer.py",
        '            b.retry_at = now + self.cfg["retry.backoff.ms"]',
        "            b.retry_at = now",
        "a retried batch waits retry.backoff.ms",
        "RecordAccumulator.reenqueue / ready: backingOff = batch.attempts() > 0 && waitedTimeMs < retryBackoffMs",
    ),
    M(
        "producer-ignores-max-in-flight",
        "clients/producer.py",
        "            while tps and self.in_flight.get(bid, 0) < limit:",
        "            while tps:",
        "at most max.in.flight.requests.per.connection requests in flight per connection",
        "NetworkClient.isReady / InFlightRequests.canSendMore: queue.size() < maxInFlightRequestsPerConnection",
    ),
    M(
        "producer-retry-at-the-tail",
        "clients/producer.py",
        "            self._queue(b.tp).appendleft(b)",
        "            self._queue(b.tp).append(b)",
        "a retried batch goes back to the head of its partition's queue",
        "RecordAccumulator.reenqueue: deque.addFirst(batch)",
    ),
    M(
        "producer-drain-misses-a-filled-partition",
        "clients/producer.py",
        "        self._filled.add(tp)\n        return queue",
        "        return queue",
        "every batch handed over is sent: the sender looks at every partition whose queue holds one",
        "RecordAccumulator.ready/drain iterate every partition with batches",
    ),
    M(
        "sticky-partitions-not-rebuilt-after-metadata",
        "clients/producer.py",
        "        if known is None or known[0] is not tps or known[1] != leaders.version:",
        "        if known is None:",
        "the sticky partitioner chooses among the partitions that have a leader in the latest metadata",
        "DefaultPartitioner / StickyPartitionCache: cluster.availablePartitionsForTopic(topic)",
    ),
    M(
        "producer-no-age-refresh",
        "clients/producer.py",
        "(self.retry_backoff_ms if self.update_requested else self.metadata_max_age_ms)",
        '(self.retry_backoff_ms if self.update_requested else float("inf"))',
        "metadata is refreshed metadata.max.age.ms after the last refresh even when no update was asked for",
        "Metadata.timeToNextUpdate: lastSuccessfulRefreshMs + metadataExpireMs - nowMs when no update is requested",
    ),
    M(
        "producer-age-refresh-early",
        "clients/producer.py",
        "(self.retry_backoff_ms if self.update_requested else self.metadata_max_age_ms)",
        "(self.retry_backoff_ms if self.update_requested else self.metadata_max_age_ms / 2)",
        "an age-based metadata refresh is not sent before metadata.max.age.ms has passed since the last refresh",
        "Metadata.timeToNextUpdate: Math.max(lastSuccessfulRefreshMs + metadataExpireMs - nowMs, 0)",
    ),
    M(
        "producer-no-refresh-after-refused-connection",
        "clients/producer.py",
        "            self.last_refresh_ms = now\n        self.request_update()\n",
        "            self.last_refresh_ms = now\n",
        "a connection refused by a broker that is down asks for a metadata update (sent within retry.backoff.ms)",
        "NetworkClient.processDisconnection → DefaultMetadataUpdater.handleServerDisconnect: metadata.requestUpdate(); "
        "Sender.completeBatch: NetworkException is an InvalidMetadataException",
        more=[
            (
                "clients/producer.py",
                "        if err in INVALID_METADATA_ERRORS:\n            self.request_update()",
                '        if err in INVALID_METADATA_ERRORS and err != "NETWORK_EXCEPTION":\n            self.request_update()',
            )
        ],
    ),
    M(
        "producer-no-refresh-after-client-timeout",
        "clients/producer.py",
        '                    self._complete_batch(b, "NETWORK_EXCEPTION", -1)\n        self.request_update()\n',
        '                    self._complete_batch(b, "NETWORK_EXCEPTION", -1)\n',
        "a request timed out by the client (its connection closed) asks for a metadata update",
        "NetworkClient.handleTimedOutRequests → processDisconnection → handleServerDisconnect: metadata.requestUpdate(); "
        "Sender.completeBatch: NetworkException is an InvalidMetadataException",
        more=[
            (
                "clients/producer.py",
                "        if err in INVALID_METADATA_ERRORS:\n            self.request_update()",
                '        if err in INVALID_METADATA_ERRORS and err != "NETWORK_EXCEPTION":\n            self.request_update()',
            )
        ],
    ),
    M(
        "sticky-ignores-leaders",
        "clients/producer.py",
        "            available = [tp for tp in tps if tp in leaders and leaders[tp][0] >= 0]\n",
        "            available = list(tps)\n",
        "the sticky partitioner picks among the partitions that have a leader in the producer's metadata",
        "StickyPartitionCache.nextPartition: cluster.availablePartitionsForTopic(topic) (PartitionInfo.leader() != null)",
    ),
    M(
        "sticky-may-repeat",
        "clients/producer.py",
        "            avail.remove(self._sticky)  # a partition is listed once\n",
        "            pass\n",
        "a new batch's sticky partition differs from the previous one when more than one is available",
        "StickyPartitionCache.nextPartition: while (newPart == null || newPart.equals(oldPart)) draw again",
    ),
    M(
        "sticky-no-leader-excludes-previous",
        "clients/producer.py",
        "            self._sticky = tps[int(self.rng.integers(len(tps)))]\n",
        "            avail = [tp for tp in tps if tp != self._sticky] or list(tps)\n"
        "            self._sticky = avail[int(self.rng.integers(len(avail)))]\n",
        "with no partition led, the sticky partitioner draws from every partition, the previous one too",
        "StickyPartitionCache.nextPartition: availablePartitions.size() < 1 -> random % partitions.size()",
    ),
    M(
        "sticky-first-available",
        "clients/producer.py",
        "        self._sticky = avail[int(self.rng.integers(len(avail)))]\n",
        "        self._sticky = avail[0]\n",
        "the sticky partition is drawn at random among the available ones: every one is used",
        "StickyPartitionCache.nextPartition: availablePartitions.get(random % availablePartitions.size())",
    ),
    M(
        "producer-default-acks-all",
        "clients/producer.py",
        '    "acks": 1,\n',
        '    "acks": "all",\n',
        "a producer's default acks is 1 in 2.8 (all only from 3.0)",
        'ProducerConfig (2.8): define(ACKS_CONFIG, Type.STRING, "1", ...); KIP-679 changed it in 3.0',
    ),
    M(
        "producer-default-retries-zero",
        "clients/producer.py",
        '    "retries": 2147483647,\n',
        '    "retries": 0,\n',
        "a producer's default retries is Integer.MAX_VALUE (bounded by delivery.timeout.ms)",
        "ProducerConfig (2.8): define(RETRIES_CONFIG, Type.INT, Integer.MAX_VALUE, ...) (KIP-91, 2.1)",
    ),
    M(
        "producer-default-max-in-flight-1",
        "clients/producer.py",
        '    "max.in.flight.requests.per.connection": 5,\n',
        '    "max.in.flight.requests.per.connection": 1,\n',
        "a producer's default max.in.flight.requests.per.connection is 5",
        "ProducerConfig (2.8): define(MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, Type.INT, 5, atLeast(1), ...)",
    ),
    M(
        "consumer-reads-beyond-hw",
        "server/apis.py",
        "            start = offsets.get(tp, part.hw)\n            result[tp] = (part.hw, max(0, part.hw - start))",
        "            start = offsets.get(tp, part.hw)\n            result[tp] = (part.leo, max(0, part.leo - start))",
        "a consumer reads only up to the high watermark",
        "ReplicaManager.readFromLocalLog: FetchHighWatermark isolation for consumers (Partition.readRecords)",
    ),
    # -- the ledger and the log --------------------------------------------------------------------------
    M(
        "ledger-truncated-counted-committed",
        "clients/ledger.py",
        '    kept[acknowledged] = np.where(copies[acknowledged] > 0, "committed", "truncated")',
        '    kept[acknowledged] = "committed"',
        "an acknowledged batch the leader's log no longer holds is truncated, not committed",
        'docs/kafka-reference.md §5 ("Becoming follower, truncation, and acks=1 loss")',
    ),
    M(
        "ledger-failed-counted-pending",
        "clients/ledger.py",
        '    kept = np.array(cols["outcome"], dtype=object)',
        '    kept = np.array([o if o != "failed" else "pending" for o in cols["outcome"]], dtype=object)',
        "a batch whose error was returned to the application is failed, not pending",
        "Sender.failBatch → ProducerBatch.done(exception): the application's callback gets the error",
    ),
    M(
        "ledger-latency-from-creation",
        "clients/ledger.py",
        '    cols["latency_ms"] = cols["done_ms"] - cols["first_sent_ms"]',
        '    cols["latency_ms"] = cols["done_ms"] - cols["created_ms"]',
        "a batch's latency runs from the producer's first send of it, not from when the application handed it over",
        "issue 7's ledger definition; Kafka's request-latency starts at the send, record-queue-time before it",
    ),
    M(
        "producer-acks0-waits-for-the-broker",
        "clients/producer.py",
        "        if req.acks == 0:\n            for b in batches:",
        "        if False:\n            for b in batches:",
        "an acks=0 batch is done once its request is written: no response is expected, none is waited for",
        "Sender.sendProduceRequest: expectResponse = acks != 0; NetworkClient.handleCompletedSends; "
        "Sender.handleProduceResponse's acks=0 branch completes every batch NONE",
    ),
    M(
        "producer-wrong-leader-time-not-counted",
        "clients/producer.py",
        "                b.wrong_leader_ms += now - refused",
        "                pass",
        "a send refused NOT_LEADER_OR_FOLLOWER costs the batch the time until its next send",
        "issue 7 item 10: the clients' sends to a wrong leader and the time they lose",
    ),
    M(
        "producer-refresh-only-one-timer",
        "clients/producer.py",
        "        if self._refresh_at is None or at < self._refresh_at:",
        "        if self._refresh_at is None:",
        "a metadata update asked for is sent retry.backoff.ms after the last refresh, before the age-based one",
        "Metadata.timeToNextUpdate: max(timeToExpire (0 once an update is requested), timeToAllowUpdate)",
    ),
    M(
        "producer-failed-refused-batch-loses-nothing",
        "clients/producer.py",
        "            b.wrong_leader_ms = b.wrong_leader_ms_at(now)  # a refused batch that fails lost the time until then\n",
        "",
        "a batch refused NOT_LEADER_OR_FOLLOWER that then fails lost the time from that send to its failure",
        "issue 7 item 10: the clients' sends to a wrong leader and the time they lose",
    ),
    M(
        "ledger-wrong-leader-time-ignores-a-pending-retry",
        "clients/ledger.py",
        '    cols["wrong_leader_ms"] = np.array([b.wrong_leader_ms_at(now) for b in batches], dtype=np.float64)',
        '    cols["wrong_leader_ms"] = np.array([b.wrong_leader_ms for b in batches], dtype=np.float64)',
        "a refused batch not sent again by the run's end has lost the time from the refused send to the end",
        "issue 7 item 10: the clients' sends to a wrong leader and the time they lose",
    ),
    M(
        "summary-row-sums-instead-of-mean",
        "../ui/cluster.py",
        '                "orders-0: time a refused send costs its batch (ms, mean)": round(s["per_refused_send_ms"], 1),',
        '                "orders-0: time a refused send costs its batch (ms, mean)": round(s["wrong_leader_ms"], 1),',
        "the summary table shows what a refused send costs its batch on average, the figure lab 05 quotes",
        "issue 7 item 10; labs/05_truncation.ipynb, step 2",
    ),
    M(
        "ledger-no-duplicates",
        "clients/ledger.py",
        '    cols["duplicates"] = np.maximum(copies - 1, 0)',
        '    cols["duplicates"] = np.zeros_like(copies)',
        "a retried batch the leader appended twice is a duplicate (no idempotence)",
        "Sender.canRetry without idempotence: a retry after a lost response appends the batch again",
    ),
    M(
        "ledger-drops-pending",
        "clients/ledger.py",
        "    none: Counter = Counter()\n",
        '    batches = [b for b in batches if b.outcome != "pending"]\n    none: Counter = Counter()\n',
        "every batch handed over is in the ledger, pending ones too: the outcomes add up to what was handed over",
        "docs/kafka-reference.md, the ledger (kafka_lab/sim/ledger.py): conservation of the records handed over",
    ),
    M(
        "producer-loses-handed-over-batches",
        "clients/producer.py",
        "            self.batches.append(b)\n",
        "            if b.batch_id % 10:\n                self.batches.append(b)\n",
        "every batch the application hands over is a row of the ledger (a batch the producer forgets is lost "
        "from the accounting, not only from the log)",
        "KafkaProducer.send: every record appended to the accumulator completes its future (acknowledged or failed)",
    ),
    M(
        "leader-append-no-epoch-entry",
        "server/log.py",
        "        if not self.epochs or leader_epoch > self.epochs[-1][0]:\n            self.assign_epoch(leader_epoch, base)",
        "        if not self.epochs:\n            self.assign_epoch(leader_epoch, base)",
        "a leader's first append in a new leader epoch starts that epoch in the leader-epoch cache",
        "Log.appendAsLeader -> maybeAssignEpochStartOffset(batch.partitionLeaderEpoch, batch.baseOffset)",
    ),
    M(
        "log-truncate-at-end-keeps-epoch",
        "server/log.py",
        "            while self.epochs and self.epochs[-1][1] >= self.leo:\n"
        "                self.epochs.pop()\n            return []",
        "            return []",
        "truncating at or past the log end still drops epoch entries that start at the log end",
        "Log.truncateTo: targetOffset >= logEndOffset → leaderEpochCache.truncateFromEnd(logEndOffset)",
    ),
    M(
        "log-truncate-keeps-epochs",
        "server/log.py",
        "        while self.epochs and self.epochs[-1][1] >= self.leo:\n            self.epochs.pop()\n        return removed",
        "        return removed",
        "truncation drops the epoch entries that start at or after the new log end",
        "Log.truncateTo: leaderEpochCache.foreach(_.truncateFromEnd(targetOffset))",
    ),
    # -- lab 07: ZooKeeper, the controller at scale, fencing (1.0/1.1/2.8 KafkaController, ZooKeeperClient) ----
    M(
        "zk-session-expired",
        "zk/zookeeper.py",
        '            if not session.alive:\n                raise ZkError("SESSIONEXPIRED", getattr(op, "path", "/"))\n',
        "",
        "ZooKeeper refuses a request on a session it has ended (SESSIONEXPIRED)",
        "ZooKeeper's session semantics; KeeperException.Code.SESSIONEXPIRED (ZooKeeperClient, 1.1+)",
    ),
    M(
        "zk-version-condition",
        "zk/zookeeper.py",
        "            if o.version != -1 and o.path in self.znodes and self.znodes[o.path].version != o.version:\n",
        "            if False:\n",
        "a write with an expected version fails BADVERSION when the znode's version differs",
        "ZooKeeper setData/delete/check(version); Kafka's zkVersion conditional writes",
    ),
    M(
        "zk-create-exists",
        "zk/zookeeper.py",
        '                if present(o.path):\n                    raise ZkError("NODEEXISTS", o.path)\n',
        "",
        "create on an existing path fails NODEEXISTS (who wins the election)",
        "ZooKeeper create; KafkaController.elect: the losers see NODEEXISTS",
    ),
    M(
        "zk-watch-not-one-shot",
        "zk/zookeeper.py",
        "        for cb in self.watches.pop(path, {}).values():",
        "        for cb in list(self.watches.get(path, {}).values()):",
        "a watch fires once, then is gone",
        "ZooKeeper Programmer's Guide: watches are one-time triggers",
    ),
    M(
        "zk-closed-session-keeps-watches",
        "zk/zookeeper.py",
        "        for watchers in self.watches.values():  # its watches go with it: it is told nothing more\n"
        "            watchers.pop(session.id, None)\n",
        "",
        "an ended session's watches go with it",
        "ZooKeeper: a session's watches are removed when the session closes or expires",
    ),
    M(
        "election-log-not-the-whole-cluster",
        "zk/controller_scale.py",
        "        cluster = cluster_partitions(n) if cluster_size is None else int(cluster_size)\n",
        "        cluster = 25_000\n",
        "1.0 logs every partition of the cluster after each election: the line grows with the cluster (quadratic)",
        "apache/kafka PR #4075 (linked from KAFKA-6116): electLeaderForPartition logged partitionLeadershipInfo whole",
    ),
    M(
        "election-log-on-followed-partitions",
        "zk/controller_scale.py",
        "np.where(leads, election_log, 0.0)",
        "election_log",
        "only a led partition is elected (and logs the cluster); a followed one goes through the replica state machine",
        "1.0 KafkaController.doControlledShutdown: led -> PartitionStateMachine, followed -> ReplicaStateMachine",
    ),
    M(
        "failover-election-log-not-the-cluster",
        "zk/controller_scale.py",
        "        step = r_lat + reply + w_lat + reply + _election_log_ms(beh, n)\n",
        "        step = r_lat + reply + w_lat + reply + _election_log_ms(beh, 25_000)\n",
        "after a failover each 1.0 election logs every partition of the cluster (n), not a fixed-size line",
        "apache/kafka PR #4075 (linked from KAFKA-6116): electLeaderForPartition logged partitionLeadershipInfo whole",
    ),
    M(
        "failover-1-0-sends-as-it-elects",
        "zk/controller_scale.py",
        "        t = loaded + float(step.sum())\n    else:",
        "        t = loaded + np.cumsum(step)\n    else:",
        "1.0's failover elections go into one batch of requests, sent when every election is done",
        "1.0 PartitionStateMachine.triggerOnlinePartitionStateChange: newBatch, handleStateChange each, then "
        "sendRequestsToBrokers once",
    ),
    M(
        "zk-pipeline-no-window",
        "zk/zookeeper.py",
        "    n, w = lat.size, int(max_in_flight)\n",
        "    n, w = lat.size, int(max_in_flight) * (2 if int(max_in_flight) > 1 else 1)\n",
        "a pipelined client keeps at most zookeeper.max.in.flight.requests (10) requests in flight",
        "ZooKeeperClient.handleRequests: inFlightRequests semaphore (KafkaConfig ZkMaxInFlightRequests = 10)",
    ),
    M(
        "fencing-no-epoch-check-on-writes",
        "zk/fencing.py",
        '            op = Multi((Check("/controller_epoch", self.epoch_version), op))\n',
        "            pass\n",
        "every 2.1+ controller write is multi(check /controller_epoch at the version it set, write)",
        "KAFKA-6082; KafkaZkClient.retryRequestsUntilConnected with controllerEpochZkVersion (2.8)",
    ),
    M(
        "fencing-brokers-accept-old-epochs",
        "zk/fencing.py",
        "        if w.fencing and stale_epoch:\n",
        "        if False:\n",
        "a broker refuses a control request with a lower controller epoch than it has seen",
        "ReplicaManager / MetadataCache: STALE_CONTROLLER_EPOCH",
    ),
    M(
        "fencing-no-broker-epoch",
        "zk/fencing.py",
        "        if w.broker_epoch_check and stale_incarnation:\n",
        "        if False:\n",
        "a broker refuses a control request meant for its previous incarnation (KIP-380)",
        "KafkaApis.isBrokerEpochStale: STALE_BROKER_EPOCH",
    ),
    M(
        "fencing-partition-leader-epoch",
        "zk/fencing.py",
        '                if st["leader_epoch"] <= current:\n',
        "                if False:\n",
        "a LeaderAndIsr with a leader epoch not newer than the partition's is ignored",
        "ReplicaManager.becomeLeaderOrFollower: requestLeaderEpoch > currentLeaderEpoch",
    ),
    M(
        "fencing-reelect-does-not-wait",
        "zk/fencing.py",
        "        if self.env.now < b.busy_until:  # the event waits behind the one being processed\n",
        "        if False:\n",
        "the controller has one event thread: its own Reelect waits behind the event in progress",
        "ControllerEventManager (one ControllerEventThread); ControllerChangeHandler.handleDeletion → Reelect",
    ),
    M(
        "fencing-bounce-unseen",
        "zk/fencing.py",
        "        bounced = known and self.broker_epoch_check and czxid > ctl.broker_epochs.get(bid, -1)\n",
        "        bounced = False\n",
        "the controller treats a broker whose registration czxid grew as bounced",
        "KafkaController.processBrokerChange: bouncedBrokerIds (KIP-380)",
    ),
    M(
        "fencing-off-keeps-broker-epoch",
        "zk/fencing.py",
        "        broker_epoch_check=fencing,\n",
        "        broker_epoch_check=True,\n",
        "the zombie experiment's 'fencing off' is every 2.2 fence off, the broker epoch (KIP-380, 2.2) included",
        "KIP-380 (Kafka 2.2): the broker epoch in every control request, STALE_BROKER_EPOCH",
    ),
    # -- the model's inputs (kafka_lab/sim/cluster.py, incidents.py) -------------------------------------------
    M(
        "incident-ignores-retry-backoff",
        "incidents.py",
        '            retry_backoff_ms=opts["retry_backoff_ms"],\n',
        "",
        "the incidents' retry_backoff_ms reaches the producers (it was once accepted and ignored)",
        "ProducerConfig retry.backoff.ms (2.8)",
    ),
    M(
        "control-plane-by-truthiness",
        "cluster.py",
        "    if not isinstance(control_plane, dict):\n",
        "    if not isinstance(control_plane, dict):\n        return dict.fromkeys(ids, bool(control_plane))\n",
        "control_plane is a bool or {broker id: bool}: 'off' must not turn the control plane on",
        "KIP-291: control.plane.listener.name set per broker, or not",
    ),
    M(
        "topic-name-any-character",
        "cluster.py",
        "        if not _LEGAL_TOPIC_NAME.fullmatch(name):\n",
        "        if False:\n",
        "a topic name holds only ASCII letters, digits, '.', '_' and '-' (InvalidTopicException)",
        "Topic.validate: containsValidPattern (clients/.../common/internals/Topic.java)",
    ),
    M(
        "topic-name-python-length",
        "cluster.py",
        'if len(name.encode("utf-16-le")) // 2 > MAX_TOPIC_NAME_LENGTH:',
        "if len(name) > MAX_TOPIC_NAME_LENGTH:",
        "a topic name is at most 249 characters as Java counts them (UTF-16 code units), checked before the characters",
        "Topic.validate: topic.length() > MAX_NAME_LENGTH",
    ),
    M(
        "topic-name-empty-accepted",
        "cluster.py",
        "        if not name:\n",
        "        if False:\n",
        "an empty topic name is refused with its own message",
        'Topic.validate: topic.isEmpty() -> "Topic name is illegal, it can\'t be empty"',
    ),
    M(
        "topic-name-collision-accepted",
        "cluster.py",
        "            if colliding:\n",
        "            if False:\n",
        "a topic whose name equals an existing one's once '.' reads as '_' is refused (their metric names collide)",
        'AdminZkClient.validateTopicCreate: Topic.hasCollision -> "collides with existing topics"',
    ),
    M(
        "assignment-duplicate-replicas",
        "cluster.py",
        "        if any(len(set(r)) != len(r) for r in replicas.values()):\n",
        "        if False:\n",
        "no broker holds two replicas of one partition",
        "AdminZkClient.validateTopicCreate: reps.size != reps.toSet.size -> InvalidReplicaAssignmentException",
    ),
    M(
        "assignment-mixed-replication-factors",
        "cluster.py",
        "        if len({len(r) for r in replicas.values()}) != 1:\n",
        "        if False:\n",
        "every partition of a topic has the same number of replicas (and a topic has partitions)",
        "AdminZkClient.validateTopicCreate: values.map(_.size).toSet.size != 1 -> InvalidReplicaAssignmentException",
    ),
    M(
        "assignment-partition-ids-any",
        "cluster.py",
        "        if set(replicas) != set(range(len(replicas))):\n",
        "        if False:\n",
        "a topic's partition ids are 0 .. n-1",
        'AdminZkClient.validateTopicCreate: "partitions should be a consecutive 0-based integer sequence"',
    ),
    M(
        "create-topic-half-created",
        "cluster.py",
        "        self._validate_topic_create(name, assignment)\n"
        '        unclean = boolean_setting("unclean.leader.election.enable", unclean_leader_election_enable)\n',
        '        unclean = boolean_setting("unclean.leader.election.enable", unclean_leader_election_enable)\n',
        "a refused topic leaves nothing behind: every check passes before the first partition is created",
        "AdminZkClient.createTopicWithAssignment: validateTopicCreate before writeTopicPartitionAssignment",
        more=(
            (
                "cluster.py",
                "        tps = []\n        for p, replicas in sorted(assignment.items()):\n",
                "        tps = []\n        for p, replicas in sorted(assignment.items()):\n"
                "            self._validate_topic_create(name, {**{q: assignment[q] for q in range(p)}, p: replicas})\n",
            ),
        ),
    ),
    M(
        "create-topic-assignment-with-counts",
        "cluster.py",
        "        if assignment is not None and (partitions is not None or replication_factor is not None):\n",
        "        if False:\n",
        "a topic creation that gives an assignment and a partition count or replication factor is refused "
        "(InvalidRequestException), not half ignored",
        "ZkAdminManager.createTopics: (numPartitions != NO_NUM_PARTITIONS || replicationFactor != NO_REPLICATION_FACTOR)"
        " && !assignments.isEmpty",
    ),
    Mutation(
        "failure-impact-empty-replicas",
        (
            (
                "kafka_lab/assignment/analysis.py",
                "        if len(reps) == 0:\n"
                '            raise InvalidReplicaAssignmentException(f"Cannot have replication factor of 0 for '
                'partition id {p}.")\n',
                "",
            ),
        ),
        "a partition with no replica is refused by the failure tables, as Kafka refuses it (not an IndexError)",
        "AdminZkClient.validateReplicaAssignment: Cannot have replication factor of 0 for partition id <p>.",
    ),
    Mutation(
        "broker-id-above-reserved-max",
        (
            (
                "kafka_lab/listeners/resolve.py",
                '            -1 <= broker_id <= p.get("reserved.broker.max.id", MAX_RESERVED_BROKER_ID),',
                "            -1 <= broker_id,",
            ),
        ),
        "a configured broker.id is at most reserved.broker.max.id (1000 by default) while ids are generated",
        "KafkaConfig.validateValues: require(brokerId >= -1 && brokerId <= maxReservedBrokerId, ...)",
    ),
    M(
        "broker-config-drops-reserved-max-id",
        "server/config.py",
        '_TYPED_LISTENER_KEYS = ("port", "advertised.port", "broker.id", "reserved.broker.max.id", "broker.id.generation.enable")',
        '_TYPED_LISTENER_KEYS = ("port", "advertised.port", "broker.id")',
        "a broker's reserved.broker.max.id and broker.id.generation.enable reach the broker.id check, as ints or bools",
        "KafkaConfig: reserved.broker.max.id (INT), broker.id.generation.enable (BOOLEAN)",
    ),
    M(
        "acks-bool-accepted",
        "clients/producer.py",
        "    if isinstance(acks, (bool, np.bool_)) or not isinstance(acks, numbers.Integral):\n",
        "    if not isinstance(acks, numbers.Integral):\n",
        "acks=True is not acks=1: a bool is no acks value (Python counts it an int)",
        'ProducerConfig: acks is Type.STRING, ValidString.in("all", "-1", "0", "1")',
    ),
    M(
        "acks-string-numbers-refused",
        "clients/producer.py",
        '_ACKS = {"all": -1, "-1": -1, "0": 0, "1": 1}',
        '_ACKS = {"all": -1, "-1": -1}',
        "acks takes the strings Kafka takes: all, -1, 0, 1",
        'ProducerConfig: ValidString.in("all", "-1", "0", "1")',
    ),
    M(
        "acks-string-untrimmed",
        "clients/producer.py",
        "        value = java_trim(acks)\n",
        "        value = acks\n",
        "an acks string is trimmed before it is validated, as ConfigDef trims every STRING",
        "ConfigDef.parseType: case STRING -> trimmed",
    ),
    M(
        "producer-unknown-partition-accepted",
        "clients/producer.py",
        "            if (topic, p) not in known:\n",
        "            if False:\n",
        "a producer's fixed partitions are partitions of its topic (else its batches would wait forever)",
        "KafkaProducer.waitOnMetadata: TimeoutException after max.block.ms for a partition not in metadata",
    ),
    M(
        "election-of-unknown-partition",
        "zk/controller.py",
        "        if st is None:\n            ids = sorted(",
        "        if False:\n            ids = sorted(",
        "an election for a partition the controller does not know is UNKNOWN_TOPIC_OR_PARTITION",
        "KafkaController.processReplicaLeaderElection: unknownPartitions -> UNKNOWN_TOPIC_OR_PARTITION",
    ),
    M(
        "election-checked-at-call",
        "zk/controller.py",
        "        if at_ms <= self.env.now:\n            refused = self._election_refusal(tp, new_leader)\n",
        "        if True:\n            refused = self._election_refusal(tp, new_leader)\n",
        "an election asked for later is checked when the controller decides it: a partition created meanwhile "
        "may be elected",
        "KafkaController.processReplicaLeaderElection runs when the controller's event thread handles the election",
    ),
    M(
        "election-unchecked-when-decided",
        "zk/controller.py",
        "            if refused is not None:\n                self._election_failed(tp, new_leader, st, refused[0])\n"
        "                return\n",
        "",
        "a partition deleted before the controller decides its election fails UNKNOWN_TOPIC_OR_PARTITION, the run "
        "goes on",
        "KafkaController.processReplicaLeaderElection: allPartitions looked up when the event is processed",
    ),
    M(
        "election-during-deletion",
        "zk/controller.py",
        "        if tp[0] in self.deleting:\n",
        "        if False:\n",
        'no leader is elected for a topic queued for deletion: INVALID_TOPIC_EXCEPTION, "The topic is being deleted"',
        "KafkaController.processReplicaLeaderElection: topicDeletionManager.isTopicQueuedUpForDeletion",
    ),
    M(
        "deletion-queue-never-emptied",
        "zk/controller.py",
        "                self.deleting.discard(topic)\n",
        "",
        "a topic leaves the deletion queue when its deletion completes (its name, created again, is a live topic)",
        "TopicDeletionManager.completeDeleteTopic: controllerContext.removeTopic, topicsToBeDeleted -= topic",
    ),
    M(
        "election-write-after-deletion",
        "zk/controller.py",
        "            if self.state.get(tp) is not st:",
        "            if False:",
        "an election whose partition's deletion completed while its state was being written changes nothing",
        "KafkaController: one event thread, so a deletion never completes in the middle of an election",
    ),
    M(
        "options-non-finite-accepted",
        "common/options.py",
        "        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):\n",
        "        if isinstance(v, bool) or not isinstance(v, numbers.Real):\n",
        "an experiment's numeric option is a finite number: NaN and infinities are refused (they once hung a run)",
        "the model's own options (kafka_lab/sim/options.py), not a Kafka setting",
    ),
    M(
        "shutdown-start-before-the-producers",
        "shutdown_cluster.py",
        '    "start_ms": (False, 1, False),\n',
        '    "start_ms": (False, float("-inf"), False),\n',
        "the shutdown starts at least 1 ms in: every producer hands over its first batch 1 ms before it",
        "the model's own option (kafka_lab/sim/shutdown_cluster.py), not a Kafka setting",
    ),
    M(
        "shutdown-until-zero-as-default",
        "shutdown_cluster.py",
        '    "until_ms": (False, 0, True),\n',
        '    "until_ms": (False, 0, False),\n',
        "until_ms=0 is refused, not read as 'not given' (run until the leaders have moved)",
        "the model's own option (kafka_lab/sim/shutdown_cluster.py), not a Kafka setting",
    ),
    M(
        "restart-race-times-unchecked",
        "zk/fencing.py",
        "    check_options({k: v for k, v in given.items() if v is not None}, _RESTART_RACE_RANGES)\n",
        "",
        "the restart race's restart_ms (> 0) and backlog_ms (>= 0) are finite numbers in range",
        "the model's own options (kafka_lab/sim/fencing.py), not Kafka settings",
    ),
    M(
        "zombie-times-unchecked",
        "zk/fencing.py",
        "    check_options({k: v for k, v in given.items() if v is not None}, _ZOMBIE_RANGES)\n",
        "",
        "the zombie's pause_ms, reconnect_ms, event_lag_ms (>= 0), pause_at_ms (>= 50) and session_timeout_ms are "
        "finite numbers in range (NaN once ran into a KeyError inside the run)",
        "the model's own options (kafka_lab/sim/fencing.py), not Kafka settings",
    ),
    M(
        "election-session-timeout-unchecked",
        "zk/fencing.py",
        '    check_options({"session_timeout_ms": session_timeout_ms}, _SESSION_TIMEOUT_RANGE)\n',
        "",
        "controller_election's session_timeout_ms is a finite whole number more than 0 (NaN once meant no failover)",
        "KafkaConfig: zookeeper.session.timeout.ms is an INT; the model's option (kafka_lab/sim/fencing.py)",
    ),
    M(
        "session-timeout-zero-accepted",
        "zk/fencing.py",
        '_SESSION_TIMEOUT_RANGE = {"session_timeout_ms": (True, 0, True)}',
        '_SESSION_TIMEOUT_RANGE = {"session_timeout_ms": (True, 0, False)}',
        "a session timeout of 0 is refused by the experiments' own check, with the range in the message",
        "ZooKeeper: a session lives for its timeout; the model's option (kafka_lab/sim/fencing.py)",
    ),
    M(
        "session-timeout-fraction-accepted",
        "zk/fencing.py",
        '_SESSION_TIMEOUT_RANGE = {"session_timeout_ms": (True, 0, True)}',
        '_SESSION_TIMEOUT_RANGE = {"session_timeout_ms": (False, 0, True)}',
        "a session timeout is a whole number of ms, as zookeeper.session.timeout.ms (an INT) is",
        "KafkaConfig: define(ZkSessionTimeoutMsProp, INT, ...)",
    ),
    # -- restarts and controller changes (KafkaController, KafkaServer; kafka_lab/sim/lifecycle.py) ---------
    M(
        "cs-new-leader-in-isr",
        "zk/controller.py",
        '                        if r in st["isr"] and r in self.live_brokers and r not in self.shutting_down',
        "                        if r in self.live_brokers and r not in self.shutting_down",
        "a controlled shutdown moves leadership only to a live ISR member that is not shutting down",
        "ControlledShutdownPartitionLeaderElectionStrategy: assignment.find(isr.contains && live && !shuttingDown)",
    ),
    M(
        "cs-stop-followers",
        "zk/controller.py",
        '                self.send(broker, "StopReplica", partitions=followed, delete_partitions=False, at_ms=self.env.now)\n',
        "                pass\n",
        "a controlled shutdown sends StopReplica(deletePartition=false) for the partitions the broker follows",
        "KafkaController.doControlledShutdown: addStopReplicaRequestForBrokers(Seq(id), partition, deletePartition = false)",
    ),
    M(
        "cs-stale-broker-epoch",
        "zk/controller.py",
        '            if broker is not None and p.get("broker_epoch", 0) < broker.broker_epoch:',
        "            if False:",
        "a ControlledShutdown from an older broker epoch is STALE_BROKER_EPOCH",
        "KafkaController.doControlledShutdown: brokerEpoch < cachedBrokerEpoch",
    ),
    M(
        "cs-retries",
        "zk/lifecycle.py",
        "            yield env.timeout(CONTROLLED_SHUTDOWN_RETRY_BACKOFF_MS)\n",
        "            break\n",
        "a failed controlled shutdown is retried after controlled.shutdown.retry.backoff.ms, up to the retries",
        "KafkaServer.controlledShutdown: remainingRetries, Thread.sleep(controlledShutdownRetryBackoffMs)",
    ),
    M(
        "down-broker-refuses",
        "network/socket_server.py",
        "        if not self.processors:\n            raise ConnectionRefused(",
        "        if False:\n            raise ConnectionRefused(",
        "a broker whose process is not running refuses connections",
        "KafkaServer.shutdown: SocketServer.shutdown (its acceptors stop listening)",
    ),
    M(
        "stopped-broker-keeps-running",
        "server/node.py",
        "            if proc.is_alive and proc is not active:\n                proc.interrupt(_STOPPED)\n",
        "            pass\n",
        "a stopped broker's threads stop with its process: they handle, send and append nothing while it is down",
        "KafkaServer.shutdown: socketServer, dataPlaneRequestHandlerPool, replicaManager (fetchers) shut down",
        more=[("server/node.py", "        self.incarnation += 1\n", "")],
        review=True,
    ),
    M(
        "stopped-broker-keeps-fetching",
        "server/fetcher.py",
        "        self.broker.node.thread(self._run())",
        "        self.env.process(self._run())",
        "a follower's fetcher threads belong to its process: a stopped broker fetches nothing",
        "KafkaServer.shutdown → ReplicaManager.shutdown → replicaFetcherManager.shutdown()",
        review=True,
    ),
    M(
        "stopped-broker-keeps-connections",
        "network/socket_server.py",
        "        for conn in list(self.connections):\n            conn.server_close()\n",
        "        pass\n",
        "the connections to a broker close when its process stops: its clients see disconnections at once",
        "SocketServer.shutdown; NetworkClient.handleDisconnections (requests in flight complete disconnected)",
    ),
    M(
        "controller-work-outlives-its-broker",
        "zk/controller.py",
        "                        if not owner.online:\n                            return  # the controller's broker is not",
        "                        if False:\n                            return  # the controller's broker is not",
        "the controller's work runs in its broker's process: a controller whose broker stopped decides nothing",
        "KafkaServer.shutdown → KafkaController.shutdown (the controller-event-thread and request senders stop)",
        more=[
            (
                "zk/controller.py",
                "                if node is not None and node.incarnation != incarnation:",
                "                if False:",
            )
        ],
        review=True,
    ),
    M(
        "controller-channel-outlives-its-broker",
        "zk/controller.py",
        "        if own is not None and not own.online:\n            return  # the controller's broker stopped",
        "        if False:\n            return  # the controller's broker stopped",
        "the controller's request senders stop with its broker's process: nothing it had queued goes out",
        "KafkaController.shutdown → ControllerChannelManager.shutdown (every RequestSendThread stops)",
    ),
    M(
        "controller-elected-after-its-broker-stopped",
        "zk/controller.py",
        "                if self.brokers[winner].online:\n                    break\n",
        "                break\n",
        "a broker whose process stops during a controller election does not become the controller",
        "KafkaController.elect: /controller is an ephemeral znode of the winner's session; it goes with the session",
    ),
    M(
        "fetcher-no-backoff-on-disconnect",
        "server/fetcher.py",
        "            if until <= now:\n                self.partitions[tp] = now + REPLICA_FETCH_BACKOFF_MS\n",
        "            pass\n",
        "a fetch that fails whole waits replica.fetch.backoff.ms, then delays its partitions as much again",
        "AbstractFetcherThread.processFetchRequest: partitionMapCond.await(fetchBackOffMs); "
        "handlePartitionsWithErrors → delayPartitions(partitions, fetchBackOffMs)",
    ),
    M(
        "controller-channel-no-resend",
        "zk/controller.py",
        "            self.queue.appendleft(again)\n",
        "",
        "a control request lost with its connection is sent again, 100 ms later, on a new connection",
        "ControllerChannelManager.RequestSendThread.doWork: while (isRunning && !isSendSuccessful) ... backoff()",
    ),
    M(
        "producer-drains-to-refused-node",
        "clients/producer.py",
        "            if self.connection(bid) is None:  # not ready (Sender drops the node): its batches wait",
        "            if False:",
        "the producer drains no batch for a broker it has no connection to (refused, or in its reconnect backoff)",
        "Sender.sendProducerData: if (!this.client.ready(node, now)) iter.remove()",
        review=True,
    ),
    M(
        "acks0-error-keeps-connection",
        "server/apis.py",
        '            req.close_connection = req.error != "NONE"',
        "            req.close_connection = False",
        "an acks=0 produce that fails on some partition closes its connection, so the producer refreshes its metadata",
        "KafkaApis.handleProduceRequest: if (produceRequest.acks == 0) ... if (errorInResponse) closeConnection(...)",
        review=True,
    ),
    M(
        "ledger-offline-is-truncated",
        "clients/ledger.py",
        "    if len(lost) and offline:",
        "    if False:",
        "an acknowledged batch of a partition with no leader that a replica's log holds is offline, not lost",
        "ReplicaStateMachine.doRemoveReplicasFromIsr keeps the ISR's last member; it leads again when it returns",
        review=True,
    ),
    M(
        "ledger-acks0-refused-is-truncated",
        "clients/ledger.py",
        '            kept[i] = "unwritten" if req is not None and req.end == req.end else "pending"',
        '            kept[i] = "truncated"',
        "an acks=0 batch no log ever held is unwritten (never in a log), or pending while no broker has handled it",
        "KafkaApis.handleProduceRequest: a partition error appends nothing (acks=0: no response, the connection closed)",
        review=True,
    ),
    M(
        "restart-forgets-epochs",
        "server/replica_manager.py",
        "            p.leader, p.leader_epoch = -1, -1\n",
        "            pass\n",
        "a restarted broker keeps its logs but not the leader epochs it knew: the controller's LeaderAndIsr applies",
        "ReplicaManager starts with no partitions: getOrCreatePartition on the first LeaderAndIsr",
    ),
    M(
        "failover-new-epoch",
        "zk/controller.py",
        "            self.id, self.epoch = winner, self.epoch + 1",
        "            self.id, self.epoch = winner, self.epoch",
        "a new controller increments /controller_epoch",
        "KafkaZkClient.registerControllerAndIncrementControllerEpoch",
    ),
    M(
        "election-needs-controller",
        "zk/controller.py",
        '            if self.id < 0:\n                self._election_failed(tp, new_leader, st, "NOT_CONTROLLER")\n',
        '            if False:\n                self._election_failed(tp, new_leader, st, "NOT_CONTROLLER")\n',
        "no leader is elected while there is no controller (between a resignation and the next election)",
        "KafkaController: elections run in the active controller's event thread (isActive)",
    ),
    M(
        "broker-failure-keeps-leader",
        "zk/controller.py",
        "                elected = self._elect_offline()\n                changed = [",
        "                elected = []\n                changed = [",
        "a broker that leaves while it still leads loses that leadership: a live ISR member takes over, or none",
        "KafkaController.onBrokerFailure -> onReplicasBecomeOffline: OfflinePartitionLeaderElectionStrategy",
    ),
    M(
        "offline-election-isr-order",
        "zk/controller.py",
        '        leader = next((r for r in st["replicas"] if r in online and r in isr), None)',
        "        leader = next((r for r in isr if r in online), None)",
        "an offline partition elects the first live ISR member in the order of its assignment, not of its ISR",
        "Election.leaderForOffline: assignment.find(id => liveReplicas.contains(id) && isr.contains(id))",
    ),
    M(
        "offline-election-unclean",
        "zk/controller.py",
        "        if leader is not None or tp[0] not in self.unclean_topics:\n",
        "        if leader is not None:\n",
        "unclean.leader.election.enable=false: a replica outside the ISR never leads an offline partition",
        "Election.leaderForOffline with uncleanLeaderElectionEnabled=false (2.8's default)",
    ),
    M(
        "offline-replica-empties-isr",
        "zk/controller.py",
        '        isr = st["isr"] if len(st["isr"]) == 1 else [r for r in st["isr"] if r != bid]',
        '        isr = [r for r in st["isr"] if r != bid]',
        "a replica going offline leaves the ISR, except the ISR's last member, which stays",
        "ReplicaStateMachine.doRemoveReplicasFromIsr: if (leaderAndIsr.isr.size == 1) leaderAndIsr.isr",
    ),
    M(
        "startup-no-offline-election",
        "zk/controller.py",
        "            if self._offline():\n                yield self.env.timeout(self.zk_latency_ms)\n                elected",
        "            if False:\n                yield self.env.timeout(self.zk_latency_ms)\n                elected",
        "a broker that starts can bring back an offline partition whose ISR it is in: the controller elects",
        "KafkaController.onBrokerStartup: partitionStateMachine.triggerOnlinePartitionStateChange()",
    ),
    M(
        "failover-keeps-dead-leaders",
        "zk/controller.py",
        "            if gone or self._offline():\n",
        "            if False:\n",
        "a new controller takes the replicas of brokers that are gone offline and elects for offline partitions",
        "KafkaController.onControllerFailover: replicaStateMachine.startup(), partitionStateMachine.startup()",
    ),
    M(
        "offline-election-shutting-down-online",
        "zk/controller.py",
        "        return self.live_brokers - self.shutting_down",
        "        return set(self.live_brokers)",
        "an offline election neither elects a broker in controlled shutdown nor keeps it in the new ISR",
        "ControllerContext.isReplicaOnline: liveBrokerIds = liveBrokerEpochs.keySet.diff(shuttingDownBrokerIds)",
    ),
    M(
        "broker-failure-touches-deleting-topic",
        "zk/controller.py",
        ' or bid in self.state[tp]["isr"]) and tp[0] not in self.deleting',
        ' or bid in self.state[tp]["isr"])',
        "a broker failure leaves the partitions of a topic being deleted as they are",
        "KafkaController.onReplicasBecomeOffline: partitionsWithOfflineLeader leaves out topics queued for deletion",
    ),
    M(
        "offline-election-failure-unrecorded",
        "zk/controller.py",
        '                self.failed_state_changes.append((self.env.now, *tp, "OfflinePartition", OFFLINE_STRATEGY))\n',
        "                pass\n",
        "an offline partition's election that finds no live ISR member is kept as failed (an ERROR line)",
        "ZkPartitionStateMachine.electLeaderForPartitions: logFailedStateChange for each failed election",
    ),
    M(
        "controlled-shutdown-failure-unrecorded",
        "zk/controller.py",
        '                    self.failed_state_changes.append((self.env.now, *tp, "OnlinePartition", SHUTDOWN_STRATEGY))\n',
        "                    pass\n",
        "a controlled shutdown's move that finds no other live ISR member is logged as a failed state change",
        "KafkaController.doControlledShutdown -> ControlledShutdownPartitionLeaderElectionStrategy -> logFailedStateChange",
    ),
    M(
        "offline-election-tries-deleting-topic",
        "zk/controller.py",
        'if st["leader"] not in live and tp[0] not in deleting and (topic is None or tp[0] == topic)',
        'if st["leader"] not in live and (topic is None or tp[0] == topic)',
        "the offline elections leave out the partitions of a topic queued for deletion",
        "PartitionStateMachine.triggerOnlineStateChangeForPartitions: !isTopicQueuedUpForDeletion(partition.topic)",
    ),
    M(
        "unclean-election-keeps-the-old-isr",
        "zk/controller.py",
        "                self._write_state(tp, leader=leader, isr=[leader])\n",
        '                self._write_state(tp, leader=leader, isr=st["isr"])\n',
        "an unclean election writes the new leader alone as the ISR",
        "Election.leaderForOffline: if (isr.contains(leader)) ... else List(leader)",
    ),
    M(
        "unclean-election-last-in-assignment",
        "zk/controller.py",
        '        leader = next((r for r in st["replicas"] if r in online), None)\n',
        '        leader = next((r for r in reversed(st["replicas"]) if r in online), None)\n',
        "an unclean election takes the first live replica in assignment order",
        "PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection: assignment.find(liveReplicas.contains)",
    ),
    M(
        "unclean-enable-triggers-nothing",
        "zk/controller.py",
        "            if self._offline(topic):\n",
        "            if False:\n",
        "turning unclean election on for a topic tries its offline partitions at once",
        "KafkaController.processTopicUncleanLeaderElectionEnable: triggerOnlinePartitionStateChange(topic)",
    ),
    M(
        "unclean-enable-tries-every-topic",
        "zk/controller.py",
        "                elected = self._elect_offline(topic)\n",
        "                elected = self._elect_offline()\n",
        "turning unclean election on for a topic tries that topic's offline partitions only",
        "PartitionStateMachine.triggerOnlinePartitionStateChange(topic): partitionsInStates(topic, ...)",
    ),
    M(
        "unclean-config-outlives-its-topic",
        "zk/controller.py",
        "                self.unclean_topics.discard(topic)  # /config/topics/<topic> goes with it\n",
        "",
        "a deleted topic's unclean.leader.election.enable goes with it: the name created again has the default",
        "TopicDeletionManager.completeDeleteTopic: zkClient.deleteTopicConfigs",
    ),
    M(
        "boolean-config-lenient",
        "server/config.py",
        "    if isinstance(raw, bool):\n        return raw\n",
        "    if not isinstance(raw, str):\n        return bool(raw)\n",
        "a BOOLEAN config is a bool or the text true/false; anything else is refused with Kafka's message",
        "ConfigDef.parseType, case BOOLEAN",
    ),
    M(
        "broker-failure-drops-other-elections",
        "zk/controller.py",
        "                self._publish(list(dict.fromkeys(changed + elected)), leader_and_isr=True)",
        "                self._publish(changed, leader_and_isr=True)",
        "an election a broker failure's trigger makes is sent, also of a partition the broker did not lead",
        "PartitionStateMachine.doElectLeaderForPartitions: addLeaderAndIsrRequestForBrokers for every election made",
    ),
    M(
        "startup-sends-no-online-replica-update-metadata",
        "zk/controller.py",
        "                for other in sorted(self.live_brokers & set(self.brokers)):\n"
        '                    self.send(self.brokers[other], "UpdateMetadata", states, batch=batch)\n',
        "",
        "a starting broker's LeaderAndIsr batch carries UpdateMetadata for its partitions to every live broker",
        "ControllerBrokerRequestBatch.addLeaderAndIsrRequestForBrokers: addUpdateMetadataRequestForBrokers(all live)",
    ),
    M(
        "leader-and-isr-log-ignores-topic-min-isr",
        "server/replica_manager.py",
        "                min_isr = self.topic_min_isr.get(tp[0], self.min_insync_replicas)\n",
        "                min_isr = self.min_insync_replicas\n",
        "a log a LeaderAndIsr creates has its topic's min.insync.replicas, not only the broker's default",
        "LogManager.getOrCreateLog: LogConfig from the topic's config in ZooKeeper",
    ),
    M(
        "controller-lines-not-in-queue-order",
        "../logs/render.py",
        "        for order, cb, line in sorted(entries, key=lambda e: e[0]):\n",
        "        for order, cb, line in entries:\n",
        "the controller's Sending lines follow the order its batches were queued in (at one instant too)",
        "KafkaController.onBrokerStartup: sendUpdateMetadataRequest, then handleStateChanges(OnlineReplica)",
    ),
    M(
        "update-metadata-line-per-request",
        "../logs/render.py",
        '                group = um_groups.setdefault(p["batch"], [order, [], cb, len(states)])\n',
        "                group = um_groups.setdefault(r.correlation_id, [order, [], cb, len(states)])\n",
        "a batch's UpdateMetadata is logged once, with all the brokers it goes to",
        "ControllerBrokerRequestBatch.sendUpdateMetadataRequests: one line, updateMetadataRequestBrokerSet",
    ),
    M(
        "truncation-without-producer-state",
        "../logs/render.py",
        '                add(t, bid, SERVER, m.loading_producer_state(name, off(tp, d["offset"])))\n',
        "",
        "a truncation that removes records ends by rebuilding the producer state, and says so",
        "Log.completeTruncation -> rebuildProducerState: Loading producer state till offset ...",
    ),
    M(
        "truncation-below-hw-not-warned",
        "../logs/render.py",
        '                if d["hw"] > d["offset"]:  # completeTruncation lowers the high watermark to the new log end\n',
        "                if False:\n",
        "a truncation below the high watermark lowers it, and Log warns: Non-monotonic update of high watermark",
        "Log.completeTruncation -> updateHighWatermark -> updateHighWatermarkMetadata: warn (2.7.1+, KAFKA-12153)",
    ),
    M(
        "non-monotonic-hw-old-position-unknown",
        "../logs/render.py",
        "    if hw == leo_before:\n",
        "    if False:\n",
        "a high watermark loaded at the log end keeps the log end's segment and position (LogOffsetMetadata)",
        "Log.updateHighWatermark: highWatermark >= logEndOffset -> endOffsetMetadata; Partition.createLog at restart",
    ),
    M(
        "truncation-event-hw-after",
        "server/replica_manager.py",
        "            hw=hw_before,\n",
        "            hw=p.hw,\n",
        "the truncation's WARN compares the new high watermark with the one before the truncation",
        "Log.updateHighWatermarkMetadata: newHighWatermark.messageOffset < highWatermarkMetadata.messageOffset",
    ),
    M(
        "segment-position-not-carried-to-the-next-copy",
        "../logs/scenario.py",
        "        advance[(POSITION, tp)] = max((segment_bytes(len(log.batches), log.leo) for log in logs), default=0)\n",
        "",
        "a partition's log goes on from the copies before: a position in its segment grows with the bytes they wrote",
        "LogOffsetMetadata.relativePositionInSegment: the byte position in the active segment",
    ),
    M(
        "new-partition-without-live-replica-gets-no-leader-ever",
        "zk/controller.py",
        "            if tp in self.new_partitions:  # NewPartition: initialized, not elected\n",
        "            if False:\n",
        "a partition created with no live replica is initialized (leader = first live replica, ISR = the live "
        "ones) when a replica is back, not elected from an ISR it never had",
        "PartitionStateMachine.doHandleStateChanges: uninitializedPartitions -> initializeLeaderAndIsrForPartitions",
    ),
    M(
        "new-partition-leadership-sent-before-it-has-one",
        "zk/controller.py",
        "        tps = [tp for tp in tps if tp not in self.new_partitions]  # a NewPartition has no leadership to send\n",
        "",
        "a NewPartition has no leadership: no LeaderAndIsr or UpdateMetadata names it until it is initialized",
        "ControllerBrokerRequestBatch.addLeaderAndIsrRequestForBrokers / updateMetadataRequestPartitionInfo: only "
        "partitions with partitionLeadershipInfo",
    ),
    M(
        "new-partition-failure-logged-as-an-election",
        "../logs/render.py",
        '                if was == "NewPartition":  # its "strategy" is the live brokers its exception lists\n',
        "                if False:\n",
        "a NewPartition's failed initialization is logged with its own exception: No assigned replica is alive",
        "PartitionStateMachine.initializeLeaderAndIsrForPartitions: StateChangeFailedException(failMsg)",
    ),
    M(
        "broker-failure-skips-offline-trigger",
        "zk/controller.py",
        "            if not changed and self._offline():\n",
        "            if False:\n",
        "every broker failure tries the offline partitions again, also one whose broker held no replica of them",
        "KafkaController.onReplicasBecomeOffline: partitionStateMachine.triggerOnlinePartitionStateChange()",
    ),
    M(
        "failed-offline-election-no-exception",
        "../logs/render.py",
        "                    trace = m.election_failed_exception(name, strategy)\n",
        "                    trace = ()\n",
        "a failed offline election is logged with its StateChangeFailedException",
        "ZkPartitionStateMachine.logFailedStateChange: stateChangeLogger.error(message, exception)",
    ),
    M(
        "failover-publishes-deleting-topic",
        "zk/controller.py",
        "                changed = [tp for tp in dict.fromkeys(changed + elected) if tp[0] not in self.deleting]",
        "                changed = list(dict.fromkeys(changed + elected))",
        "on failover a topic being deleted has its offline replicas' ISR written but gets no LeaderAndIsr",
        "ReplicaStateMachine.doHandleStateChanges (OfflineReplica): if (!isTopicQueuedUpForDeletion(topic))",
    ),
    M(
        "election-logged-from-online",
        "zk/controller.py",
        '        was = "OnlinePartition" if st["leader"] in self.live_brokers else "OfflinePartition"',
        '        was = "OnlinePartition"',
        "an election of a partition with no live leader is logged from OfflinePartition",
        'ZkPartitionStateMachine.doHandleStateChanges: s"Changed partition $partition from ${partitionState(partition)}"',
    ),
    M(
        "election-logged-with-end-state",
        "../logs/render.py",
        "m.changed_partition(cb, cep, m.tp_name(*tp), leader, lep(tp, epoch), isr, zkv(tp, zk), was),",
        'm.changed_partition(cb, cep, m.tp_name(*tp), leader, lep(tp, epoch), ctl.state[tp]["isr"], '
        'zkv(tp, ctl.state[tp]["zk_version"]), was),',
        "a Changed partition line carries the ISR and zkVersion its election wrote, not the state at the window's end",
        "KafkaZkClient.updateLeaderAndIsr: the new LeaderAndIsr withZkVersion(stat.getVersion), logged at once",
    ),
    M(
        "controller-request-logged-at-its-decision",
        "../logs/render.py",
        '            order = (p["queued_ms"], cep, r.correlation_id)\n',
        '            order = (min([p["queued_ms"]] + [d[0] for d in ctl.decisions if any((s["topic"], s["partition"]) '
        "== (d[1], d[2]) for s in states)]), cep, r.correlation_id)\n",
        "a controller request is logged when it is queued, not when the state it carries was decided (a broker "
        "that comes back gets the old state then)",
        'ControllerBrokerRequestBatch.sendRequestsToBrokers: stateChangeLog.info(s"Sending LeaderAndIsr request ...")',
    ),
    M(
        "controller-request-logged-when-sent",
        "../logs/render.py",
        '            order = (p["queued_ms"], cep, r.correlation_id)\n',
        "            order = (r.sent, cep, r.correlation_id)\n",
        "a batch is logged once, when the controller hands it to the channels, though each channel sends it when "
        "the broker's previous request is answered",
        "ControllerBrokerRequestBatch.sendUpdateMetadataRequests: one Sending UpdateMetadata line per batch",
    ),
    M(
        "unclean-enable-not-logged",
        "../logs/render.py",
        '            lmms = [m.controller_unclean_enabled(cid, d["topic"])]\n',
        "            continue\n",
        "the controller logs that unclean election was enabled for a topic",
        'KafkaController.processTopicUncleanLeaderElectionEnable: info(s"Unclean leader election has been enabled ...")',
    ),
    M(
        "broker-startup-lai",
        "zk/controller.py",
        '                self.send(self.brokers[bid], "LeaderAndIsr", states, batch=batch)\n',
        "",
        "a broker that starts gets a LeaderAndIsr for each replica it holds",
        "KafkaController.onBrokerStartup: replicaStateMachine.handleStateChanges(allReplicasOnNewBrokers, OnlineReplica)",
    ),
    # -- placement, the follower's request path, the results' frames (kafka_lab/sim/cluster.py, fetcher.py) -----
    M(
        "cluster-ignores-racks",
        "cluster.py",
        '            metas = [BrokerMetadata(bid, b.config.props.get("broker.rack")) for bid, b in sorted(self.brokers.items())]\n',
        "            metas = [BrokerMetadata(bid, None) for bid, b in sorted(self.brokers.items())]\n",
        "a topic of a cluster whose brokers have broker.rack is placed rack-aware",
        "AdminUtils.assignReplicasToBrokers: assignReplicasToBrokersRackAware when brokers have racks",
    ),
    M(
        "cluster-drops-racks-argument",
        "cluster.py",
        "rack=rk.get(i)",
        "rack=None",
        "Cluster(racks={id: rack}) sets each broker's broker.rack",
        "KafkaConfig: broker.rack (BrokerMetadata.rack read by AdminZkClient.getBrokerMetadatas)",
    ),
    M(
        "follower-fetch-through-client-listener",
        "server/fetcher.py",
        "            leader.config.inter_broker_listener_name, self.client_id, client_host=",
        "            self.cluster.client_listener(leader), self.client_id, client_host=",
        "a follower fetches through the leader's inter-broker listener",
        "ReplicaFetcherBlockingSend: sourceBroker.node(brokerConfig.interBrokerListenerName)",
    ),
    M(
        "follower-fetch-not-in-request-log",
        "server/fetcher.py",
        "            self.cluster.log.append(req)\n            self.connection.send(req)\n",
        "            self.connection.send(req)\n",
        "a follower's Fetch is a request of the leader's like any other: in its request log",
        "KafkaApis.handleFetchRequest (RequestChannel metrics per request, the request log)",
    ),
    M(
        "controller-listener-from-the-target",
        "zk/controller.py",
        "        self.route = controller_route(controller.brokers[controller.id], broker)\n",
        "        self.route = controller_route(broker, broker)\n",
        "the controller picks the listener for every broker from its own config; the broker's config picks the plane",
        "ControllerChannelManager.addNewBroker: config.controlPlaneListenerName.getOrElse(config.interBrokerListenerName)",
    ),
    M(
        "controller-route-unchecked",
        "cluster.py",
        "        self._check_controller_routes()\n",
        "",
        "a broker that did not register the controller's listener is refused (BrokerEndPointNotAvailableException)",
        "Broker.node: End point with listener name X not found for broker N",
    ),
    M(
        "clients-on-the-first-other-listener",
        "cluster.py",
        "        if cfg.listener(self.client_listener_name) is not None:\n            return self.client_listener_name\n",
        "        others = [x.name for x in cfg.data_plane_listeners if x.name != cfg.inter_broker_listener_name]\n"
        "        if others:\n            return others[0]\n",
        "clients use their own listener (KIP-291's EXTERNAL), never CONTROLLER because it is the first other one",
        "KIP-291's example broker: clients on EXTERNAL, brokers on INTERNAL, the controller on CONTROLLER",
    ),
    M(
        "alter-isr-through-the-controllers-inter-broker-listener",
        "server/alter_isr.py",
        "                self.broker.config.controller_to_broker_listener_name,\n",
        "                controller.config.inter_broker_listener_name,\n",
        "a broker's AlterIsr goes to the controller's endpoint of the listener its own config names for the controller",
        "MetadataCacheControllerNodeProvider: config.controlPlaneListenerName.getOrElse(config.interBrokerListenerName)",
    ),
    Mutation(
        "server-log-control-plane-acceptor-last",
        (
            (
                "kafka_lab/logs/render.py",
                "    if cfg.control_plane_listener:\n"
                "        out.append(m.socket_server_created(b, cfg.control_plane_listener.name, True))\n"
                "    for lst in cfg.data_plane_listeners:\n"
                "        out.append(m.socket_server_created(b, lst.name, False))\n",
                "    for lst in cfg.data_plane_listeners:\n"
                "        out.append(m.socket_server_created(b, lst.name, False))\n"
                "    if cfg.control_plane_listener:\n"
                "        out.append(m.socket_server_created(b, cfg.control_plane_listener.name, True))\n",
            ),
        ),
        "server.log names the control plane's acceptor first, then one data-plane acceptor per other listener",
        "SocketServer.startup: createControlPlaneAcceptorAndProcessor, then createDataPlaneAcceptorsAndProcessors",
    ),
    M(
        "metrics-frame-no-broker-id",
        "cluster.py",
        ".assign(broker_id=bid)",
        ".assign(broker=bid)",
        "the results' metrics frame has a broker_id column (issue 7's required columns)",
        "issue 7: requests and metrics carry broker_id",
    ),
    # -- a KRaft node's listeners (kafka_lab/listeners/kraft.py; docs/kafka-reference.md §8.3, Kafka 4.0) ----
    Mutation(
        "kraft-mode-on-process-roles",
        (
            (
                "kafka_lab/listeners/resolve.py",
                '    if props.get("process.roles") is not None:  # a KRaft node: Kafka 4.0\'s rules (docs/kafka-reference.md §8.3)\n',
                "    if False:\n",
            ),
        ),
        "properties that name process.roles are a KRaft node's, resolved by 4.0's rules",
        "KafkaConfig: processRoles non-empty = KRaft (4.0: always)",
    ),
    K(
        "kraft-quorum-required",
        "        if not voters and not bootstrap:\n",
        "        if False:\n",
        "a KRaft node names its controllers: controller.quorum.voters or controller.quorum.bootstrap.servers",
        "KafkaConfig.validateValues (trunk 1eb7644): validateQuorumVotersAndQuorumBootstrapServerForKRaft",
    ),
    K(
        "kraft-broker-not-a-voter",
        "            node_id not in voters,\n",
        "            True,\n",
        "a broker-only node is not in the voter set",
        "KafkaConfig.validateValues (trunk 1eb7644): require(!voterIds.contains(nodeId), ...just the 'broker' role...)",
    ),
    K(
        "kraft-controller-is-a-voter",
        "            not voters or node_id in voters,\n",
        "            True,\n",
        "a node with the controller role is in the voter set (when voters are listed)",
        "KafkaConfig.validateValues (trunk 1eb7644): validateControllerQuorumVotersMustContainNodeIdForKRaftController",
    ),
    K(
        "kraft-control-plane-refused",
        "        if key not in p:\n            return\n",
        "        if True:\n            return\n",
        "control.plane.listener.name is refused on a KRaft node (3.9's message; 4.0 removed the setting)",
        "3.9 KafkaConfig.validateControlPlaneListenerEmptyForKRaft; KAFKA-18353 (4.0)",
    ),
    K(
        "kraft-broker-needs-controller-names",
        "            len(controller_names) > 0,\n",
        "            True,\n",
        "a broker-only node names at least one controller listener",
        "KafkaConfig.validateValues (trunk 1eb7644): require(controllerListenerNames.nonEmpty, ...)",
    ),
    K(
        "kraft-broker-binds-no-controller-listener",
        "            not controller_listeners(),\n",
        "            True,\n",
        "a broker-only node does not bind a controller listener",
        "KafkaConfig.validateValues (trunk 1eb7644): require(controllerListeners.isEmpty, ...)",
    ),
    K(
        "kraft-controller-name-in-map",
        "            if normalised not in pmap:\n",
        "            if False:\n",
        "a broker-only node's controller listener names are in the protocol map",
        'KafkaConfig.validateValues (trunk 1eb7644): "Controller listener with name ... not found in listener.security.protocol.map"',
    ),
    K(
        "kraft-controller-only-listeners",
        "            len(advertised_controllers()) == len(listeners()),\n",
        "            True,\n",
        "a controller-only node binds only controller listeners",
        "KafkaConfig.validateValues (trunk 1eb7644): require(effectiveAdvertisedControllerListeners.size == listeners.size, ...)",
    ),
    K(
        "kraft-controller-not-inter-broker",
        "                name not in controller_names,\n",
        "                True,\n",
        "a controller-only node's explicit inter.broker.listener.name is not a controller listener (4.0)",
        "KAFKA-18305 (PR #18222): controller.listener.names must not contain an explicitly set inter.broker.listener.name",
    ),
    K(
        "kraft-controller-listener-bound",
        "            len(advertised_controllers()) > 0,\n",
        "            True,\n",
        "a controller binds at least one of its controller listeners",
        "KafkaConfig.validateValues (trunk 1eb7644): validateAdvertisedControllerListenersNonEmptyForKRaftController",
    ),
    K(
        "kraft-controller-names-all-bound",
        "            all(n in bound_names for n in controller_names),\n",
        "            True,\n",
        "a controller binds every listener named in controller.listener.names",
        "KafkaConfig.validateValues (trunk 1eb7644): validateControllerListenerNamesMustAppearInListenersForKRaftController",
    ),
    K(
        "kraft-broker-advertises-something",
        "            len(broker_names) > 0,\n",
        "            True,\n",
        "a broker has at least one advertised broker listener",
        "KafkaConfig.validateValues (trunk 1eb7644): validateAdvertisedBrokerListenersNonEmptyForBroker",
    ),
    K(
        "kraft-inter-broker-advertised",
        "            ibl[0] in broker_names,\n",
        "            True,\n",
        "a KRaft broker's inter-broker listener is advertised",
        "KafkaConfig.validateValues (trunk 1eb7644): require(advertisedBrokerListenerNames.contains(interBrokerListenerName))",
    ),
    K(
        "kraft-advertised-subset",
        "            set(broker_names) <= set(listener_names),\n",
        "            True,\n",
        "a KRaft broker advertises only listeners it binds",
        "KafkaConfig.validateValues (trunk 1eb7644): require(advertisedBrokerListenerNames.subsetOf(listenerNames))",
    ),
    K(
        "kraft-no-zero-address",
        '    require(not any(e.host == "0.0.0.0" for e in advertised_brokers()), zero, "advertised.listeners")\n',
        "",
        "no advertised broker listener on 0.0.0.0",
        'KafkaConfig.validateValues (trunk 1eb7644): effectiveAdvertisedBrokerListeners.exists(host == "0.0.0.0")',
    ),
    K(
        "kraft-controller-listeners-not-advertised-to-clients",
        "        return [e for e in advertised() if e.listener_name not in controller_names]\n",
        "        return advertised()\n",
        "the advertised broker listeners leave out the controller listeners",
        "KafkaConfig.effectiveAdvertisedBrokerListeners: filterNot(controllerListenerNames.contains)",
    ),
    K(
        "kraft-advertised-controller-first",
        "            found = _find_by_name(adv, name) or _find_by_name(bound, name)\n",
        "            found = _find_by_name(bound, name) or _find_by_name(adv, name)\n",
        "a controller listener is advertised at its advertised.listeners endpoint, else where it binds",
        "KafkaConfig.effectiveAdvertisedControllerListeners: controllerAdvertisedListeners.find(...).orElse(controllerListeners.find(...))",
    ),
    K(
        "kraft-plaintext-default",
        '        return {**pmap, **{n: "PLAINTEXT" for n in controller_names if n != "PLAINTEXT"}}  # names as written\n',
        "        return pmap\n",
        "with the map unset, a KRaft node's controller listeners default to PLAINTEXT",
        "KafkaConfig.effectiveListenerSecurityProtocolMap (usesSelfManagedQuorum && !originals.containsKey(...))",
    ),
    K(
        "kraft-plaintext-default-as-written",
        '        return {**pmap, **{n: "PLAINTEXT" for n in controller_names if n != "PLAINTEXT"}}  # names as written\n',
        '        return {**pmap, **{n.upper(): "PLAINTEXT" for n in controller_names if n != "PLAINTEXT"}}\n',
        "the PLAINTEXT default is keyed by the controller listener name as written, not upper-cased",
        "KafkaConfig.effectiveListenerSecurityProtocolMap: new ListenerName(_) (not ListenerName.normalised)",
    ),
    K(
        "kraft-no-plaintext-default-with-tls",
        "        if any(n in _SSL_OR_SASL for n in controller_names) or any(\n",
        "        if False and any(n in _SSL_OR_SASL for n in controller_names) or False and any(\n",
        "no PLAINTEXT default when a controller listener name or a listener is SSL or SASL_*",
        "KafkaConfig.effectiveListenerSecurityProtocolMap: isSslOrSasl",
    ),
    K(
        "kraft-node-id-required",
        '    if "node.id" not in originals:\n',
        "    if False:\n",
        "node.id is required (4.0)",
        'PR #18414 (KAFKA-18331): Missing required configuration "node.id" which has no default value.',
    ),
    K(
        "kraft-node-id-at-least-0",
        "    if node_id < 0:\n",
        "    if False:\n",
        "node.id is at least 0 (4.0)",
        "PR #18414: node.id INT, atLeast(0)",
    ),
    K(
        "kraft-node-id-is-broker-id",
        "    if node_id != broker_id:\n",
        "    if False:\n",
        "node.id and broker.id, both set, are equal",
        "KafkaConfig.validateValues (trunk 1eb7644): You must set `node.id` to the same value as `broker.id`.",
    ),
    K(
        "kraft-node-id-broker-id-synonyms",
        '        originals["broker.id"] = originals["node.id"]\n',
        "        pass\n",
        "node.id alone stands in for broker.id",
        "KafkaConfig.populateSynonyms",
    ),
    K(
        "kraft-roles-valid",
        "        if role not in _ROLES:\n",
        "        if False:\n",
        "process.roles holds only broker and controller",
        'KRaftConfigs: ValidList.in("broker", "controller")',
    ),
    K(
        "kraft-roles-distinct",
        "    if len(set(roles)) != len(roles):\n",
        "    if False:\n",
        "a role is named once",
        "KafkaConfig.parseProcessRoles: Duplicate role names found in `process.roles`",
    ),
    K(
        "kraft-roles-not-empty",
        "    if not roles:\n",
        "    if False:\n",
        "an empty process.roles is refused (the model's rule: 4.0's answer is not established)",
        "docs/kafka-reference.md §8.3",
    ),
    K(
        "kraft-voter-entry-form",
        "        if len(id_and_address) != 2:\n",
        "        if False:\n",
        "a voter entry is {id}@{host}:{port}",
        "QuorumConfig.parseVoterConnections: idAndAddress.length != 2",
    ),
    K(
        "kraft-voter-port-range",
        "    if port > 65535:\n",
        "    if False:\n",
        "a voter's or bootstrap server's port is at most 65535",
        "InetSocketAddress: port out of range",
    ),
    K(
        "kraft-voter-set-order",
        "    voter_ids = java_hashmap_order(list(voters), lambda i: i, initial_capacity=len(voter_entries))\n",
        "    voter_ids = list(voters)\n",
        "the voter set prints in the order of the Java HashMap that parsed it",
        "QuorumConfig.parseVoterConnections: new HashMap<>(voterEntries.size())",
    ),
    K(
        "kraft-map-checked-in-hashmap-order",
        "    for name in java_hashmap_order(list(parsed), java_string_hash):\n",
        "    for name in list(parsed):\n",
        "the protocol map is validated in Java HashMap order",
        "Csv.parseCsvMap: new HashMap<>()",
    ),
    K(
        "kraft-inter-broker-protocol-validated",
        "    if sibp not in SECURITY_PROTOCOLS:\n",
        "    if False:\n",
        "security.inter.broker.protocol is one of the four protocols, case-sensitively (3.x)",
        "ReplicationConfigs: ValidString.in(Utils.enumOptions(SecurityProtocol.class))",
    ),
    K(
        "kraft-ipv4-ipv6-pair",
        "            require((v4a and v6b) or (v6a and v4b), message, config_key)\n",
        "",
        "two listeners sharing a port must be one IPv4 and one IPv6",
        "CoreUtils.listenerListToEndPoints: validateOneIsIpv4AndOtherIpv6",
    ),
    K(
        "kraft-ipv4-ipv6-may-share",
        "        with_ip = [e for e in eps if any(_is_ip(e.host))]\n        without_ip = [e for e in eps if not any(_is_ip(e.host))]\n",
        "        with_ip = []\n        without_ip = eps\n",
        "an IPv4 and an IPv6 listener may share a port (3.1; 2.8 refused it)",
        "CoreUtils.listenerListToEndPoints (3.1+): duplicatesWithIpHosts",
    ),
    K(
        "kraft-blank-listener-name",
        '            if m is not None and java_trim(m[1]) == "":  # ListenerName.normalised refuses a blank name\n',
        "            if False:\n",
        "a listener's name is not blank",
        "ListenerName.normalised: The provided listener name is null or empty string",
    ),
    K(
        "kraft-voters-routable",
        '        if host == "0.0.0.0":\n',
        "        if False:\n",
        "a voter is not on 0.0.0.0 (as the node starts)",
        "KafkaRaftServer: QuorumConfig.parseVoterConnections(voters): Host string (0.0.0.0) is not routeable",
    ),
    K(
        "kraft-controller-protocol-at-start",
        "    if head is not None and head not in protocol_map() and head.upper() not in SECURITY_PROTOCOLS:\n",
        "    if False:\n",
        "the first controller listener has a protocol, looked up under its name as written (as the node starts)",
        "RaftManager.buildNetworkClient: effectiveListenerSecurityProtocolMap.getOrElse(new ListenerName(head), SecurityProtocol.forName(head))",
    ),
    K(
        "kraft-multiple-controller-names-warn",
        "        if len(controller_names) > 1:\n",
        "        if False:\n",
        "a broker with several controller listener names gets Kafka's WARN",
        "KafkaConfig.validateValues (trunk 1eb7644): warn(controller.listener.names has multiple entries ...)",
    ),
    K(
        "kraft-removed-30-settings-warn",
        "    for key in REMOVED_IN_30:\n",
        "    for key in ():\n",
        "host.name, port, advertised.host.name, advertised.port are named as ignored by 4.0",
        "docs/kafka-reference.md §8.3",
    ),
    # -- a user's files (issue 34): kafka-lab analyze, generate-logs and sweep (tests/test_cli_safety.py) ------
    M(
        "analyze-out-may-hold-the-logs",
        "../spark/files.py",
        "        if o in p.parents:\n",
        "        if False:\n",
        "analyze refuses an --out that holds the log directory (writing its tables there deleted the logs)",
        "issue 34 (a user's files); Spark's overwrite mode deletes the output path first",
    ),
    M(
        "analyze-out-non-empty-accepted",
        "../spark/files.py",
        "    if o.is_dir() and any(o.iterdir()) and not overwrite:\n",
        "    if False:\n",
        "analyze refuses a non-empty --out unless --overwrite is given",
        "issue 34 (a user's files)",
    ),
    M(
        "log-files-follow-link-loops",
        "../spark/files.py",
        "        if (st.st_dev, st.st_ino) in seen_dirs:\n            return\n",
        "",
        "a directory is entered once, however many links lead to it (a link loop made Spark read each file 41 times)",
        "issue 34 (a user's files); Hadoop's listing follows links to directories",
    ),
    M(
        "generate-mixes-with-old-files",
        "../logs/writer.py",
        "    if not replace:\n        raise ValueError(",
        "    if False:\n        raise ValueError(",
        "generate-logs refuses a directory holding an earlier run's logs unless told to replace them",
        "issue 34 (a user's files): the ground truth knows only the new files",
    ),
    M(
        "sweep-repeated-grid-values",
        "../spark/sweep.py",
        "        if len(set(out[name])) < len(out[name]):",
        "        if False:",
        "a sweep refuses a grid value given twice (the same seeds would run twice, counted as replications)",
        "issue 34 (sweep --backlog 1,1,1)",
    ),
]


# -- the runner ----------------------------------------------------------------------------------------


@dataclass
class Outcome:
    name: str
    status: str  # killed | survived | error
    seconds: float
    detail: str = ""
    rule: str = ""
    source: str = ""
    review: bool = False
    files: list = field(default_factory=list)


def repo_files(repo: Path) -> list[str]:
    """Tracked files and new files git does not ignore (what a commit of the worktree would hold)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted({p for p in out.split("\0") if p and (repo / p).is_file()})


def copy_repo(repo: Path, dest: Path) -> None:
    for rel in repo_files(repo):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / rel, target)


def check_snippets(repo: Path, mutations) -> list[str]:
    """Every edit's old snippet must occur exactly once in its file (else the list has rotted)."""
    problems = []
    names = [m.name for m in MUTATIONS]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"mutation names used twice: {dupes}")
    for m in mutations:
        for path, old, _new in m.edits:
            f = repo / path
            if not f.is_file():
                problems.append(f"{m.name}: {path} does not exist")
                continue
            n = f.read_text(encoding="utf-8").count(old)
            if n != 1:
                problems.append(
                    f"{m.name}: the snippet occurs {n} times in {path} (must be exactly once):\n"
                    + "\n".join("      | " + ln for ln in old.splitlines())
                )
    return problems


def test_files(root: Path, patterns) -> list[str]:
    seen, out = set(), []
    for pat in patterns:
        for p in sorted(root.glob(pat)):
            rel = str(p.relative_to(root))
            if rel not in seen:
                seen.add(rel)
                out.append(rel)
    return out


def run_tests(root: Path, tests: list[str], timeout: float) -> tuple[int | None, str]:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1", "CI": "1"}
    cmd = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=-ra"]
    try:
        p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:.0f} s"
    return p.returncode, p.stdout + p.stderr


FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def first_failure(output: str) -> str:
    m = FAILED.search(output)
    if m:
        return m.group(1)
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "(no output)"


def apply(root: Path, m: Mutation) -> dict:
    """Apply ``m`` in ``root``; return the original texts (to restore)."""
    saved = {}
    for path, old, new in m.edits:
        f = root / path
        text = saved.get(path) or f.read_text(encoding="utf-8")
        saved.setdefault(path, text)
        cur = f.read_text(encoding="utf-8")
        if cur.count(old) != 1:
            raise RuntimeError(f"{m.name}: snippet not found exactly once in {path}")
        f.write_text(cur.replace(old, new, 1), encoding="utf-8")
    return saved


def restore(root: Path, saved: dict) -> None:
    for path, text in saved.items():
        (root / path).write_text(text, encoding="utf-8")


def run_one(root: Path, m: Mutation, tests: list[str], timeout: float) -> Outcome:
    t0 = time.perf_counter()
    saved = apply(root, m)
    try:
        code, out = run_tests(root, tests, timeout)
    finally:
        restore(root, saved)
    dt = time.perf_counter() - t0
    files = sorted({p for p, _o, _n in m.edits})
    base = dict(rule=m.rule, source=m.source, review=m.review, files=files)
    if code is None:
        return Outcome(m.name, "killed", dt, out, **base)
    if code == 0:
        return Outcome(m.name, "survived", dt, "", **base)
    if code == 1:
        return Outcome(m.name, "killed", dt, first_failure(out), **base)
    # 2: interrupted (an import error, a collection error: the mutation broke the module); others: pytest trouble
    if code == 2:
        return Outcome(m.name, "killed", dt, "collection/import error: " + first_failure(out), **base)
    return Outcome(m.name, "error", dt, f"pytest exit {code}: {first_failure(out)}", **base)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this mutation (repeatable; comma-separated names accepted)",
    )
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--check", action="store_true", help="only check that every snippet matches")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="scratch copies run in parallel (default 1)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per test run (default 900)")
    ap.add_argument(
        "--tests",
        nargs="+",
        default=None,
        metavar="PATTERN",
        help="test file patterns, in order (default: the model's tests)",
    )
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)

    wanted = [n for spec in args.only for n in spec.split(",") if n]
    known = {m.name for m in MUTATIONS}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        print(f"unknown mutation(s): {unknown}; see --list", file=sys.stderr)
        return 2
    chosen = [m for m in MUTATIONS if not wanted or m.name in wanted]

    if args.list:
        for m in chosen:
            print(f"{m.name}{' (review)' if m.review else ''}\n    {m.rule}\n    {m.source}")
        print(f"{len(chosen)} mutations")
        return 0

    problems = check_snippets(REPO, MUTATIONS)
    if problems:
        print("the mutation list no longer matches the code:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    if args.check:
        print(f"all {len(MUTATIONS)} mutations match the code")
        return 0

    jobs = max(1, min(args.jobs, len(chosen)))
    scratch = [Path(tempfile.mkdtemp(prefix=f"mutate-{i}-")) for i in range(jobs)]
    try:
        for d in scratch:
            copy_repo(REPO, d)
        tests = test_files(scratch[0], args.tests or TEST_PATTERNS)
        if not tests:
            print("no test files matched", file=sys.stderr)
            return 2
        print(
            f"{len(chosen)} mutations, {jobs} scratch cop{'y' if jobs == 1 else 'ies'}; tests: {' '.join(tests)}",
            flush=True,
        )
        if not args.no_baseline:
            t0 = time.perf_counter()
            code, out = run_tests(scratch[0], tests, args.timeout)
            if code != 0:
                print(
                    f"the unmutated copy fails its tests (exit {code}); fix that first:\n{out[-3000:]}", file=sys.stderr
                )
                return 2
            print(f"baseline: the tests pass on the unmutated copy ({time.perf_counter() - t0:.0f} s)", flush=True)

        results: list[Outcome] = []
        free = list(scratch)

        def work(m):
            root = free.pop()
            try:
                return run_one(root, m, tests, args.timeout)
            finally:
                free.append(root)

        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            for r in ex.map(work, chosen):
                results.append(r)
                print(f"  {r.status:8s} {r.name:45s} {r.seconds:6.0f} s  {r.detail}", flush=True)
    finally:
        for d in scratch:
            shutil.rmtree(d, ignore_errors=True)

    killed = sum(r.status == "killed" for r in results)
    survived = [r for r in results if r.status == "survived"]
    errors = [r for r in results if r.status == "error"]
    print()
    print("| mutation | result | killed by | rule | Kafka 2.8 source |")
    print("| --- | --- | --- | --- | --- |")
    for r in results:
        print(
            f"| `{r.name}`{' (review)' if r.review else ''} | {r.status} | {r.detail.replace('|', '/')} "
            f"| {r.rule} | {r.source.replace('|', '/')} |"
        )
    print()
    print(
        f"kill rate: {killed}/{len(results)} ({100.0 * killed / len(results):.0f} %)"
        + (f"; survived: {', '.join(r.name for r in survived)}" if survived else "")
        + (f"; errors: {', '.join(r.name for r in errors)}" if errors else "")
    )
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=1), encoding="utf-8")
    return 1 if survived or errors else 0


if __name__ == "__main__":
    sys.exit(main())
