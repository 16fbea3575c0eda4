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
def test_every_cell_has_its_own_id(path):
    """nbformat 4.5: a cell without an id is a MissingIDFieldWarning today and an error in a later nbformat."""
    nb = json.loads(path.read_text())
    assert (nb["nbformat"], nb["nbformat_minor"]) >= (4, 5)
    ids = [cell.get("id") for cell in nb["cells"]]
    assert None not in ids, f"cells without an id: {[i for i, x in enumerate(ids) if x is None]}"
    assert len(set(ids)) == len(ids), "two cells share an id"


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


# -- predict before you see ---------------------------------------------------------------------------------
# An exercise is asked, answered and checked before any cell shows its answer; the experiment that confirms
# it comes after the check. A cell that shows an exercise's answer says so in its metadata,
#     {"kafka_lab": {"reveals": ["02.rack_failure"]}}
# (markdown that explains the answer too), and the calls below always show an answer, so a cell making one
# must come after the check even if nobody marked it.
REVEALING_CALLS = {
    "warmup_panel(": ("00.replicas", "00.per_broker", "00.acks_all_losses"),
    "not_enough_replicas_message(": ("00.acks_all_losses",),
    "migration_summary(": ("01.controller_endpoint",),
    "migration_panel(": ("01.controller_endpoint",),
    "assign_replicas_to_brokers(kip, 12": ("02.partition0", "02.partition6"),
    "rack_awareness_panel(": ("02.partition0",),
    "assign_replicas_to_brokers(uneven": ("02.penalized",),
    "rack_failure_panel(": ("02.rack_failure",),
    "comparison(": ("02.rack_failure",),
    "sweep(": ("03.saturation", "03.littles_law"),
    "controller_behind_backlog(400, control_plane=False)": ("03.backlog_wait",),
    "backlog_table(": ("03.backlog_wait", "03.priority_full"),
    "backlog_panel(": ("03.backlog_wait", "03.priority_full", "03.why_rejected"),
    "compare(purgatory_incident": ("04.what_ends_the_wait", "04.lai_wait"),
    "purgatory_figure(runs20": ("04.twenty_partitions",),
    "strict = purgatory_incident(": ("04.min_insync",),
    "purgatory_panel(": ("04.what_ends_the_wait", "04.lai_wait", "04.twenty_partitions", "04.min_insync"),
    "compare(truncation_incident": ("05.which_records", "05.how_many"),
    "latency_figure(": ("05.price",),
    "decision_ms=10": ("05.late_move",),
    "acks_all = purgatory_incident(": ("05.acks_all",),
    "strict = truncation_incident(": ("05.min_insync",),
    "truncation_panel(": (
        "05.which_records",
        "05.how_many",
        "05.price",
        "05.late_move",
        "05.acks_all",
        "05.min_insync",
    ),
    "compare(stale_metadata_incident": ("06.why_longer",),
    "stale_answers_table(": ("06.refresh",),
    "compare(unavailability_incident": ("06.half_migrated", "06.which_brokers"),
    "staleness_panel(": ("06.why_longer", "06.refresh", "06.half_migrated", "06.which_brokers"),
    "shutdown_panel(": ("07.shutdown_estimate", "07.quadratic_log"),
    "scale_figure(": ("07.shutdown_estimate", "07.quadratic_log"),
    "calibration_html(": ("07.shutdown_estimate", "07.quadratic_log", "07.why_half"),
    "cluster_shutdown_html(": ("07.shutdown_estimate", "07.quadratic_log"),
    "failover_panel(": ("07.why_half",),
    "metadata_log_panel(kraft_run())": ("09.broker_epoch",),
    "failover_table(": ("09.failover",),
    "shutdown_table(": ("09.shutdown",),
    "shutdown_seeds(": ("09.shutdown",),
    "modes_table(": ("09.busy_broker", "09.hwm"),
    "commit_path(": ("09.busy_broker", "09.hwm"),
    "incidents_panel(": ("09.busy_broker", "09.hwm"),
    "fencing_panel(": ("09.fenced_at",),
    "zombie_panel(": ("07.who_rejects", "07.fence_left"),
    "zombie_in_cluster(": ("07.who_rejects", "07.fence_left"),
    "restart_race_table(": ("07.broker_epoch",),
    "last_isr_table(": ("07.last_isr",),
    "unclean_table(": ("07.unclean",),
    "lines_table(": ("08.count_lines",),
    "analyses.control_plane(": ("08.no_control_plane",),
    "spark.sql(": ("08.no_control_plane",),
    "controller_request_waits(": ("08.lai_p99",),
    "queue_figure(": ("08.lai_p99",),
    "truncated_records(": ("08.truncated",),
    "latency_panel(": ("08.no_control_plane", "08.lai_p99"),
}


