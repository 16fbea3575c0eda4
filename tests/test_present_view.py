"""tools/present.py's view of a lab, without a browser: what it keeps, and that no heading stands over nothing.

(The views in Voila and Chromium are tests/browser/test_present.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import present  # noqa: E402  (tools/present.py)

LABS = sorted((REPO / "labs").glob("[0-9][0-9]_*.ipynb"))


def _items(view: dict) -> list:
    """The view as (heading level or None, shows something) per code cell and per markdown line."""
    items = []
    for c in view["cells"]:
        if c["cell_type"] == "code":
            items.append((None, present.shows("".join(c["source"]))))
            continue
        for line in "".join(c["source"]).split("\n"):
            m = present.HEADING.match(line)
            items.append((len(m.group(1)), False) if m else (None, bool(line.strip())))
    return items


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_every_heading_of_a_view_has_something_under_it(lab):
    """A heading whose section was all prose (or only runs a later cell shows) is left out of the view: before the
    next heading of its level or above there is a cell that shows something, or text. The title stays."""
    nb = json.loads(lab.read_text())
    view = present.presentation(nb)
    items = _items(view)
    for k, (level, _) in enumerate(items):
        if level is None or level == 1:
            continue
        after = next(((lv, s) for lv, s in items[k + 1 :] if s or (lv is not None and lv <= level)), (None, False))
        assert after[1], f"{lab.stem}: a heading of level {level} with nothing under it (item {k})"
    assert items[0][0] == 1  # the title first
    # every code cell the view keeps is still there (only headings go)
    kept = [c for c in view["cells"] if c["cell_type"] == "code"]
    assert kept and all(any(c["source"] == d["source"] for d in nb["cells"]) for c in kept)


def test_lab_04s_view_drops_its_prose_only_sections():
    """Lab 04's "Purgatory, briefly" (prose) and "The incident" (prose and a run its steps show) had nothing under
    them; its steps and takeaway keep their headings."""
    view = present.presentation(json.loads((REPO / "labs" / "04_purgatory.ipynb").read_text()))
    text = "\n".join("".join(c["source"]) for c in view["cells"])
    assert "Purgatory, briefly" not in text and "## The incident" not in text
    assert "## Step 1" in text and "## Step 4: the live experiment" in text and "## Takeaway" in text


def test_what_shows_on_the_page():
    """present.shows: a cell's last expression, or a print / display / .show() anywhere; not an assignment, an
    import, a definition, or an expression silenced with ``;``."""
    assert present.shows("panel(1)") and present.shows("x = f()\nfig.show()") and present.shows("print(x)\ny = 1")
    assert present.shows("x = 1\nx") and present.shows("runs = compare()\ntable(runs)")
    assert not present.shows("runs = compare(a, b)") and not present.shows("from x import y\nimport z")
    assert not present.shows("fig(1);") and not present.shows("def f():\n    print(1)")
