"""Nothing of a user's is lost, and bad input is refused before anything starts (issue 34's hazards).

Each test is one hazard that the commands once hit: ``analyze`` deleting the logs it was given when
``--out`` held them, ``generate-logs`` mixing a new run with an old one, a link loop read over and over,
a missing path reported only after Spark's start-up, ``--hours 1e9`` filling the disk, ``sweep`` failing
after every run. None of these needs Spark: each check runs before it (``session.get_session`` is made to
fail the test if called).
"""

import errno
import json
import os
from pathlib import Path

import pytest

from kafka_lab import cli
from kafka_lab.logs.scenario import generate
from kafka_lab.spark import files, session, sweep


@pytest.fixture
def no_spark(monkeypatch):
    """Fail the test if anything starts Spark."""

    def refuse(*a, **k):
        raise AssertionError("Spark was started before the input was checked")

    monkeypatch.setattr(session, "get_session", refuse)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    generate(root, hours=3 / 3600, brokers=2, seed=2, event_every_s=2)
    return root


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _one_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"kafka-lab {command}: "), err
    return lines[0]


# -- analyze: where the tables go ---------------------------------------------------------------------
def test_analyze_refuses_an_out_that_holds_the_logs(tmp_path, logs, no_spark, capsys):
    """LOGS = X/records and --out X: writing X/records used to delete every log file, then fail."""
    x = tmp_path / "x"
    (x / "records").mkdir(parents=True)
    for p in logs.rglob("*"):
        if p.is_file():
            dst = x / "records" / p.relative_to(logs)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(p.read_bytes())
    before = _tree(x)
    for overwrite in ([], ["--overwrite"]):
        assert cli.main(["analyze", str(x / "records"), "--out", str(x), *overwrite]) == 2
        assert "holds the log directory" in _one_line(capsys.readouterr().err, "analyze")
    assert _tree(x) == before


def test_analyze_refuses_an_out_that_is_or_lies_inside_the_logs(tmp_path, logs, no_spark, capsys):
    assert cli.main(["analyze", str(logs), "--out", str(logs)]) == 2
    assert "is the log directory itself" in _one_line(capsys.readouterr().err, "analyze")
    assert cli.main(["analyze", str(logs), "--out", str(logs / "tables")]) == 2
    assert "lies inside the log directory" in _one_line(capsys.readouterr().err, "analyze")
    # through a link to the same place
    link = tmp_path / "link"
    link.symlink_to(logs)
    assert cli.main(["analyze", str(link), "--out", str(logs / "t")]) == 2
    capsys.readouterr()
    assert not (logs / "tables").exists() and not (logs / "t").exists()


def test_analyze_refuses_a_non_empty_out_without_overwrite(tmp_path, logs, no_spark, capsys):
    out = tmp_path / "out"
    (out / "records").mkdir(parents=True)
    (out / "records" / "mine.txt").write_text("a user's file")
    assert cli.main(["analyze", str(logs), "--out", str(out)]) == 2
    assert "--overwrite" in _one_line(capsys.readouterr().err, "analyze")
    assert (out / "records" / "mine.txt").read_text() == "a user's file"
    (tmp_path / "afile").write_text("x")
    assert cli.main(["analyze", str(logs), "--out", str(tmp_path / "afile")]) == 2
    assert "is a file" in _one_line(capsys.readouterr().err, "analyze")


