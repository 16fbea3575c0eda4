"""Binder builds the environment the tests run in: same pins, a JDK 17, a quiet and small Spark.

repo2docker reads only ``binder/`` (the folder exists, so root files are ignored): it pip-installs
``binder/requirements.txt``, apt-installs ``binder/apt.txt``, runs ``binder/postBuild`` and wraps every
launch in ``binder/start``. A Docker build cannot run here, so these tests check each piece the way
repo2docker uses it, and fail when Binder's environment drifts from the project's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BINDER = REPO / "binder"


def _requirement_lines(path: Path) -> list[str]:
    return [ln.strip() for ln in path.read_text().splitlines() if ln.strip() and not ln.strip().startswith("#")]


def test_binder_requirements_are_the_project_pins_without_the_package():
    project = [ln for ln in _requirement_lines(REPO / "requirements.txt") if ln != "-e ."]
    binder = _requirement_lines(BINDER / "requirements.txt")
    assert "-e ." in _requirement_lines(REPO / "requirements.txt"), "requirements.txt installs the package"
    missing, extra = sorted(set(project) - set(binder)), sorted(set(binder) - set(project))
    assert not missing and not extra, f"binder/requirements.txt drifted: missing {missing}, extra {extra}"
    assert binder == project, "same pins, same order (copy requirements.txt without '-e .')"
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-\[\],]+==[^=\s]+", ln) for ln in binder), "every line is an exact pin"


def test_post_build_is_a_strict_bash_script():
    text = (BINDER / "postBuild").read_text()
    first = text.splitlines()[0]
    assert first in ("#!/bin/bash", "#!/usr/bin/env bash"), f"postBuild starts with {first!r}, not a bash shebang"
    assert re.search(r"^set -(e|eu|euo pipefail|eo pipefail)\b", text, re.M), (
        "postBuild needs 'set -e': repo2docker does not stop on errors otherwise"
    )
    assert os.access(BINDER / "postBuild", os.X_OK), "postBuild must be executable"
    r = subprocess.run(["bash", "-n", str(BINDER / "postBuild")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert re.search(r"pip install .*-e \.", text), "postBuild installs the package from the checkout"


def test_start_is_a_bash_wrapper_that_execs():
    text = (BINDER / "start").read_text()
    assert text.startswith(("#!/bin/bash", "#!/usr/bin/env bash"))
    assert text.rstrip().splitlines()[-1] == 'exec "$@"', 'repo2docker\'s start must end with exec "$@"'
    assert os.access(BINDER / "start", os.X_OK)
    assert subprocess.run(["bash", "-n", str(BINDER / "start")]).returncode == 0


def test_apt_installs_a_jdk_17_and_runtime_is_python_311():
    packages = _requirement_lines(BINDER / "apt.txt")
    assert any(re.fullmatch(r"openjdk-17-(jdk|jre)(-headless)?", p) for p in packages), (
        f"binder/apt.txt names no JDK 17 package: {packages}"
    )
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    assert not (REPO / ".binder").exists(), "repo2docker refuses both binder/ and .binder/"
    assert not (BINDER / "environment.yml").exists(), "an environment.yml would override requirements.txt"


def _freeze(python: Path | str) -> list[str]:
    out = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--disable-pip-version-check"], capture_output=True, text=True, check=True
    ).stdout
    # the package itself is an editable install of this checkout in both: not a pin
    return sorted(
        ln
        for ln in out.splitlines()
        if ln.strip() and not ln.startswith(("#", "-e ")) and not re.match(r"kafka[-_]lab\b", ln, re.I)
    )


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_fresh_binder_install_freezes_to_the_project_environment(tmp_path):
    """Install exactly what Binder installs into a new venv; its pip freeze must equal the project's."""
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    pip = [str(py), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    r = subprocess.run(pip + ["install", "-r", str(BINDER / "requirements.txt")], capture_output=True, text=True)
    assert r.returncode == 0, f"pip install -r binder/requirements.txt failed:\n{r.stderr[-3000:]}"
    env = dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv))
    env.pop("CONDA_DIR", None)
    r = subprocess.run(["bash", str(BINDER / "postBuild")], cwd=REPO, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"binder/postBuild failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    assert (venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json").exists(), (
        "postBuild installs the JupyterLab settings override"
    )
    r = subprocess.run(
        [str(py), "-c", "import kafka_lab, sys; print(kafka_lab.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 0 and r.stdout.startswith(str(REPO)), f"kafka_lab not importable from the checkout: {r}"
    binder, project = _freeze(py), _freeze(sys.executable)
    only_binder, only_project = sorted(set(binder) - set(project)), sorted(set(project) - set(binder))
    assert binder == project, (
        f"Binder's environment drifted from the project's: only in Binder {only_binder}, "
        f"only in the project {only_project}"
    )


_SPARK_PROBE = r"""
import json, os
from pyspark.sql import SparkSession, functions as F
spark = SparkSession.builder.appName("binder-start-probe").getOrCreate()
sc = spark.sparkContext
# a small job with a shuffle: progress bars and query-time WARNs would show here
rows = spark.range(200000).groupBy((F.col("id") % 7).alias("k")).count().orderBy("k").collect()
conf = sc.getConf()
print(json.dumps({
    "env": {k: os.environ.get(k) for k in ("SPARK_LOCAL_IP", "SPARK_CONF_DIR")},
    "conf": {k: conf.get(k, None) for k in ("spark.master", "spark.driver.memory", "spark.ui.enabled",
                                            "spark.ui.showConsoleProgress", "spark.sql.shuffle.partitions")},
    "ui_url": sc.uiWebUrl,
    "max_heap_mib": sc._jvm.java.lang.Runtime.getRuntime().maxMemory() / 2**20,
    "counts": [r["count"] for r in rows],
}))
spark.stop()
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_binder_start_gives_a_quiet_small_spark():
    """binder/start's environment: loopback, 1 GB driver, no UI, no progress bars, no WARN lines."""
    if shutil.which("java") is None:
        pytest.skip("no java on PATH (the Spark lab needs a JDK 17: apt-get install openjdk-17-jdk-headless)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_")) or k == "SPARK_HOME"}
    env.pop("SPARK_HOME", None)
    r = subprocess.run(
        [str(BINDER / "start"), sys.executable, "-c", _SPARK_PROBE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert r.returncode == 0, f"Spark did not start under binder/start:\n{r.stderr[-3000:]}"
    probe = json.loads(r.stdout.strip().splitlines()[-1])
    assert probe["env"] == {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_CONF_DIR": str(BINDER / "spark-conf")}
    conf = probe["conf"]
    assert conf["spark.driver.memory"] == "1g"
    assert 900 <= probe["max_heap_mib"] <= 1100, f"driver heap {probe['max_heap_mib']:.0f} MiB, not about 1 GiB"
    assert conf["spark.ui.enabled"] == "false" and probe["ui_url"] is None, "the Spark UI must be off"
    assert conf["spark.ui.showConsoleProgress"] == "false"
    assert sum(probe["counts"]) == 200000 and len(probe["counts"]) == 7
    warns = [
        ln
        for ln in r.stderr.splitlines()
        if "WARN" in ln and ln.strip() != "WARNING: Using incubator modules: jdk.incubator.vector"
    ]
    assert not warns, "Spark start-up under binder/start printed warnings:\n" + "\n".join(warns)
    assert "[Stage" not in r.stderr, "console progress bars are on"
