"""The layout's rules, checked on the source (docs/architecture.md, "Rules that keep it that way").

- ``ui/``, ``exercises/`` and the notebooks use only the model's public names: no ``_private`` name of
  ``kafka_lab.listeners``, ``.assignment``, ``.replication`` or ``.sim`` (imported, or reached as an
  attribute of an imported model module), and no private module of it.
- A ``ui`` module exports only what it defines: it does not re-export the model, so a notebook
  imports the model from the model's package; a notebook imports from ``ui`` only names ``ui`` defines.
- A fixture has one home: no constant literal (a dict, list, tuple or set of literals) is defined
  with the same value in two modules of the package.
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "kafka_lab"
LABS = sorted((REPO / "labs").glob("*.ipynb"))
VIEW_PACKAGES = ("kafka_lab.ui", "kafka_lab.exercises")


def _is_model(module: str) -> bool:
    return module.startswith("kafka_lab.") and not module.startswith(VIEW_PACKAGES)


def _module_name(path: Path) -> str:
    """``kafka_lab.ui.lab02``; a package's ``__init__`` keeps its name, so that ``from . import`` resolves alike."""
    return ".".join(path.relative_to(REPO).with_suffix("").parts)


def _resolve(node: ast.ImportFrom, here: str) -> str:
    """The absolute module of a (possibly relative) ``from ... import`` in module ``here``."""
    if not node.level:
        return node.module or ""
    base = here.split(".")[: -node.level]
    return ".".join(base + ([node.module] if node.module else []))


def private_uses(tree: ast.AST, here: str) -> list[str]:
    """Every private model name ``tree`` (the code of module ``here``) imports or reaches."""
    found, model_aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _is_model(a.name):
                    if any(p.startswith("_") for p in a.name.split(".")):
                        found.append(f"import {a.name}")
                    if a.asname:
                        model_aliases[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node, here)
            if not (module == "kafka_lab" or _is_model(module)):
                continue
            if any(p.startswith("_") for p in module.split(".")):
                found.append(f"from {module} import ...")
            for a in node.names:
                full = f"{module}.{a.name}"
                if a.name.startswith("_"):
                    found.append(f"from {module} import {a.name}")
                elif _is_model(full):  # a model module bound to a name, e.g. `from kafka_lab import assignment as asg`
                    model_aliases[a.asname or a.name] = full
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in model_aliases
        ):
            found.append(f"{node.value.id}.{node.attr} ({model_aliases[node.value.id]})")
    return found


