"""A real JupyterLab, from this project's environment, driven by Debian's headless Chromium.

One JupyterLab server per test session: started from the running interpreter's environment
(``sys.prefix/bin/jupyter-lab``) on 127.0.0.1, a free port and a random token, serving ``labs/``. It
runs with its own, throw-away Jupyter config directory, so the tests never touch a learner's settings:

- no autosave, and a pre-save hook that refuses to write any notebook: the committed notebooks stay
  output-free whatever the browser does; checkpoints go to the temp directory, not ``labs/``;
- notebooks render every cell (``windowingMode: none``), so every output is in the DOM to check
  and in the screenshot;
- no "Jupyter news" toast (the same settings override Binder and ``run.sh`` install).

At the end the server is stopped (SIGTERM to its process group, which shuts its kernels down; anything
left is killed). Without ``/usr/bin/chromium`` the browser tests are skipped, unless
``KAFKA_LAB_REQUIRE_BROWSER=1`` (CI), which turns the skip into a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: the notebooks under test: the labs, or (to try the tests themselves) another folder of notebooks
LABS_DIR = Path(os.environ.get("KAFKA_LAB_BROWSER_LABS", REPO / "labs")).resolve()
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = os.environ.get("KAFKA_LAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_TIMEOUT_S = 90

_SERVER_CONFIG = '''\
from tornado.web import HTTPError


def _refuse_notebook_saves(model, path, contents_manager, **kwargs):
    """The browser tests run the committed notebooks; they must never write outputs back."""
    if path.endswith(".ipynb"):
        raise HTTPError(403, "kafka-lab browser tests: notebooks are read-only here")


c.FileContentsManager.pre_save_hook = _refuse_notebook_saves
c.FileCheckpoints.root_dir = {checkpoints!r}
'''

_USER_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}


def _require_browser() -> None:
    """Skip (locally) or fail (CI: KAFKA_LAB_REQUIRE_BROWSER=1) when the browser stack is missing."""
    required = os.environ.get("KAFKA_LAB_REQUIRE_BROWSER") == "1"
    problem = None
    if not os.path.exists(CHROMIUM):
        problem = f"{CHROMIUM} is missing (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError as exc:
            problem = f"playwright is not importable ({exc})"
    if problem:
        if required:
            pytest.fail(f"browser tests are required (KAFKA_LAB_REQUIRE_BROWSER=1) but {problem}", pytrace=False)
        pytest.skip(f"browser tests skipped: {problem}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _install_news_override() -> None:
    """The settings override that removes the news toast, in this environment (as run.sh and Binder do)."""
    target = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "binder" / "overrides.json", target)


@dataclass
class JupyterLab:
    base_url: str
    token: str
    root_dir: Path
    log_path: Path
    startup_s: float

    def api(self, method: str, path: str) -> object:
        req = urllib.request.Request(
            f"{self.base_url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self) -> None:
        """Shut every kernel down (one lab at a time: the machine is small)."""
        for s in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{s['id']}")

    def url(self, notebook: str, workspace: str) -> str:
        # a workspace of its own per lab, reset: no tab of an earlier lab is restored (and no kernel started)
        return f"{self.base_url}/lab/workspaces/{workspace}/tree/{notebook}?reset&token={self.token}"

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"


def _stop(proc: subprocess.Popen) -> None:
    import psutil

    try:
        family = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)  # the server shuts its kernels down on SIGTERM
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    # kernels run in process groups of their own: make sure none outlives the server
    for child in family:
        try:
            child.wait(timeout=5)
        except psutil.TimeoutExpired:
            child.kill()
        except psutil.NoSuchProcess:
            pass


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory) -> JupyterLab:
    _require_browser()
    _install_news_override()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    tmp = tmp_path_factory.mktemp("jupyterlab")
    config_dir = tmp / "config"
    for name, value in _USER_SETTINGS.items():
        f = config_dir / "lab" / "user-settings" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(value))
    (tmp / "checkpoints").mkdir()
    (config_dir / "jupyter_server_config.py").write_text(_SERVER_CONFIG.format(checkpoints=str(tmp / "checkpoints")))

    exe = Path(sys.prefix) / "bin" / "jupyter-lab"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: run the tests with the project's environment (./run.sh test)")
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [
        str(exe),
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={LABS_DIR}",
        "--ServerApp.open_browser=False",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config_dir),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        PATH=f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        SPARK_LOCAL_IP=os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
        PYTHONUNBUFFERED="1",
    )
    env.pop("JUPYTERLAB_SETTINGS_DIR", None)
    env.pop("JUPYTERLAB_WORKSPACES_DIR", None)
    log_path = ARTIFACTS / "jupyterlab.log"
    log = open(log_path, "w")  # noqa: SIM115 -- the server writes to it until it stops; closed in the finally below
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=LABS_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = JupyterLab(f"http://127.0.0.1:{port}", token, LABS_DIR, log_path, 0.0)
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"jupyter-lab exited with {proc.returncode}:\n{server.log_tail()}", pytrace=False)
            try:
                server.api("GET", "/api/status")
                break
            except OSError:
                if time.monotonic() - t0 > SERVER_START_TIMEOUT_S:
                    pytest.fail(
                        f"jupyter-lab not ready after {SERVER_START_TIMEOUT_S} s:\n{server.log_tail()}", pytrace=False
                    )
                time.sleep(0.25)
        server.startup_s = time.monotonic() - t0
        (ARTIFACTS / "timings.txt").write_text(f"jupyterlab_start_s {server.startup_s:.2f}\n")
        yield server
        with contextlib.suppress(OSError):
            server.shutdown_sessions()
    finally:
        _stop(proc)
        log.close()


@pytest.fixture(scope="session")
def browser(jupyterlab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