def test_analyze_reports_a_missing_path_before_spark_starts(tmp_path, no_spark, capsys):
    assert cli.main(["analyze", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "no log directory at" in _one_line(capsys.readouterr().err, "analyze")
    (tmp_path / "empty").mkdir()
    assert cli.main(["analyze", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2
    assert "no Kafka log files" in _one_line(capsys.readouterr().err, "analyze")
    (tmp_path / "f.log").write_text("x\n")
    assert cli.main(["analyze", str(tmp_path / "f.log"), "--out", str(tmp_path / "o")]) == 2
    assert "is a file, not a directory" in _one_line(capsys.readouterr().err, "analyze")


def test_analyze_checks_the_master_url_before_spark_starts(tmp_path, logs, no_spark, capsys):
    assert cli.main(["analyze", str(logs), "--out", str(tmp_path / "o"), "--master", "bogus://x"]) == 2
    assert "unknown Spark master URL 'bogus://x'" in _one_line(capsys.readouterr().err, "analyze")


# -- analyze: what it reads ------------------------------------------------------------------------------
@pytest.mark.timeout(60)  # a loop followed is a walk that never ends
def test_a_link_loop_is_read_once(tmp_path, logs):
    """A link back up the tree made Spark's listing read each file 41 times (or never end with two loops)."""
    root = tmp_path / "logs"
    root.mkdir()
    for p in sorted(logs.glob("broker-*/*.log*")):
        (root / p.parent.name).mkdir(exist_ok=True)
        (root / p.parent.name / p.name).write_bytes(p.read_bytes())
    (root / "broker-1" / "again").symlink_to(root)
    (root / "loop2").symlink_to(root / "broker-1")
    (root / "broker-1" / "copy.log").symlink_to(root / "broker-1" / "server.log")
    found = files.find_log_files(root)
    real = {os.path.realpath(f.path) for f in found}
    assert len(found) == len(real) == len(list(root.glob("broker-*/*.log*"))) - 1  # the link to server.log: once
    assert all("again" not in f.path and "loop2" not in f.path for f in found)


def test_hidden_and_underscore_names_are_skipped_as_spark_skips_them(tmp_path):
    (tmp_path / "b").mkdir()
    for name in ("server.log", ".server.log.swp", "_tmp.log", "notes.txt"):
        (tmp_path / "b" / name).write_text("x\n")
    assert [Path(f.path).name for f in files.find_log_files(tmp_path)] == ["server.log"]


# -- generate-logs ---------------------------------------------------------------------------------------
def test_generate_refuses_a_directory_that_holds_files(tmp_path, capsys):
    """A --gzip run then a plain one in the same directory: analyze counted twice the ground truth's lines."""
    out = tmp_path / "g"
    args = ["generate-logs", str(out), "--hours", str(2 / 3600), "--brokers", "2", "--quiet", "--workers", "1"]
    assert cli.main([*args, "--gzip"]) == 0
    capsys.readouterr()
    gz = sorted(p.relative_to(out) for p in out.rglob("*.gz"))
    assert gz
    assert cli.main(args) == 2
    assert "--replace" in _one_line(capsys.readouterr().err, "generate-logs")
    assert sorted(p.relative_to(out) for p in out.rglob("*.gz")) == gz
    # told to, it replaces its own files: no .gz left beside the new plain files
    assert cli.main([*args, "--replace"]) == 0
    capsys.readouterr()
    assert not list(out.rglob("*.gz"))
    truth = json.loads((out / "ground-truth.json").read_text())
    lines = sum(len(p.read_text().splitlines()) for p in out.rglob("*.log*"))
    assert lines == truth["lines"]["lines_read"]


def test_generate_never_replaces_files_it_did_not_write(tmp_path, capsys):
    out = tmp_path / "g"
    (out / "broker-1").mkdir(parents=True)
    (out / "broker-1" / "notes.txt").write_text("mine")
    (out / "mine.csv").write_text("mine")
    for extra in ([], ["--replace"]):
        assert cli.main(["generate-logs", str(out), "--hours", "0.0005", "--quiet", "--workers", "1", *extra]) == 2
        assert "did not write" in _one_line(capsys.readouterr().err, "generate-logs")
    assert (out / "mine.csv").read_text() == "mine" and (out / "broker-1" / "notes.txt").read_text() == "mine"
    with pytest.raises(ValueError, match="did not write"):
        generate(out, hours=1 / 3600, replace=True)


def test_generate_checks_the_disk_and_the_workers_before_it_starts(tmp_path, capsys):
    out = tmp_path / "g"
    assert cli.main(["generate-logs", str(out), "--hours", "1e9", "--quiet"]) == 2
    assert "GB free" in _one_line(capsys.readouterr().err, "generate-logs")
    assert cli.main(["generate-logs", str(out), "--workers", "1000", "--quiet"]) == 2
    assert "between 1 and the" in _one_line(capsys.readouterr().err, "generate-logs")
    assert not out.exists()  # nothing written, no process forked


def test_a_full_disk_is_one_line(tmp_path, monkeypatch, capsys):
    import kafka_lab.logs.scenario as scenario

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "g" / "broker-1" / "server.log"))

    monkeypatch.setattr(scenario, "generate", full)
    assert cli.main(["generate-logs", str(tmp_path / "g"), "--quiet", "--workers", "1", "--hours", "0.001"]) == 2
    line = _one_line(capsys.readouterr().err, "generate-logs")
    assert "No space left on device" in line and "server.log" in line


# -- sweep -----------------------------------------------------------------------------------------------
@pytest.fixture
def no_runs(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a simulation ran before the arguments were checked")

    monkeypatch.setattr(sweep, "run", refuse)


def test_sweep_checks_out_and_master_before_running(tmp_path, no_runs, no_spark, capsys):
    assert cli.main(["sweep", "--out", str(tmp_path), "--no-spark"]) == 2
    assert "is a directory" in _one_line(capsys.readouterr().err, "sweep")
    assert cli.main(["sweep", "--master", "bogus://x", "--out", str(tmp_path / "r.csv")]) == 2
    assert "unknown Spark master URL" in _one_line(capsys.readouterr().err, "sweep")


def test_sweep_refuses_repeated_grid_values(no_runs, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["sweep", "--backlog", "1,1,1", "--no-spark"])
    assert e.value.code == 2
    assert "each once" in capsys.readouterr().err
    with pytest.raises(ValueError, match="twice"):
        sweep.tasks({"backlog": [100, 100]})


@pytest.mark.parametrize(
    "master",
    [
        "local",
        "local[*]",
        "local[2]",
        "local[4,3]",
        "spark://h:7077",
        "spark://a:1,b:2",
        "yarn",
        "k8s://https://h:6443",
    ],
)
def test_master_urls_spark_knows_are_accepted(master):
    cli._check_master(master)
