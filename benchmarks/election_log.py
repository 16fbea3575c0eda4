"""What did Kafka 1.0's controller pay to log each leader election? A replica of the line, timed on this machine.

Until apache/kafka PR #4075 ("MINOR: reduce partition state machine debug logging", 16 October 2017, linked
from KAFKA-6116: "quadratic logging behavior"), ``PartitionStateMachine.electLeaderForPartition`` logged the
leader cache of the *whole cluster* after every election, and Kafka's ``config/log4j.properties`` keeps
``kafka.controller`` at TRACE, so the line was built and written. The fix reached 0.11.0.2 and the 1.0.0
release; trunk lost the line with KAFKA-5642 itself (b71ee04, 18 October 2017). The lab's model of the 1.0
the talk measured (``kafka_lab.sim.zk.controller_scale``) charges each election ``election_log_us_per_entry_1_0``
per partition of the cluster, solved from the blog's 6.5 minutes (10,000 replicas on the broker, 5,000
elections, 25,000 partitions in the cluster). That the line made most of those minutes is the project's
hypothesis, not a fact: the talk blames only serial ZooKeeper writes and per-partition requests, and the line
left the 1.0 branch before the 1.0.0 release. This script tests the hypothesis's size.

This script times Java replicas of the line (``benchmarks/ElectionLog.java``: the October 2017 trunk form,
and 0.11.0.1's, which copied the map first) at three cluster sizes, against the fixed line (one partition's
state) in the same run, in a JVM started with Kafka 1.0's own flags (``kafka-server-start.sh``: a 1 GB heap;
``kafka-run-class.sh``: G1, 20 ms pause target) and two-byte strings as Java 8 had (``-XX:-CompactStrings``),
and sets the cost per entry beside the model's.

    .venv/bin/python benchmarks/election_log.py [--partitions 1000,5000,25000]

Needs a JDK (``javac``), as Spark does, and pyspark's Scala library (``pyspark/jars/scala-library-*.jar``).
Writes about 0.5 GB to a temporary file, deleted at the end.

Measured 2026-11-24 (JDK 17, Scala 2.13, 2 cores, load about 1; three runs): the trunk form 0.42 to 0.63 µs
per entry at 1,000 to 25,000 partitions (12 to 16 ms an election at 25,000), 0.11.0.1's form about twice
that, the fixed line about 3 µs an election. The line grows with the cluster and its cost per entry does
not: the shutdown is quadratic. The model's 2.88 µs, fitted to a figure measured in 2017 (an older machine,
Java 8, Scala 2.11 or 2.12, a broker under load around it, a real log file), is 4.5 to 7 times this
replica's cost: the mechanism gives the shape and a seventh to a fifth of the size; the rest is either
what a replica on today's machine cannot reproduce, or time the hypothesis does not account for. The
measurement cannot tell which: it is evidence for the mechanism and against the fitted size.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Kafka 1.0's bin/kafka-server-start.sh (heap) and bin/kafka-run-class.sh (GC), and Java 8's two-byte strings
KAFKA_1_0_JVM = (
    "-Xmx1G",
    "-Xms1G",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:-CompactStrings",
)


def scala_library() -> str:
    import pyspark

    jars = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "scala-library-*.jar"))
    if not jars:
        sys.exit("pyspark's jars hold no scala-library-*.jar")
    return jars[0]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", default="1000,5000,25000", help="cluster sizes (default 1000,5000,25000)")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.partitions.split(",")]
    if shutil.which("javac") is None:
        sys.exit("this benchmark needs a JDK: javac was not found")
    from kafka_lab.sim.zk.controller_scale import CALIBRATION

    model_us = CALIBRATION["election_log_us_per_entry_1_0"].value
    jar = scala_library()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["javac", "-cp", jar, "-d", tmp, str(HERE / "ElectionLog.java")], check=True)
        run = subprocess.run(
            [
                "java",
                "-cp",
                f"{tmp}{os.pathsep}{jar}",
                "ElectionLog",
                os.path.join(tmp, "controller.log"),
                *map(str, sizes),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    print("partitions  elections   the line, per election      per entry   0.11.0.1's form   fixed line (PR #4075)")
    for line in run.stdout.split("\n"):
        if not line.strip():
            continue
        n, elections, trunk_us, old_us, fixed_us = line.split()
        n, trunk_us, old_us, fixed_us = int(n), float(trunk_us), float(old_us), float(fixed_us)
        print(
            f"{n:10,d}  {int(elections):9,d}  {trunk_us / 1000:12.3f} ms  {trunk_us / n:15.2f} µs"
            f"  {old_us / n:10.2f} µs/entry  {fixed_us:10.1f} µs/election ({trunk_us / fixed_us:,.0f}x less)"
        )
    print(
        f"the model's election_log_us_per_entry_1_0: {model_us} µs per entry (fitted to the blog's 6.5 min), "
        f"{model_us / (trunk_us / n):.1f}x the replica's cost at {n:,} partitions"
    )


if __name__ == "__main__":
    main()
