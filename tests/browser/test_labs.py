"""Every lab, the way a learner meets it: opened in JupyterLab, Run All, in headless Chromium.

For each ``labs/*.ipynb`` (so a new lab is tested the day it lands): every cell runs without an
error, every widget renders, every plotly figure draws, and moving the lab's primary control
(``kl-primary-control``) changes the text of what it drives (``kl-primary-output``). A full-length
screenshot of each lab lands in ``tests/browser/artifacts/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

import pytest

LABS_DIR = Path(os.environ.get("KAFKA_LAB_BROWSER_LABS", Path(__file__).resolve().parents[2] / "labs")).resolve()
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
LABS = sorted(LABS_DIR.glob("*.ipynb"))
SNAPSHOT = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in LABS}

PAGE_LOAD_TIMEOUT_MS = 90_000
RUN_ALL_TIMEOUT_S = 240  # a lab must run in well under 30 s; the margin is for a busy 2-core box
WIDGET_SETTLE_TIMEOUT_S = 30
PRIMARY_TIMEOUT_S = 30
WIDGET_FAILURES = ("Loading widget...", "model not found", "Error displaying widget", "Failed to load model")
ERROR_LINE = re.compile(r"^\s*[A-Za-z_][\w.]*(Error|Exception)\b", re.M)

pytestmark = [pytest.mark.browser]

# The notebook panel the test drives (the one visible tab).
NB = ".jp-NotebookPanel:not(.lm-mod-hidden)"

_CELLS_JS = """
(nb) => {
  const panel = document.querySelector(nb);
  if (!panel) return null;
  const cells = [...panel.querySelectorAll('.jp-Notebook .jp-Cell')];
  return cells.map((c, i) => {
    const code = c.classList.contains('jp-CodeCell');
    const prompt = code ? (c.querySelector('.jp-InputPrompt')?.textContent || '').trim() : '';
    const src = (c.querySelector('.jp-InputArea-editor .cm-content')?.innerText || '').trim();
    const stderr = [...c.querySelectorAll(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')].map(o => o.innerText);
    const views = [...c.querySelectorAll(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.widget-view+json"]')]
        .map(o => ({children: o.children.length, text: o.innerText.slice(0, 200)}));
    const out = (c.querySelector('.jp-Cell-outputWrapper')?.innerText || '').slice(0, 4000);
    return {index: i, code, prompt, src: src.split('\\n')[0].slice(0, 100), stderr, views, out};
  });
}
"""

_PLOTS_JS = """
(nb) => [...document.querySelectorAll(nb + ' .js-plotly-plot')].map(p => {
  const svg = p.querySelector('svg.main-svg');
  const traces = p.querySelectorAll('g.trace, g.hm, g.slice, .sankey, .table, g.contourlevel, image').length;
  const r = p.getBoundingClientRect();
  const title = p.querySelector('.gtitle')?.textContent || '';
  return {svg: !!svg, traces, width: r.width, height: r.height, title};
})
"""


def _where(cell: dict) -> str:
    return f"cell {cell['index']} ({cell['prompt'] or 'markdown'} {cell['src']!r})"


def _wait(predicate, timeout_s: float, what: str, poll_s: float = 0.5, state=None):
    t0 = time.monotonic()
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() - t0 > timeout_s:
            raise AssertionError(
                f"timed out after {timeout_s:.0f} s waiting for {what}" + (f"; {state()}" if state else "")
            )
        time.sleep(poll_s)


def _accept_kernel_dialog(page) -> None:
    """JupyterLab sometimes asks which kernel to start; take the one the notebook names (the default)."""
    dialog = page.locator(".jp-Dialog", has_text="Select Kernel")
    if dialog.count():
        dialog.locator(".jp-Dialog-button.jp-mod-accept").click()
        dialog.wait_for(state="detached", timeout=30_000)


def _run_all(page) -> None:
    """Run → Run All Cells; again if nothing started (a click that landed before the kernel was ready)."""
    for _attempt in range(3):
        _accept_kernel_dialog(page)
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator("li.lm-Menu-item .lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            _wait(
                lambda: any(re.search(r"\[(\*|\d+)\]", c["prompt"]) for c in page.evaluate(_CELLS_JS, NB) if c["code"]),
                15,
                "Run All to start",
            )
            return
        except AssertionError:
            page.keyboard.press("Escape")
    raise AssertionError(f"Run → Run All Cells did not start any cell; {_run_state(page)}")


def _kernel_idle(page) -> bool:
    ind = page.locator(f"{NB} .jp-Notebook-ExecutionIndicator")
    return ind.count() > 0 and ind.first.get_attribute("data-status") == "idle"


def _finished(page):
    """All code cells numbered, or (after an error stopped Run All) nothing running any more."""
    cells = page.evaluate(_CELLS_JS, NB)
    if not cells:
        return None
    code = [c for c in cells if c["code"]]
    running = any("*" in c["prompt"] for c in code)
    numbered = all(re.search(r"\[\d+\]", c["prompt"]) for c in code)
    errored = any(ERROR_LINE.search(t) or "Traceback" in t for c in code for t in c["stderr"])
    if not running and _kernel_idle(page) and (numbered or errored):
        return cells
    return None


def _plots_drawn(page):
    """(figures,) once every .js-plotly-plot has its svg and at least one trace drawn."""
    plots = page.evaluate(_PLOTS_JS, NB)
    return (plots,) if all(p["svg"] and p["traces"] for p in plots) else None


def _run_state(page) -> str:
    """Where Run All stands: the kernel's status and each code cell's prompt (for a timeout message)."""
    cells = page.evaluate(_CELLS_JS, NB) or []
    ind = page.locator(f"{NB} .jp-Notebook-ExecutionIndicator")
    status = ind.first.get_attribute("data-status") if ind.count() else "no indicator"
    prompts = ", ".join(f"{c['index']}:{c['prompt']}" for c in cells if c["code"])
    return f"kernel {status}; code cells {prompts or 'none found'}"


def _primary_text(page, root: str = NB) -> str:
    # textContent, not innerText: it does not depend on whether the browser has laid the output out
    return "\n".join(page.locator(f"{root} .kl-primary-output").evaluate_all("es => es.map(e => e.textContent)"))


def _move_primary(page, root: str = NB) -> str:
    """Move the lab's primary control the way a learner would; return what was done."""
    ctl = page.locator(f"{root} .kl-primary-control").first
    ctl.scroll_into_view_if_needed()
    if ctl.locator(".noUi-handle").count():  # IntSlider, FloatSlider, SelectionSlider
        h = ctl.locator(".noUi-handle").first
        h.focus()
        before = h.get_attribute("aria-valuenow")
        h.press("ArrowRight")
        page.wait_for_timeout(300)
        if h.get_attribute("aria-valuenow") == before:  # already at its maximum
            h.press("ArrowLeft")
        return "slider: arrow key on its handle"
    if ctl.locator("select").count():  # Dropdown, Select
        sel = ctl.locator("select").first
        options = sel.locator("option").evaluate_all("os => os.map(o => [o.value, o.selected])")
        other = next(v for v, selected in options if not selected)
        sel.select_option(value=other)
        return f"select: option {other!r}"
    if ctl.locator("input[type=checkbox]").count():  # Checkbox
        ctl.locator("input[type=checkbox]").first.click()
        return "checkbox: click"
    if ctl.locator("input[type=radio]").count():  # RadioButtons
        ctl.locator("input[type=radio]:not(:checked)").first.click()
        return "radio: another option"
    if ctl.locator("textarea").count():  # Textarea
        ta = ctl.locator("textarea").first
        ta.fill(ta.input_value() + "\n")
        ta.press("Tab")
        return "textarea: edited"
    if ctl.locator("input[type=text], input[type=number]").count():  # Text, IntText, FloatText
        inp = ctl.locator("input[type=text], input[type=number]").first
        value = inp.input_value()
        inp.fill(str(float(value) + 1) if inp.get_attribute("type") == "number" else value + "x")
        inp.press("Enter")
        return "text input: edited"
    classes = set((ctl.get_attribute("class") or "").split())
    if "widget-toggle-buttons" in classes:  # ToggleButtons: another option
        ctl.locator("button:not(.mod-active)").first.click()
        return "toggle buttons: another option"
    if ctl.evaluate("e => e.tagName") == "BUTTON" or "widget-toggle-button" in classes:  # ToggleButton, Button
        ctl.click()
        return "button: click"
    raise AssertionError(f"do not know how to move the primary control: {ctl.evaluate('e => e.outerHTML')[:300]}")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_lab_runs_in_jupyterlab(lab: Path, jupyterlab, browser):
    t0 = time.monotonic()
    timings = {}
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    console = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    try:
        page.goto(jupyterlab.url(lab.name, f"kl-{lab.stem}"), timeout=PAGE_LOAD_TIMEOUT_MS)
        page.wait_for_selector(f"{NB} .jp-Notebook .jp-Cell", timeout=PAGE_LOAD_TIMEOUT_MS)
        page.wait_for_timeout(2000)
        _accept_kernel_dialog(page)
        _wait(lambda: _kernel_idle(page), PAGE_LOAD_TIMEOUT_MS / 1000, "the kernel to start (idle)")
        timings["open_s"] = time.monotonic() - t0

        t_run = time.monotonic()
        _run_all(page)
        cells = _wait(
            lambda: _finished(page),
            RUN_ALL_TIMEOUT_S,
            f"{lab.name} to run all its cells",
            state=lambda: _run_state(page),
        )
        timings["run_all_s"] = time.monotonic() - t_run

        # 1. no cell shows an error
        errors = [
            f"{_where(c)}:\n{t.strip()[-1500:]}"
            for c in cells
            if c["code"]
            for t in c["stderr"]
            if "Traceback" in t or ERROR_LINE.search(t)
        ]
        assert not errors, f"{lab.name}: a cell failed\n" + "\n\n".join(errors)
        unrun = [_where(c) for c in cells if c["code"] and not re.search(r"\[\d+\]", c["prompt"])]
        assert not unrun, f"{lab.name}: cells did not run: {unrun}"

        # 2. every widget renders (give the front end time to build the views)
        def widgets_settled():
            text = page.locator(NB).inner_text()
            return not any(f in text for f in WIDGET_FAILURES)

        try:
            _wait(widgets_settled, WIDGET_SETTLE_TIMEOUT_S, "widgets to render")
        except AssertionError:
            cells = page.evaluate(_CELLS_JS, NB)
            bad = [
                f"{_where(c)}: {line.strip()!r}"
                for c in cells
                for line in c["out"].splitlines()
                if any(f in line for f in WIDGET_FAILURES)
            ]
            raise AssertionError(f"{lab.name}: widgets did not render: {bad or 'see the screenshot'}") from None
        cells = page.evaluate(_CELLS_JS, NB)
        empty = [_where(c) for c in cells for v in c["views"] if v["children"] == 0]
        assert not empty, f"{lab.name}: widget outputs with nothing rendered in {empty}"

        # 3. every plotly figure draws
        plots = _wait(
            lambda: _plots_drawn(page),
            WIDGET_SETTLE_TIMEOUT_S,
            "every plotly figure to draw",
            state=lambda: (
                f"figures (svg, traces drawn, title): "
                f"{[(p['svg'], p['traces'], p['title']) for p in page.evaluate(_PLOTS_JS, NB)]}"
            ),
        )[0]
        for i, p in enumerate(plots):
            assert p["width"] > 100 and p["height"] > 100, f"{lab.name}: figure {i} ({p['title']!r}) is {p}"
        timings["figures"] = len(plots)

        # 4. the primary control drives its output
        assert page.locator(f"{NB} .kl-primary-control").count(), (
            f"{lab.name}: no control marked with kafka_lab.ui.primary(...)"
        )
        assert page.locator(f"{NB} .kl-primary-output").count(), (
            f"{lab.name}: no output marked with kafka_lab.ui.primary_output(...)"
        )
        page.locator(f"{NB} .kl-primary-control").first.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        before = _primary_text(page)
        assert before.strip(), f"{lab.name}: the primary output is empty before the control is moved"
        t_move = time.monotonic()
        how = _move_primary(page)
        try:
            _wait(lambda: _primary_text(page) != before, PRIMARY_TIMEOUT_S, "the primary output to change")
        except AssertionError:
            raise AssertionError(
                f"{lab.name}: moved the primary control ({how}) but the text of "
                f".kl-primary-output stayed {before[:300]!r}"
            ) from None
        timings["primary_s"] = time.monotonic() - t_move
        _wait(lambda: _kernel_idle(page), 60, "the kernel to be idle after the move")
        page.wait_for_timeout(1000)
    finally:
        _screenshot(page, lab)
        timings["total_s"] = time.monotonic() - t0
        (ARTIFACTS / f"{lab.stem}.console.txt").write_text("\n".join(console) + "\n")
        with open(ARTIFACTS / "timings.txt", "a") as f:
            f.write(
                f"{lab.stem} "
                + json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in timings.items()})
                + "\n"
            )
        context.close()
        jupyterlab.shutdown_sessions()


def _screenshot(page, lab: Path) -> None:
    """The whole notebook, top to bottom: grow the viewport to the notebook's height, then shoot."""
    outer = f"{NB} .jp-WindowedPanel-outer"
    try:
        extra = page.evaluate(f"() => window.innerHeight - (document.querySelector('{outer}')?.clientHeight || 0)")
        # down to the last cell's bottom (the notebook's scroll-past-end padding is left out)
        height = page.evaluate(f"""() => {{
            const o = document.querySelector('{outer}'); if (!o) return 0;
            const cells = o.querySelectorAll('.jp-Cell'); if (!cells.length) return o.scrollHeight;
            return cells[cells.length - 1].getBoundingClientRect().bottom - o.getBoundingClientRect().top
                   + o.scrollTop + 40; }}""")
        page.set_viewport_size({"width": 1400, "height": int(min(max(height + extra + 40, 1000), 30000))})
        page.wait_for_timeout(1000)
        page.evaluate(f"() => {{ const o = document.querySelector('{outer}'); if (o) o.scrollTop = 0; }}")
        page.wait_for_timeout(1000)
        page.screenshot(path=str(ARTIFACTS / f"{lab.stem}.png"), full_page=True)
    except Exception as exc:  # a failed screenshot must not hide the test's own failure
        (ARTIFACTS / f"{lab.stem}.screenshot-error.txt").write_text(repr(exc))


def test_notebooks_on_disk_untouched():
    """Running the labs in JupyterLab wrote nothing back (committed notebooks stay output-free)."""
    changed = [p.name for p in LABS if hashlib.sha256(p.read_bytes()).hexdigest() != SNAPSHOT[p.name]]
    assert not changed, f"the browser run modified {changed}"
