"""What does KRaft mode cost the simulation? Lab 05's incident in KRaft mode against the same incident in ZooKeeper
mode, in the same run.

The workload is lab 05's (``truncation_incident``, as tools/fingerprint.py and the lab call it: 200 producers, one
burst each, 20 produce/s each, 20 partitions, replication factor 3, seed 0): broker 1 behind a produce backlog
when leadership of ``orders-0`` moves to broker 2. In ZooKeeper mode (no control plane) the controller's
LeaderAndIsr waits behind the backlog; in KRaft mode (``mode="kraft"``) three controller nodes run Raft beside the
same brokers (fetches, heartbeats, NoOpRecords every 500 ms) and each broker applies the change on its metadata
loader thread. Same seed, same clients, same brokers: what differs is the control plane the model simulates.

Reported, best of ``--repeat`` for each mode, run alternately (the machine is shared): CPU seconds
(``time.process_time``) and wall seconds of one incident with its result frames, the requests simulated, and the
ratio KRaft / ZooKeeper of the CPU time.

    .venv/bin/python benchmarks/kraft.py [--repeat 3] [--until-ms 3000]

Measured 2026-11-28 on the shared 2-core machine (load 9 to 13, so compare the CPU columns), best of 2:

    lab 05's incident as the lab runs it (300 ms):  ZooKeeper 0.51 s CPU, 4,448 requests;
                                                    KRaft     0.49 s CPU, 3,324 requests: 0.96x
    the same for 3,000 simulated ms:                ZooKeeper 4.77 s CPU, 45,382 requests;
                                                    KRaft     5.01 s CPU, 44,444 requests: 1.05x

KRaft mode's quorum (three controllers' Raft fetches, seven observers, heartbeats, a NoOpRecord every 500 ms)
costs about as much as the ZooKeeper-mode control requests it replaces; the produce traffic dominates both.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kafka_lab.sim import truncation_incident  # noqa: E402

LOAD = {"producers": 200, "burst": 1, "rate_per_s": 20, "partitions": 20}


def one(mode: str, until_ms: float | None) -> tuple:
    kw = {"control_plane": False} if mode == "zk" else {"mode": "kraft"}
    if until_ms is not None:
        kw["until_ms"] = until_ms
    t0, c0 = time.perf_counter(), time.process_time()
    res = truncation_incident(**kw, **LOAD)
    return time.process_time() - c0, time.perf_counter() - t0, len(res.requests)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--until-ms", type=float, default=None, help="the incident's length (its default if not given)")
    a = ap.parse_args(argv)
    best = {}
    for _ in range(a.repeat):
        for mode in ("zk", "kraft"):
            cpu, wall, n = one(mode, a.until_ms)
            b = best.get(mode)
            if b is None or cpu < b[0]:
                best[mode] = (cpu, wall, n)
    for mode, (cpu, wall, n) in best.items():
        print(f"{mode:6s} {cpu:7.2f} s CPU  {wall:7.2f} s wall  {n:7d} requests  {1e6 * cpu / n:6.1f} µs CPU/request")
    print(
        f"KRaft / ZooKeeper: {best['kraft'][0] / best['zk'][0]:.2f}x CPU, {best['kraft'][2] / best['zk'][2]:.2f}x requests"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
