"""The presentation view (``./run.sh present NN``): every lab's experiments in Voila, without code or exercises.

One Voila server for the session (``tools/voila_serve.py``, as ``run.sh present`` starts it, with its
options) serves the views ``tools/present.py`` writes for every lab. For each lab, in headless
Chromium: every output fills in without an error, no code and no exercise is on the page, every plotly
figure draws, and the lab's primary control still drives its output. A screenshot of each view lands in ``tests/browser/artifacts/present-NN.png``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ARTIFACTS, _free_port, _require_browser, _stop
from test_labs import ERROR_LINE, LABS, _move_primary, _primary_text, _wait

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import present  # noqa: E402  (tools/present.py)

pytestmark = [pytest.mark.browser]

RENDER_TIMEOUT_S = 240  # a lab runs in well under 30 s; the margin is for a busy 2-core box
SERVER_START_TIMEOUT_S = 90
#: what an exercise or a code cell would leave on the page
EXERCISE_TEXT = re.compile(r"\banswer_\d+\b|\bcheck\(|show_solution\(|\*\*Exercise|Exercise \d+\.")

_STATE_JS = """
() => ({
  skeletons: document.querySelectorAll('[class*=skeleton]').length,
  outputs: document.querySelectorAll('.jp-OutputArea-output').length,
  stderr: [...document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')].map(e => e.innerText),
  text: document.body ? document.body.innerText : '',
  plots: [...document.querySelectorAll('.js-plotly-plot')].map(p => ({
    svg: !!p.querySelector('svg.main-svg'),
    traces: p.querySelectorAll('g.trace, g.hm, g.slice, .table, image').length,
    title: p.querySelector('.gtitle')?.textContent || ''})),
})
"""


#: the height of the view's content: Voila's notebook panel (``#rendered_cells``) scrolls inside the page. Not the
#: tallest element of the page: plotly's hidden text-measuring svg (``#js-plotly-tester``) is 9,000 px tall, and
#: sizing the screenshot by it left every view with figures mostly blank at the bottom
_VIEW_HEIGHT_JS = """
() => {
  const cells = document.querySelector('#rendered_cells');
  if (cells) return cells.getBoundingClientRect().top + cells.scrollHeight;
  return Math.max(...[...document.querySelectorAll('*')].filter(e => !e.closest('#js-plotly-tester'))
                                                         .map(e => e.scrollHeight));
}
"""


@pytest.fixture(scope="session")
def voila(tmp_path_factory):
    """Voila serving the presentation view of every lab, as ``run.sh present`` starts it."""
    _require_browser()
    views = tmp_path_factory.mktemp("present")
    for lab in LABS:
        present.write_presentation(lab.stem, views)
    if not (Path(sys.prefix) / "bin" / "voila").exists():
        pytest.fail("voila is missing: run the tests with the project's environment (./run.sh test)")
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [sys.executable, str(REPO / "tools" / "voila_serve.py"), str(views), "--no-browser", "--Voila.ip=127.0.0.1", f"--port={port}", "--Voila.port_retries=0",
           f"--token={token}", "--theme=light", "--progressive_rendering=True",
           "--Voila.tornado_settings={'ws_ping_interval': 0}"]  # fmt: skip
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = open(ARTIFACTS / "voila.log", "w")  # noqa: SIM115 -- closed in the finally below
    env = dict(os.environ, SPARK_LOCAL_IP=os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, cwd=views, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while True:
            if proc.poll() is not None:
                pytest.fail(f"voila exited with {proc.returncode}: see {ARTIFACTS / 'voila.log'}", pytrace=False)
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{base}/?token={token}", timeout=5)
                break
            if time.monotonic() - t0 > SERVER_START_TIMEOUT_S:
                pytest.fail(f"voila not ready after {SERVER_START_TIMEOUT_S} s", pytrace=False)
            time.sleep(0.25)
        yield lambda name: f"{base}/voila/render/{name}?token={token}"
    finally:
        _stop(proc)
        log.close()


def test_the_view_leaves_out_code_exercises_and_prose():
    """What tools/present.py keeps of a lab: title, question, headings, experiments, takeaway."""
    import json

    lab = json.loads((REPO / "labs" / "04_purgatory.ipynb").read_text())
    view = present.presentation(lab)
    text = "\n".join("".join(c["source"]) for c in view["cells"])
    assert not EXERCISE_TEXT.search(text) and "END_CHOICES\n" not in text
    assert "purgatory_panel(producers=200)" in text and "purgatory_figure(runs).show()" in text
    assert "**The question.**" in text and "## Takeaway" in text and "## Step 1" in text
    assert "A request handler appends" not in text  # a step's prose is the lecturer's to say
    assert len(lab["cells"]) > len(view["cells"]) and lab == json.loads(
        (REPO / "labs" / "04_purgatory.ipynb").read_text()
    )
    lab02 = present.presentation(json.loads((REPO / "labs" / "02_rack_awareness.ipynb").read_text()))
    takeaway = next("".join(c["source"]) for c in lab02["cells"] if "## Takeaway" in "".join(c["source"]))
    assert "min.insync.replicas" in takeaway and "show_solution" not in takeaway  # its last line points at one
    with pytest.raises(SystemExit, match="the labs are 00, 01"):
        present.find_lab("99")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_presentation_view_in_voila(lab: Path, voila, browser):
    number = lab.stem.split("_", 1)[0]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(voila(lab.name), timeout=90_000, wait_until="commit")

        def rendered():
            s = page.evaluate(_STATE_JS)
            return (
                (s,)
                if s["outputs"] and not s["skeletons"] and all(p["svg"] and p["traces"] for p in s["plots"])
                else None
            )

        state = _wait(
            rendered,
            RENDER_TIMEOUT_S,
            f"the {number} view to render",
            state=lambda: page.evaluate(_STATE_JS)["text"][-300:],
        )[0]
        page.wait_for_timeout(1000)
        state = page.evaluate(_STATE_JS)
        errors = [t for t in state["stderr"] if "Traceback" in t or ERROR_LINE.search(t)]
        assert not errors, f"{lab.name}: an experiment failed in Voila:\n" + "\n".join(errors)
        assert "Traceback" not in state["text"], f"{lab.name}: a traceback on the page"
        import json

        view = present.presentation(json.loads(lab.read_text()))
        code = [line for c in view["cells"] if c["cell_type"] == "code" for line in "".join(c["source"]).splitlines()]
        shown = [line for line in code if len(line) > 12 and line in state["text"]]
        assert not shown, f"{lab.name}: code is showing: {shown[:3]}"
        assert not EXERCISE_TEXT.search(state["text"]), (
            f"{lab.name}: {EXERCISE_TEXT.search(state['text'])[0]!r} on the page"
        )
        assert lab.stem.split("_", 1)[0] in state["text"].split("\n", 1)[0], "the lab's title comes first"
        if page.locator(".kl-primary-control").count():
            before = _primary_text(page, "body")
            how = _move_primary(page, "body")
            _wait(lambda: _primary_text(page, "body") != before, 60, f"the primary output to change ({how})")
    finally:
        with contextlib.suppress(Exception):  # the whole view: Voila scrolls inside its notebook panel
            height = page.evaluate(_VIEW_HEIGHT_JS)
            page.set_viewport_size({"width": 1400, "height": int(min(max(height + 40, 1000), 30000))})
            page.wait_for_timeout(1000)
            page.screenshot(path=str(ARTIFACTS / f"present-{number}.png"), full_page=True)
        context.close()
