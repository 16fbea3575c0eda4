"""The presentation view of a lab: its experiments without the code, for a lecture, served by Voila.

    python tools/present.py 04     # writes build/present/04_purgatory.ipynb and prints its path
    ./run.sh present 04            # the same, then serves it with Voila (--port N or KAFKA_LAB_PORT)

A lecturer wants the lab's live experiments on the screen, not its code or its exercises. From the
lab's notebook this keeps:

- the title, the question, every heading (a step's prose is the lecturer's to say), and the takeaway
  (but for a line that points at the exercises);
- every code cell that builds or shows an experiment: panels, figures, tables, and the imports and
  runs they need. Voila runs them and shows only their outputs (``--strip_sources``, its default).

and leaves out the exercises (their answer cells, checks, choices and solutions: a lecture asks the
room instead), the generated opening and closing, and everything else in prose. A heading that would
have nothing under it (its section was all prose, or only runs whose results a later cell shows) is left
out too, so that no title stands over an empty space. The lab itself is not touched; the view is written
under ``build/`` (git-ignored) each time, so it follows the lab.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LABS_DIR = REPO / "labs"
OUT_DIR = REPO / "build" / "present"

#: a code cell belongs to an exercise when it asks for, checks or solves an answer, or shows its choices
EXERCISE_CODE = re.compile(
    r"^\s*answer_\w+\s*=|\bcheck\(|\bshow_solution\(|^\s*[A-Z][A-Z0-9_]*_CHOICES\s*$",
    re.M,
)
#: markdown cells kept whole: the question
KEPT_WHOLE = re.compile(r"^\*\*The question\.\*\*")
#: the heading from which a cell is kept to its end
TAKEAWAY = re.compile(r"^## Takeaway\b")
#: a line of the takeaway that points at the exercises (a lecture has none)
ABOUT_EXERCISES = re.compile(r"show_solution\(|\bcheck\(|\bexercises?\b", re.I)
#: a markdown heading, and its level (the number of #)
HEADING = re.compile(r"^(#{1,6})\s")
#: calls that put something on the page wherever they stand in a cell
SHOWING_CALLS = {"print", "display", "show"}


def find_lab(which: str) -> Path:
    """The lab notebook for ``which``: its number (``"04"``, ``"4"``) or its file name, with or without .ipynb."""
    labs = sorted(LABS_DIR.glob("[0-9][0-9]_*.ipynb"))
    w = str(which).strip().removesuffix(".ipynb")
    if w.isdigit():
        w = f"{int(w):02d}"
    found = [p for p in labs if p.stem == w or p.stem.split("_", 1)[0] == w]
    if len(found) != 1:
        listing = ", ".join(p.stem.split("_", 1)[0] for p in labs)
        raise SystemExit(f"present: no lab {which!r}; the labs are {listing} (e.g. ./run.sh present 04)")
    return found[0]


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _set_source(cell: dict, text: str) -> dict:
    lines = text.split("\n")
    cell["source"] = [line + "\n" for line in lines[:-1]] + [lines[-1]]
    return cell


def shows(code: str) -> bool:
    """Whether a code cell puts something on the page: its last statement is an expression (Jupyter displays
    its value; not after a ``;``), or it calls ``print``, ``display`` or a ``.show()``."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return True  # not ours to judge: Voila will show its error
    if body and isinstance(body[-1], ast.Expr) and not code.rstrip().endswith(";"):
        return True
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # a definition shows nothing until called
    for node in ast.walk(ast.Module(body=[b for b in body if not isinstance(b, defs)], type_ignores=[])):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id in SHOWING_CALLS) or (
                isinstance(f, ast.Attribute) and f.attr in SHOWING_CALLS
            ):
                return True
    return False


def _without_empty_headings(cells: list) -> list:
    """``cells`` less every heading with nothing shown under it before the next heading of its level or above
    (a deeper heading's content counts for it); the title (``# ``) stays. A cell left empty goes."""
    items = []  # (cell index, line index or None, heading level or None, shows something)
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            items.append((i, None, None, shows(_source(cell))))
            continue
        for j, line in enumerate(_source(cell).split("\n")):
            m = HEADING.match(line)
            if m:
                items.append((i, j, len(m.group(1)), False))
            elif line.strip():
                items.append((i, j, None, True))
    drop = set()
    for k, (i, j, level, _) in enumerate(items):
        if level is None or level == 1:
            continue
        for _i, _j, lv, showing in items[k + 1 :]:
            if showing:
                break
            if lv is not None and lv <= level:
                drop.add((i, j))
                break
        else:
            drop.add((i, j))
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and any(d[0] == i for d in drop):
            lines = [x for j, x in enumerate(_source(cell).split("\n")) if (i, j) not in drop]
            text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
            if not text:
                continue
            cell = _set_source(cell, text)
        out.append(cell)
    return out


def presentation(nb: dict) -> dict:
    """The presentation notebook of lab notebook ``nb`` (a new notebook; ``nb`` is unchanged)."""
    out = copy.deepcopy(nb)
    cells = []
    for cell in out["cells"]:
        text = _source(cell)
        if cell.get("metadata", {}).get("kafka_lab", {}).get("generated"):
            continue  # the opening (what you learn, need, time), the closing and lab 00's map
        if cell["cell_type"] == "code":
            if EXERCISE_CODE.search(text):
                continue
            cell["outputs"], cell["execution_count"] = [], None
            cells.append(cell)
        elif cell["cell_type"] == "markdown":
            if text.startswith("# ") or KEPT_WHOLE.match(text):
                cells.append(cell)
                continue
            lines = text.split("\n")
            end = next((i for i, line in enumerate(lines) if TAKEAWAY.match(line)), len(lines))
            kept = [line for line in lines[:end] if line.startswith("#")]
            if end < len(lines):  # the takeaway, but for a line about the exercises
                kept.append("\n".join(line for line in lines[end:] if not ABOUT_EXERCISES.search(line)))
            if kept:
                cells.append(_set_source(cell, "\n\n".join(kept)))
    out["cells"] = _without_empty_headings(cells)
    return out


def write_presentation(which: str, out_dir: Path = OUT_DIR) -> Path:
    """Write the presentation view of lab ``which`` into ``out_dir``; return its path."""
    lab = find_lab(which)
    view = presentation(json.loads(lab.read_text()))
    view.setdefault("metadata", {})["kafka_lab"] = {"presentation_of": lab.name}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / lab.name
    path.write_text(json.dumps(view, indent=1, ensure_ascii=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lab", help="the lab's number (04) or file name")
    ap.add_argument("--out", type=Path, default=OUT_DIR, help=f"where to write it (default {OUT_DIR})")
    args = ap.parse_args(argv)
    print(write_presentation(args.lab, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