def _notebook_code(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def _view_sources():
    for sub in ("ui", "exercises"):
        for path in sorted((PACKAGE / sub).glob("*.py")):
            yield path, _module_name(path), path.read_text()
    for path in LABS:
        yield path, "labs", _notebook_code(path)


@pytest.mark.parametrize("path, here, source", list(_view_sources()), ids=lambda v: getattr(v, "name", None))
def test_views_use_only_public_model_names(path, here, source):
    assert not private_uses(ast.parse(source), here), f"{path.name} uses private model names"


def _defined(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
            names |= {e.id for t in targets if isinstance(t, ast.Tuple) for e in t.elts if isinstance(e, ast.Name)}
    return names


def _all(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


UI_MODULES = sorted(p for p in (PACKAGE / "ui").glob("lab*.py"))


@pytest.mark.parametrize("path", UI_MODULES, ids=lambda p: p.name)
def test_ui_modules_export_only_what_they_define(path):
    tree = ast.parse(path.read_text())
    reexported = sorted(set(_all(tree)) - _defined(tree))
    assert not reexported, f"{path.name} re-exports {reexported}: import those from the model's package"


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.name)
def test_notebooks_import_the_model_from_the_model(lab):
    wrong = []
    for node in ast.walk(ast.parse(_notebook_code(lab))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kafka_lab.ui."):
            defined = _defined(ast.parse((REPO / (node.module.replace(".", "/") + ".py")).read_text()))
            wrong += [f"{a.name} from {node.module}" for a in node.names if a.name not in defined]
    assert not wrong, f"{lab.name} imports model names through ui: {wrong}"


def _literal_constants():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not (isinstance(node, ast.Assign) and isinstance(node.value, (ast.Dict, ast.List, ast.Tuple, ast.Set))):
                continue
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue  # built from names: not a literal fixture
            names = [t.id for t in node.targets if isinstance(t, ast.Name) and t.id != "__all__"]
            if names and len(value) >= 2:
                yield repr(value), f"{path.relative_to(REPO)}:{names[0]}"


def test_each_fixture_has_one_home():
    homes = defaultdict(list)
    for value, where in _literal_constants():
        homes[value].append(where)
    twice = [places for places in homes.values() if len(places) > 1]
    assert not twice, f"the same constant is defined in several places: {twice}"


def test_the_checks_see_what_they_look_for():
    """Each check against a made-up module: the violations it must report, and a clean case."""
    bad = ast.parse(
        "from kafka_lab import assignment as asg\nfrom kafka_lab.sim.experiments import _hidden\n"
        "import kafka_lab.sim.theory as th\nfrom kafka_lab.assignment._old import x\n"
        "asg._java_string_key('a'); th._private(); asg.public()"
    )
    assert sorted(private_uses(bad, "kafka_lab.ui.lab09")) == sorted(
        [
            "from kafka_lab.sim.experiments import _hidden",
            "from kafka_lab.assignment._old import ...",
            "asg._java_string_key (kafka_lab.assignment)",
            "th._private (kafka_lab.sim.theory)",
        ]
    )
    ok = ast.parse("from kafka_lab.exercises import _Verdict\nfrom . import _helper\nimport kafka_lab.ui as u\nu._x")
    assert private_uses(ok, "kafka_lab.ui.lab09") == []
    tree = ast.parse(
        "from kafka_lab.assignment import KIP36_RACKS\n__all__ = ['KIP36_RACKS', 'panel']\ndef panel(): ..."
    )
    assert set(_all(tree)) - _defined(tree) == {"KIP36_RACKS"}


# -- the import graph: no circles, and each room of sim/ imports only the rooms below it --------------------------
def _modules() -> dict[str, str]:
    """``{module name: source}`` of every module of the package."""
    return {_module_name(p): p.read_text() for p in sorted(PACKAGE.rglob("*.py"))}


def import_graph(modules: dict[str, str]) -> dict[str, set[str]]:
    """``{module: the package modules it imports}``, function-level imports included. ``from pkg import name``
    counts as importing ``pkg.name`` when that is a module of the package, else ``pkg``. A package's name stands
    for its ``__init__``; the implicit import of a module's parent packages is not counted (Python runs them
    first, whatever the module imports)."""
    names = {m.removesuffix(".__init__") for m in modules}
    graph = {}
    for module, source in modules.items():
        here = module.removesuffix(".__init__")
        base = here if module.endswith(".__init__") else here.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                    target = ".".join(parts + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for a in node.names:
                    if f"{target}.{a.name}" in names:
                        edges.add(f"{target}.{a.name}")
                    elif target in names:
                        edges.add(target)
        graph[here] = edges - {here}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of two or more modules (Tarjan), sorted: the import circles."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_import_circles():
    """No module of kafka_lab imports, directly or through others, a module that imports it (function-level
    imports too: a lazy import hides a circle, it does not remove it)."""
    assert cycles(import_graph(_modules())) == []


SIM = "kafka_lab.sim"
#: sim/'s rooms (docs/architecture.md, "The layout") and the rooms each may import; the modules at the top of
#: sim/ (the cluster and the scripted runs) may import any room, and no room imports them
ROOMS = {
    "common": set(),
    "network": {"common"},
    "server": {"common", "network"},
    "clients": {"common", "network"},
    "zk": {"common", "network", "server"},
    "kraft": {"common", "network", "server"},
}
#: what the model (listeners, assignment, replication, sim) never imports: the views, and what reads the model's
#: records back out (logs, spark); the other way round they may
VIEWS = ("kafka_lab.ui", "kafka_lab.exercises", "kafka_lab.logs", "kafka_lab.spark", "kafka_lab.incident_stats")
MODEL = ("kafka_lab.listeners", "kafka_lab.assignment", "kafka_lab.replication", "kafka_lab.sim")
#: imports the rules allow by name, each with its reason (none today)
EXCEPTIONS: dict[tuple[str, str], str] = {}


def _room(module: str) -> str | None:
    """The room of a sim module (``server``), "" for the top of sim/, None outside sim."""
    if module != SIM and not module.startswith(SIM + "."):
        return None
    parts = module.split(".")
    return parts[2] if len(parts) > 3 or (len(parts) == 3 and parts[2] in ROOMS) else ""


def room_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that breaks a rule of the rooms, or the model's independence of the views."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if (module, target) in EXCEPTIONS:
                continue
            if module.startswith(MODEL) and target.startswith(VIEWS):
                found.append(f"{module} imports {target}: the model never imports what reads it")
            here, there = _room(module), _room(target)
            if here and there is not None and there != here and there not in ROOMS[here]:
                what = "the top of sim/" if there == "" else f"sim/{there}/"
                found.append(
                    f"{module} imports {target}: sim/{here}/ may import only {sorted(ROOMS[here])}, not {what}"
                )
    return found


def test_each_room_of_sim_imports_only_the_rooms_below_it():
    assert room_violations(import_graph(_modules())) == []


def test_every_room_is_a_package_with_its_docstring():
    """Each room says which of Kafka's packages it mirrors and what lives there (its __init__'s docstring)."""
    for room in ROOMS:
        init = PACKAGE / "sim" / room / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) if init.is_file() else None
        assert doc and ("kafka" in doc.lower()), f"sim/{room}/__init__.py has no docstring naming Kafka's package"
    assert {p.name for p in (PACKAGE / "sim").iterdir() if p.is_dir() and p.name != "__pycache__"} == set(ROOMS)


def test_the_graph_checks_see_what_they_look_for():
    """A made-up package: a lazy circle, a relative import, a room importing upwards, the model importing a view."""
    made_up = {
        "kafka_lab.sim.__init__": "from .cluster import Cluster",
        "kafka_lab.sim.cluster": "from .server import broker\nfrom .zk.controller import Controller",
        "kafka_lab.sim.server.__init__": "",
        "kafka_lab.sim.server.broker": "from ..network.request import Request\ndef f():\n    from ..zk import controller",
        "kafka_lab.sim.network.request": "import numpy",
        "kafka_lab.sim.zk.controller": "def g():\n    from kafka_lab.sim.server.broker import Broker",
        "kafka_lab.sim.clients.ledger": "from kafka_lab.sim.cluster import Cluster\nfrom kafka_lab.ui import x",
        "kafka_lab.ui.__init__": "",
    }
    graph = import_graph(made_up)
    assert graph["kafka_lab.sim.cluster"] == {"kafka_lab.sim.server.broker", "kafka_lab.sim.zk.controller"}
    assert graph["kafka_lab.sim"] == {"kafka_lab.sim.cluster"}
    assert cycles(graph) == [["kafka_lab.sim.server.broker", "kafka_lab.sim.zk.controller"]]
    assert room_violations(graph) == [
        "kafka_lab.sim.clients.ledger imports kafka_lab.sim.cluster: sim/clients/ may import only "
        "['common', 'network'], not the top of sim/",
        "kafka_lab.sim.clients.ledger imports kafka_lab.ui: the model never imports what reads it",
        "kafka_lab.sim.server.broker imports kafka_lab.sim.zk.controller: sim/server/ may import only "
        "['common', 'network'], not sim/zk/",
    ]
