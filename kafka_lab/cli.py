"""``kafka-lab``: the command line (``python -m kafka_lab`` works the same).

- ``kafka-lab generate-logs OUT [--hours H] [--brokers N] [--seed S] [--damage FRACTION] [--no-restart]
  [--workers W]``: a simulated cluster's log directories and ``ground-truth.json``
  (:func:`kafka_lab.logs.scenario.generate`; its windows simulated by W worker processes, default the cores);
- ``kafka-lab analyze LOGDIR --out DIR [--overwrite] [--master URL] [--max-rejected SHARE]``: the Spark
  pipeline (:mod:`kafka_lab.spark`): Parquet tables and ``summary.json``;
- ``kafka-lab sweep [--backlog 100,200,400] [--control-plane both] [--replications R] [--seed S] [--master URL
  | --no-spark] [--out FILE.csv]``: many seeded simulations as Spark tasks (:mod:`kafka_lab.spark.sweep`).

Nothing of a user's is lost or overwritten unasked: ``generate-logs`` writes only into an empty directory
(``--replace``: one that holds only an earlier run's files); ``analyze`` refuses an ``--out`` that is, holds
or lies inside the logs, and a non-empty one without ``--overwrite``; ``sweep`` refuses an ``--out`` that
exists as a directory. Every check that needs no Spark (paths, free disk, ``--workers``, the master URL,
repeated grid values) runs before Spark starts or any simulation runs.

Errors in the arguments or the input exit with status 2 and one line on stderr saying what is wrong;
``analyze`` exits with status 3 when more than ``--max-rejected`` of the lines read fit no layout (a
binary file, another layout), after writing the tables and saying so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import time
from pathlib import Path

__all__ = ["main"]


#: the fewest bytes an hour of one broker's logs takes (the scenario's lowest load, measured: 1,424.7 MB for
#: 1.49 hours of 3 brokers from midnight; gzip: lab 08's sample, about 40 times smaller): a run whose
#: lower bound does not fit on the disk is refused before it starts
MIN_BYTES_PER_BROKER_HOUR = {False: 300e6, True: 7e6}


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _check_generate(args) -> None:
    """What generate-logs can check before it starts (one line each)."""
    from kafka_lab.logs.writer import prepare_out_dir

    if not 0 < args.hours < math.inf:
        raise ValueError(f"--hours is a positive number of hours, got {args.hours!r}")
    if args.brokers < 1:
        raise ValueError(f"--brokers is a whole number of at least 1, got {args.brokers}")
    if not 1 <= args.workers <= _cores():
        raise ValueError(
            f"--workers is a whole number of processes, between 1 and the {_cores()} cores of this machine, "
            f"got {args.workers}"
        )
    if args.mode == "kraft":
        if args.request_format is not None:
            raise ValueError(
                "--request-format is the ZooKeeper-mode request log's: --mode kraft writes no request lines"
            )
        if args.event_every is not None:
            raise ValueError("--event-every spaces ZooKeeper mode's leader moves: --mode kraft runs its own timeline")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{args.out!r} is a file: give a directory to write the logs in")
    where = next((p for p in [out, *out.parents] if p.exists()), Path("."))
    need = args.hours * args.brokers * MIN_BYTES_PER_BROKER_HOUR[bool(args.gzip)]
    free = shutil.disk_usage(where).free
    if args.mode == "zk" and need > free:  # a KRaft run writes its timeline's lines only (kilobytes)
        raise ValueError(
            f"--hours {args.hours:g} for {args.brokers} brokers writes at least {need / 1e9:,.1f} GB, and the disk "
            f"under {str(where)!r} has {free / 1e9:,.1f} GB free: ask for fewer hours (or --gzip)"
        )
    prepare_out_dir(out, replace=args.replace)


def _generate(args) -> int:
    from tqdm import tqdm

    from kafka_lab.logs.pool import forked_pool
    from kafka_lab.logs.scenario import WINDOW_MS, generate

    _check_generate(args)

    # the workers are forks of this process, sharing the model just imported: made before the progress bar,
    # whose tqdm starts a monitor thread (a fork with another thread running is not safe)
    pool = forked_pool(args.workers) if args.workers > 1 else None
    # the bar's length; generate() itself says what is wrong with --hours
    total = round(args.hours * 3600_000 / WINDOW_MS) if 0 < args.hours < math.inf and args.mode == "zk" else None
    t0 = time.perf_counter()
    try:
        with tqdm(total=total, unit="s", desc="simulated seconds", disable=args.quiet, file=sys.stderr) as bar:
            truth = generate(
                args.out,
                hours=args.hours,
                brokers=args.brokers,
                seed=args.seed,
                damage=args.damage,
                start=args.start,
                request_format=args.request_format or "json",
                roll=not args.no_roll,
                event_every_s=300 if args.event_every is None else args.event_every,
                progress=bar.update,
                gzip=args.gzip,
                rolling_restart=not args.no_restart,
                workers=pool or args.workers,
                replace=args.replace,
                mode=args.mode,
            )
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    dt = time.perf_counter() - t0
    n = truth["lines"]["lines_read"]
    print(
        f"wrote {n} lines ({truth['bytes'] / 1e6:.1f} MB) for {args.brokers} brokers in {dt:.1f} s "
        f"({n / dt:,.0f} lines/s) to {args.out}; ground truth: {args.out}/ground-truth.json"
    )
    return 0


def _default_workers() -> int:
    """The cores this process may use, at most 4 (a run needs at most 15 windows, most of them early)."""
    return max(1, min(_cores(), 4))


_MASTER = re.compile(
    r"local(?:\[(?:\*|[1-9]\d*)(?:,[1-9]\d*)?\])?|local-cluster\[\d+, *\d+, *\d+\]"
    r"|spark://[\w.\-]+(?::\d+)?(?:,[\w.\-]+(?::\d+)?)*/?|yarn|k8s://\S+"
)


def _check_master(master: str | None) -> None:
    """A Spark master URL Spark knows, checked before anything runs (Spark's own error comes after its start-up,
    as a Java stack trace)."""
    master = master or os.environ.get("SPARK_MASTER")
    if master is not None and not _MASTER.fullmatch(master):
        raise ValueError(
            f"unknown Spark master URL {master!r}: use local[*], local[N], spark://HOST:PORT, yarn or k8s://URL"
        )


def _analyze(args) -> int:
    from kafka_lab.spark import files, pipeline

    _check_master(args.master)
    if not 0 <= args.max_rejected <= 1:
        raise ValueError(f"--max-rejected is a share between 0 and 1, got {args.max_rejected}")
    if not files.is_uri(args.logdir):  # a missing path, a loop, an --out that would lose the logs: before Spark
        found = files.find_log_files(args.logdir)
        if not found:
            raise ValueError(f"no Kafka log files (named {files.LOG_GLOB}) under {args.logdir!r}")
        files.check_out(args.out, [args.logdir], overwrite=args.overwrite)
    from kafka_lab.spark import session

    spark = session.get_session(master=args.master)
    t0 = time.perf_counter()
    summary = pipeline.analyze(spark, args.logdir, args.out, overwrite=args.overwrite)
    print(json.dumps(summary, indent=1, sort_keys=True))
    print(
        f"analyzed {summary['lines_read']} lines in {time.perf_counter() - t0:.1f} s; tables in {args.out}",
        file=sys.stderr,
    )
    share = summary["rejected_share"]
    if share > pipeline.REJECT_WARN_SHARE:
        worst = ", ".join(f"{f['file']} ({f['rejected_share']:.0%})" for f in summary.get("most_rejected", [])[:3])
        print(
            f"kafka-lab analyze: warning: {share:.1%} of the lines read fit no Kafka log layout and were rejected"
            + (f", most in {worst}" if worst else "")
            + f" (the rejects table in {args.out} has each with its file and line)",
            file=sys.stderr,
        )
    if share > args.max_rejected:
        print(
            f"kafka-lab analyze: {share:.1%} of the lines rejected, above --max-rejected {args.max_rejected:g}: "
            "are these Kafka broker logs?",
            file=sys.stderr,
        )
        return 3
    return 0


def _path(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, got an empty one")
    return text


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected whole numbers separated by commas, like 100,200,400; got {text!r}"
        ) from None
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected whole numbers of at least 0, like 100,200,400; got {text!r}")
    if len(set(values)) < len(values):  # the same point twice would run the same seeds twice as more replications
        raise argparse.ArgumentTypeError(f"expected different values, each once; got {text!r}")
    return values


def _sweep(args) -> int:
    from kafka_lab.spark import sweep

    if not args.no_spark:
        _check_master(args.master)
    if args.out and Path(args.out).is_dir():
        raise ValueError(f"--out {args.out!r} is a directory: give the CSV file to write, like {args.out}/runs.csv")
    where = Path(args.out).resolve().parent if args.out else None
    if where is not None and not where.is_dir():
        raise FileNotFoundError(f"--out {args.out}: no directory {str(where)!r} to write it in")
    if args.replications < 1:
        raise ValueError(f"--replications is a whole number of at least 1, got {args.replications}")
    planes = {"both": [False, True], "on": [True], "off": [False]}[args.control_plane]
    grid = {"backlog": args.backlog, "control_plane": planes}
    t0 = time.perf_counter()
    if args.no_spark:
        results = sweep.run(grid, args.replications, args.seed)
        where = "a local loop"
    else:
        from kafka_lab.spark import session

        spark = session.get_session(master=args.master)
        results = sweep.run(grid, args.replications, args.seed, spark=spark)
        where = f"Spark ({spark.sparkContext.master})"
    dt = time.perf_counter() - t0
    if args.out:
        results.to_csv(args.out, index=False)
    print(sweep.summarise(results).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(
        f"{len(results)} simulations on {where} in {dt:.1f} s" + (f"; every run in {args.out}" if args.out else ""),
        file=sys.stderr,
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kafka-lab", description="kafka-lab: Kafka 2.8 broker and controller internals")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser(
        "generate-logs",
        help="write a simulated cluster's logs: ZooKeeper mode in Kafka 2.8's formats, or KRaft in Kafka 4.0's",
    )
    g.add_argument("out", type=_path, help="directory to write (one broker-<id>/ directory per broker)")
    g.add_argument("--hours", type=float, default=1.0, help="simulated hours of logs (default 1)")
    g.add_argument("--brokers", type=int, default=3, help="brokers in the cluster (default 3)")
    g.add_argument("--seed", type=int, default=0, help="random seed (same seed, same files)")
    g.add_argument("--damage", type=float, default=0.0, help="fraction of lines damaged: cut, garbage, stack traces")
    g.add_argument(
        "--mode",
        choices=("zk", "kraft"),
        default="zk",
        help="zk: a ZooKeeper-mode Kafka 2.8 cluster (default); kraft: a Kafka 4.0 KRaft cluster (3 controller nodes, "
        "controller-<id>/ beside broker-<id>/; its timeline of restarts, a crash and a controller failover, no request "
        "log)",
    )
    g.add_argument(
        "--event-every", type=int, default=None, help="seconds between leader moves with a spike (300; zk mode)"
    )
    g.add_argument(
        "--no-restart", action="store_true", help="no rolling restart (by default one, from half-way through)"
    )
    g.add_argument("--start", default="2024-03-04T00:00:00", help="UTC time of the first line (ISO 8601)")
    g.add_argument(
        "--request-format",
        choices=("json", "text"),
        default=None,
        help="2.8's JSON request log (default) or 2.7's text (zk mode)",
    )
    g.add_argument("--no-roll", action="store_true", help="one file per log instead of hourly rolled files")
    g.add_argument("--gzip", action="store_true", help="gzip each file (server.log.gz), as logrotate's compress")
    g.add_argument(
        "--workers",
        type=int,
        default=_default_workers(),
        help="processes that simulate the windows while this one writes (default: the machine's cores, at most 4, "
        f"here {_default_workers()}); 1: no pool, each window simulated here when first needed",
    )
    g.add_argument(
        "--replace", action="store_true", help="OUT holds an earlier run's logs: remove them first (nothing else)"
    )
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    g.set_defaults(func=_generate)
    a = sub.add_parser("analyze", help="parse a log directory with Spark into Parquet tables and summary.json")
    a.add_argument("logdir", help="a directory of broker-<id>/ log directories (any URI Spark reads)")
    a.add_argument("--out", required=True, help="where to write the tables and summary.json (new or empty)")
    a.add_argument(
        "--overwrite", action="store_true", help="--out is not empty: replace the tables and summary.json in it"
    )
    a.add_argument("--master", default=None, help="Spark master URL (default: $SPARK_MASTER or local[*])")
    a.add_argument(
        "--max-rejected",
        type=float,
        default=0.5,
        help="exit with status 3 when more than this share of the lines is rejected (default 0.5)",
    )
    a.set_defaults(func=_analyze)
    w = sub.add_parser("sweep", help="run many seeded simulations (a grid x replications) as Spark tasks")
    w.add_argument("--backlog", type=_ints, default=[100, 200, 400], help="Produce backlogs, comma-separated")
    w.add_argument("--control-plane", choices=("both", "on", "off"), default="both", help="KIP-291 control plane")
    w.add_argument("--replications", type=int, default=3, help="seeded replications per grid point (default 3)")
    w.add_argument("--seed", type=int, default=0, help="the sweep's seed (same seed, same table)")
    w.add_argument("--master", default=None, help="Spark master URL (default: $SPARK_MASTER or local[*])")
    w.add_argument("--no-spark", action="store_true", help="run the same tasks in a plain loop, without Spark")
    w.add_argument("--out", default=None, help="write one row per simulation to this CSV file")
    w.set_defaults(func=_sweep)
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, NotADirectoryError, PermissionError) as e:
        print(f"kafka-lab {args.command}: {e}", file=sys.stderr)
        return 2
    except OverflowError as e:  # a --start and --hours past the last date Python knows
        print(f"kafka-lab {args.command}: the dates run out of range ({e})", file=sys.stderr)
        return 2
    except OSError as e:  # a full disk, a file system gone read-only: what failed, in one line
        what = e.strerror or str(e)
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        print(f"kafka-lab {args.command}: {what}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