# Words in a markdown cell that give an exercise's answer away (whitespace-normalised): such a cell must come
# after the check too. A learner review found each of these above its exercise once.
REVEALING_TEXT = {
    "different from the inter-broker listener": ("01.same_listener",),
    "blocks a network (processor) thread that has a controller request ready to be enqueued": ("03.why_rejected",),
    "is spent in the socket": ("03.why_rejected",),
    "500 / 4 = 125 ms": ("03.littles_law",),
    "until the LeaderAndISR request is processed to mark partition0": ("04.what_ends_the_wait",),
    "is gone, acknowledged or not": ("05.which_records",),
    "causing the clients to retry and avoid the data loss": ("05.price",),
    "and still **770** are lost": ("05.late_move",),
    "one request in flight per broker": ("06.why_longer",),
    "1.1, about **3 seconds**": ("07.shutdown_estimate",),
    "The old `StopReplica` reaches the **new** incarnation": ("07.broker_epoch",),
    "Whichever broker comes back first, the partition waits for": ("07.last_isr",),
    "below its own high watermark": ("07.unclean",),
}


def _cells(path):
    return json.loads(path.read_text())["cells"]


# A format example (how to write an answer) is no answer either. Lab 02 once showed "e.g. `[5, 4, 2]`" above its
# first exercise: partition 3's replicas, three neighbours of the rack-alternated list, which is the very walk
# the exercise asks for. Above each check, no markdown shows a replica list of KIP-36's topic but the answers of
# exercises already checked.
_REPLICA_LIST = re.compile(r"[\[(]\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*[\])]")


def _kip36_replica_lists() -> dict[tuple, int]:
    from kafka_lab.assignment import KIP36_RACKS, assign_replicas_to_brokers, brokers_from_racks

    topic = assign_replicas_to_brokers(brokers_from_racks(KIP36_RACKS), 12, 3, fixed_start_index=0)
    return {tuple(replicas): p for p, replicas in topic.items()}


def replica_lists_shown_too_early(cells) -> list[str]:
    """Each replica list of KIP-36's topic that a markdown cell shows above a check it is not yet the answer of."""
    known, checks = _kip36_replica_lists(), _check_cells(cells)
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        for m in _REPLICA_LIST.finditer("".join(cell["source"])):
            shown = tuple(int(x) for x in m.groups())
            if shown not in known:
                continue
            answered = {tuple(exercises()[e].solution) for e, j in checks.items() if j < i and e.startswith("02.")}
            later = sorted(e for e, j in checks.items() if j > i and e in ("02.partition0", "02.partition6"))
            if later and shown not in answered:
                out.append(f"cell {i} shows {m.group(0)} (partition {known[shown]}'s replicas) above check {later[0]}")
    return out


def test_lab02_shows_no_replica_list_above_a_check_it_is_not_the_answer_of():
    (lab,) = [p for p in LABS if p.name.startswith("02_")]
    assert not replica_lists_shown_too_early(_cells(lab))


def test_the_replica_list_rule_catches_the_old_format_example():
    (lab,) = [p for p in LABS if p.name.startswith("02_")]
    cells = _cells(lab)
    i = next(i for i, c in enumerate(cells) if "**Exercise 1.**" in "".join(c["source"]))
    cells[i]["source"] = ["**Exercise 1.** Answer with a list, leader first, e.g. `[5, 4, 2]`."]
    assert replica_lists_shown_too_early(cells) == [
        f"cell {i} shows [5, 4, 2] (partition 3's replicas) above check 02.partition0"
    ]


def _check_cells(cells) -> dict[str, int]:
    found = {}
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            for ex_id in re.findall(r"^check\(\s*[\"'](\d\d\.[a-z0-9_]+)[\"']", "".join(cell["source"]), re.M):
                found.setdefault(ex_id, i)
    return found


def _revealers(cells, lab: str) -> list[tuple[int, str, str]]:
    """(cell index, exercise id, why) for every cell of lab ``lab`` ("04") that shows an exercise's answer."""
    out = []
    for i, cell in enumerate(cells):
        for ex_id in cell.get("metadata", {}).get("kafka_lab", {}).get("reveals", []):
            out.append((i, ex_id, "marked in its metadata"))
        if cell["cell_type"] == "markdown":
            words = " ".join("".join(cell["source"]).split())
            out.extend(
                (i, ex_id, f"says {text!r}")
                for text, ids in REVEALING_TEXT.items()
                if text in words
                for ex_id in ids
                if ex_id.startswith(lab + ".")  # the same words may be plain teaching in a later lab
            )
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            for call, ids in REVEALING_CALLS.items():
                if call in src:
                    out.extend((i, ex_id, f"calls {call}...)") for ex_id in ids)
    return out


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.name)
def test_exercises_are_asked_before_any_cell_shows_their_answer(path):
    cells = _cells(path)
    checks = _check_cells(cells)
    lab = path.name[:2]
    for i, ex_id, why in _revealers(cells, lab):
        assert ex_id.startswith(lab + "."), f"cell {i} of {path.name} reveals another lab's exercise {ex_id}"
        if ex_id in checks:
            assert i > checks[ex_id], (
                f"{path.name}: cell {i} shows the answer to {ex_id} ({why}) before the "
                f"exercise is checked in cell {checks[ex_id]}: ask first, then show"
            )
    for ex_id, i in checks.items():
        # the question, then the answer cell, then the check: the answer cell is the code cell just above
        prev = [j for j in range(i) if cells[j]["cell_type"] == "code"]
        assert prev and re.match(r"answer(_\w+)?\s*=", "".join(cells[prev[-1]]["source"])), (
            f"{path.name}: the code cell before check({ex_id!r}) (cell {i}) is not its answer cell"
        )


