"""tools/mutate.py's list of deliberate breaks still matches the model: each break's snippet occurs exactly
once in its file. A change to the model that rewrites a guarded line must carry its mutation along, or the
mutation run would skip that rule (this happened once: two snippets went stale unnoticed until a run)."""

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_every_mutation_snippet_matches_the_code_once():
    name = "kafka_lab_tools_mutate"
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / "mutate.py")
    mutate = importlib.util.module_from_spec(spec)
    sys.modules[name] = mutate  # its dataclasses look their module up while it loads
    spec.loader.exec_module(mutate)
    assert len(mutate.MUTATIONS) >= 150
    assert mutate.check_snippets(REPO, mutate.MUTATIONS) == []
