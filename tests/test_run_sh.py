"""./run.sh lab: the port comes from --port or KAFKA_LAB_PORT, a taken port moves to the next free one,
and the URL run.sh prints is the one the server really answers on."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import free_port as fp  # noqa: E402

URL = re.compile(r"run\.sh: open (http://127\.0\.0\.1:(\d+)/lab/tree/00_start_here\.ipynb\?token=(\w+))")


def _listening_socket() -> tuple[socket.socket, int]:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s, s.getsockname()[1]


def test_a_free_port_is_kept_and_a_taken_one_moves_on():
    taken, port = _listening_socket()
    try:
        assert not fp.is_free(port)
        moved = fp.free_port(port)
        assert moved > port and fp.is_free(moved)
    finally:
        taken.close()
    assert fp.free_port(port) == port  # free again: kept


@pytest.mark.parametrize("text", ["eighty", "0", "70000", "", "88.8"])
def test_a_port_must_be_a_port(text, capsys):
    assert fp.main(["free_port.py", text]) == 1
    assert "a port is a number from 1 to 65535" in capsys.readouterr().err


def _run_lab(args, env_extra, runtime_dir, timeout_s=90):
    """Start ./run.sh lab with this test's interpreter's environment; return (process, url, port, token, stderr)."""
    env = dict(
        os.environ,
        KAFKA_LAB_VENV=sys.prefix,
        KAFKA_LAB_NO_INSTALL="1",
        KAFKA_LAB_TOKEN="kltest" * 4,
        JUPYTER_RUNTIME_DIR=str(runtime_dir),
    )
    env.pop("KAFKA_LAB_PORT", None)
    env.update(env_extra)
    proc = subprocess.Popen(
        [str(REPO / "run.sh"), "lab", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = URL.search(line)
        if m:
            return proc, m[1], int(m[2]), m[3], lines
    _stop(proc)
    raise AssertionError("run.sh printed no URL:\n" + "".join(lines))


def _stop(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _answers(url: str, timeout_s: float = 90) -> int:
    """The HTTP status of the printed URL, once the server is up."""
    t0 = time.monotonic()
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status
        except OSError:
            if time.monotonic() - t0 > timeout_s:
                raise
            time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("how", ["--port", "--port=", "KAFKA_LAB_PORT"])
def test_the_printed_url_is_the_servers_even_when_the_port_is_taken(how, tmp_path):
    taken, port = _listening_socket()
    args, env = {
        "--port": (["--port", str(port)], {}),
        "--port=": ([f"--port={port}"], {}),
        "KAFKA_LAB_PORT": ([], {"KAFKA_LAB_PORT": str(port)}),
    }[how]
    try:
        proc, url, printed, token, lines = _run_lab(args, env, tmp_path)
        try:
            assert printed != port and printed > port, "".join(lines)
            assert any(f"port {port} is taken, using {printed}" in ln for ln in lines)
            assert _answers(url) == 200
            with urllib.request.urlopen(f"http://127.0.0.1:{printed}/api/status?token={token}", timeout=10) as r:
                assert b"started" in r.read()
        finally:
            _stop(proc)
    finally:
        taken.close()


def test_a_bad_port_stops_run_sh_with_a_message():
    env = dict(os.environ, KAFKA_LAB_VENV=sys.prefix, KAFKA_LAB_NO_INSTALL="1")
    r = subprocess.run(
        [str(REPO / "run.sh"), "lab", "--port", "eighty"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode != 0 and "a port is a number from 1 to 65535, not 'eighty'" in r.stderr
    r = subprocess.run(
        [str(REPO / "run.sh"), "lab", "--port"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode != 0 and "--port needs a number" in r.stderr


def test_present_names_the_labs_when_asked_for_one_that_does_not_exist():
    env = dict(os.environ, KAFKA_LAB_VENV=sys.prefix, KAFKA_LAB_NO_INSTALL="1")
    r = subprocess.run([str(REPO / "run.sh"), "present"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "present needs a lab's number, e.g. ./run.sh present 04" in r.stderr
    r = subprocess.run(
        [str(REPO / "run.sh"), "present", "99"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode != 0 and "no lab '99'; the labs are 00, 01, 02, 03" in r.stderr


def test_present_serves_the_view_on_the_port_asked_for(tmp_path):
    """./run.sh present 00 --port N: Voila answers on the URL run.sh prints (the page itself: tests/browser)."""
    taken, port = _listening_socket()
    env = dict(os.environ, KAFKA_LAB_VENV=sys.prefix, KAFKA_LAB_NO_INSTALL="1", KAFKA_LAB_TOKEN="kltest" * 4)
    env.pop("KAFKA_LAB_PORT", None)
    proc = subprocess.Popen(
        [str(REPO / "run.sh"), "present", "00", "--port", str(port)],
        cwd=REPO,
        env=dict(env, JUPYTER_RUNTIME_DIR=str(tmp_path)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        url = None
        t0 = time.monotonic()
        while url is None and time.monotonic() - t0 < 60:
            m = re.search(r"run\.sh: open (http://127\.0\.0\.1:(\d+)/\?token=\w+)", proc.stderr.readline())
            url = m and m[1]
        assert url, "run.sh present printed no URL"
        assert int(re.search(r":(\d+)/", url)[1]) > port  # the taken port moved on
        assert _answers(url) == 200
    finally:
        taken.close()
        _stop(proc)
