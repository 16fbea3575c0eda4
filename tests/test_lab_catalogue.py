"""The path through the labs: tools/labs.py's catalogue writes the README's table, lab 00's map, and each
lab's opening (what it teaches, needs, how long) and closing (a summary, a link to the next); the test
fails when any of them is out of date."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import labs as catalogue  # noqa: E402


def test_everything_generated_is_up_to_date():
    stale = catalogue.out_of_date()
    assert not stale, f"out of date, run `python tools/labs.py`: {[str(p.relative_to(REPO)) for p in stale]}"


def test_every_lab_opens_with_its_header_and_ends_with_its_footer():
    for lab in catalogue.CATALOGUE:
        cells = json.loads((REPO / "labs" / lab.file).read_text())["cells"]
        kinds = [c.get("metadata", {}).get("kafka_lab", {}).get("generated") for c in cells]
        assert cells[0]["source"][0].startswith(f"# {lab.stem[:2]} · "), f"{lab.file}: title first"
        assert kinds[1] == "header" and kinds[-1] == "footer", lab.file
        header = "".join(cells[1]["source"])
        assert "What you learn:" in header and "What you need:" in header and f"about {lab.minutes} minutes" in header
        links = re.findall(r"\]\(([^)]+\.ipynb)\)", "".join(cells[-1]["source"]))
        assert links and all((REPO / "labs" / link).exists() for link in links), (lab.file, links)
    # the footers chain the labs in order
    nexts = [
        re.search(
            r"\*\*Next:\*\* \[[^]]+\]\(([^)]+)\)",
            "".join(json.loads((REPO / "labs" / lab.file).read_text())["cells"][-1]["source"]),
        )
        for lab in catalogue.CATALOGUE[:-1]
    ]
    assert [m[1] for m in nexts] == [lab.file for lab in catalogue.CATALOGUE[1:]]
    # and the last one leads back to the map
    last = json.loads((REPO / "labs" / catalogue.CATALOGUE[-1].file).read_text())["cells"][-1]
    assert f"Back to the map: [{catalogue.CATALOGUE[0].name}]({catalogue.CATALOGUE[0].file})" in "".join(last["source"])


@pytest.fixture
def copy_of_repo(tmp_path):
    shutil.copytree(REPO / "labs", tmp_path / "labs", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    return tmp_path


def test_a_hand_edit_of_a_generated_part_is_caught(copy_of_repo):
    readme = copy_of_repo / "README.md"
    readme.write_text(readme.read_text().replace("| 30 min |", "| 25 min |", 1))
    lab = copy_of_repo / "labs" / "02_rack_awareness.ipynb"
    nb = json.loads(lab.read_text())
    nb["cells"][1]["source"] = ["**Time:** about 5 minutes."]
    lab.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert set(catalogue.out_of_date(copy_of_repo)) == {readme, lab}


def test_a_lab_without_an_entry_is_caught(copy_of_repo):
    shutil.copy(copy_of_repo / "labs" / "03_control_plane.ipynb", copy_of_repo / "labs" / "99_not_listed.ipynb")
    with pytest.raises(ValueError, match=r"labs without an entry in tools/labs.py's CATALOGUE: \['99_not_listed'\]"):
        catalogue.out_of_date(copy_of_repo)