def test_the_order_rule_catches_an_answer_shown_too_early(tmp_path):
    """The rule above, on a notebook that shows a panel before its exercise (as lab 00 once did)."""
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": ["warmup_panel(partitions=12)"]},
            {"cell_type": "markdown", "metadata": {}, "source": ["**Exercise 1.** How many replicas?"]},
            {"cell_type": "code", "metadata": {}, "source": ["answer_1 = ..."]},
            {"cell_type": "code", "metadata": {}, "source": ['check("00.replicas", answer_1)']},
            {"cell_type": "markdown", "metadata": {"kafka_lab": {"reveals": ["00.per_broker"]}}, "source": ["6 each"]},
            {"cell_type": "code", "metadata": {}, "source": ["answer_2 = ..."]},
            {"cell_type": "code", "metadata": {}, "source": ['check("00.per_broker", answer_2)']},
        ]
    }
    path = tmp_path / "00_start_here.ipynb"
    path.write_text(json.dumps(nb))
    with pytest.raises(AssertionError, match=r"cell 0 .* 00.replicas .*calls warmup_panel"):
        test_exercises_are_asked_before_any_cell_shows_their_answer(path)
    nb["cells"] = nb["cells"][1:]  # no panel: now the marked markdown is the one that comes too early
    path.write_text(json.dumps(nb))
    with pytest.raises(AssertionError, match=r"cell 3 .* 00.per_broker .*marked in its metadata"):
        test_exercises_are_asked_before_any_cell_shows_their_answer(path)
    # words that give the answer away (here across a line break), in a markdown cell above the check
    nb["cells"] = [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["until the LeaderAndISR request\nis processed to mark partition0"],
        },
        {"cell_type": "code", "metadata": {}, "source": ["answer_1 = ..."]},
        {"cell_type": "code", "metadata": {}, "source": ['check("04.what_ends_the_wait", answer_1)']},
    ]
    path = tmp_path / "04_purgatory.ipynb"
    path.write_text(json.dumps(nb))
    with pytest.raises(AssertionError, match=r"cell 0 .* 04.what_ends_the_wait .*says"):
        test_exercises_are_asked_before_any_cell_shows_their_answer(path)


# -- a quoted source is named where a lab first leans on it ------------------------------------------------------
# docs/kafka-reference.md lists the sources the labs quote. A learner review found "the Kafka controller deep-dive
# talk" and "the blog post in our sources" unnamed: the first markdown cell of a lab that speaks of a talk or a
# blog post names it as far as docs/ records it (no more: a title or an address docs/ lacks is not cited).
SOURCE_NAMES = {
    "talk": ("Kafka Controller: A Deep Dive",),
    "blog": ("Apache Kafka Supports 200K Partitions Per Cluster", "KIP-291's request priorities"),
}
REFERENCE = Path(__file__).resolve().parent.parent / "docs/kafka-reference.md"


def unnamed_sources(cells) -> list[str]:
    out = []
    for word, names in SOURCE_NAMES.items():
        for i, cell in enumerate(cells):
            text = " ".join("".join(cell["source"]).split())
            if cell["cell_type"] == "markdown" and re.search(rf"\b{word}\b", text):
                if not any(name in text for name in names):
                    out.append(f"cell {i} speaks of a {word} without naming it (one of {names})")
                break
    return out


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.name)
def test_a_quoted_talk_or_blog_post_is_named_where_first_mentioned(path):
    assert not unnamed_sources(_cells(path))


def test_the_names_are_docs_sources_and_the_rule_sees_an_unnamed_one():
    reference = " ".join(REFERENCE.read_text().split())
    assert all(name in reference for names in SOURCE_NAMES.values() for name in names)
    cells = [{"cell_type": "markdown", "source": ["As the Kafka controller deep-dive talk puts it, ..."]}]
    assert unnamed_sources(cells) == [f"cell 0 speaks of a talk without naming it (one of {SOURCE_NAMES['talk']})"]
