"""The list of deliberate breaks still matches the model (tools/mutate.py loads it from one mutations.toml per
package folder, beside the code it breaks).

Each break's snippet occurs exactly once in its file: a change to the model that rewrites a guarded line must
carry its mutation along, or the mutation run would skip that rule (this happened once: two snippets went
stale unnoticed until a run). Each entry names the test that kills it (``killed_by``), a test that exists, so
that the run tries it first and a reader finds a rule's guard from the rule.
"""

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _mutate():
    name = "kafka_lab_tools_mutate"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "tools" / "mutate.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up while it loads
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_every_mutation_snippet_matches_the_code_once():
    mutate = _mutate()
    assert len(mutate.MUTATIONS) >= 150
    assert mutate.check_snippets(REPO, mutate.MUTATIONS) == []


def test_every_mutation_names_the_test_that_kills_it():
    mutate = _mutate()
    assert mutate.missing_killers(REPO, mutate.MUTATIONS) == []


def test_each_list_lives_beside_the_code_it_breaks():
    """A mutations.toml sits in a package folder, and its first edit of each entry is of that folder's code."""
    mutate = _mutate()
    for m in mutate.MUTATIONS:
        home = Path(m.home).parent
        assert (REPO / home / "__init__.py").is_file(), m.home
        assert Path(m.edits[0][0]).parent == home, (m.name, m.home, m.edits[0][0])


def test_the_checks_see_what_they_look_for(tmp_path):
    """A malformed entry is refused by name; a killer that names no test, or a stale snippet, is reported."""
    mutate = _mutate()
    pkg = tmp_path / "kafka_lab" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "code.py").write_text("x = 1\nx = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "def test_one():\n    pass\n\nclass TestB:\n    def test_two(self): ...\n"
    )
    entry = "[[mutation]]\nname = 'm{i}'\nrule = 'r'\nsource = 's'\nkilled_by = '{k}'\nfile = 'code.py'\nold = 'x = 1'\nnew = ''\n"
    (pkg / "mutations.toml").write_text(entry.format(i=1, k="tests/test_a.py::test_one"))
    (m,) = mutate.load_mutations(tmp_path)
    assert m.edits == (("kafka_lab/pkg/code.py", "x = 1", ""),) and m.home == "kafka_lab/pkg/mutations.toml"
    assert mutate.missing_killers(tmp_path, [m]) == []
    assert "occurs 2 times" in mutate.check_snippets(tmp_path, [m])[0]
    assert mutate.record_killers(tmp_path, {"m1": "tests/test_a.py::TestB::test_two"}) == ["m1"]
    assert mutate.load_mutations(tmp_path)[0].killed_by == "tests/test_a.py::TestB::test_two"
    killers = ["tests/test_a.py::TestB::test_two", "tests/test_a.py::test_one[case-1]", "tests/test_a.py"]
    bad = ["", "tests/test_a.py::test_three", "tests/test_a.py::TestB::test_one", "tests/test_z.py::test_one"]
    (pkg / "mutations.toml").write_text("\n".join(entry.format(i=i, k=k) for i, k in enumerate(killers + bad)))
    found = mutate.missing_killers(tmp_path, mutate.load_mutations(tmp_path))
    assert [p.split(" ")[0] for p in found] == [f"m{i}" for i in range(len(killers), len(killers + bad))]
    # what a run's first failure records: the node id, cut before parameters pytest's summary cut at a space
    assert mutate.killer("tests/test_a.py::test_one[case-1]") == "tests/test_a.py::test_one[case-1]"
    assert mutate.killer("tests/test_a.py::test_one[a message") == "tests/test_a.py::test_one"
    assert mutate.killer("collection/import error: tests/test_a.py") == "tests/test_a.py"
    assert mutate.killer("timed out after 900 s") == ""
    assert mutate.killer("tests/test_a.py::test_one[PLAINTEXT://[::1]:9092]") == "tests/test_a.py::test_one"
    (pkg / "mutations.toml").write_text(entry.format(i=1, k="t") + "typo = 1\n")
    with pytest.raises(ValueError, match=r"mutations.toml, entry 1 \(m1\): missing \[\], unknown \['typo'\]"):
        mutate.load_mutations(tmp_path)
