"""Labs are committed without outputs, follow the NN_topic naming, and use the package for the work."""

import json
import re
from pathlib import Path

import pytest

from kafka_lab.exercises import exercises

LABS = sorted((Path(__file__).resolve().parent.parent / "labs").glob("*.ipynb"))


def test_labs_exist_and_are_numbered():
    assert LABS, "no labs found"
    names = [p.name for p in LABS]
    assert names[0] == "00_start_here.ipynb"
    for n in names:
        assert re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", n), n
    numbers = [int(n[:2]) for n in names]
    assert numbers == sorted(set(numbers)), "lab numbers must be unique"


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"cell {i} has stored outputs"
            assert cell.get("execution_count") is None, f"cell {i} has an execution count"


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.name)
def test_exercise_checks_exist(path):
    """Every check("NN.x", ...) a lab calls is registered, and belongs to that lab."""
    src = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
    ids = re.findall(r"check\(\s*[\"'](\d\d\.[a-z0-9_]+)[\"']", src)
    known = exercises()
    for ex_id in ids:
        assert ex_id in known, f"{path.name} checks unknown exercise {ex_id}"
        assert ex_id.startswith(path.name[:2] + "."), f"{ex_id} used in {path.name}"
    lab_ids = {k for k in known if k.startswith(path.name[:2] + ".")}
    assert lab_ids <= set(ids), f"exercises registered but not in the lab: {lab_ids - set(ids)}"


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.name)
def test_cells_stay_short(path):
    """The package does the work: no code cell longer than 15 lines."""
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] == "code":
            lines = [ln for ln in "".join(cell["source"]).splitlines() if ln.strip()]
            assert len(lines) <= 15, f"cell {i} has {len(lines)} lines"
