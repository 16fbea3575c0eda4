"""Lab 05, step 6: every number it teaches about retries that write twice and the idempotent producer, from the
same calls and seed as the notebook, against the ledger (a batch's copies in its leader's log) and the request log."""

import json
from pathlib import Path

import pytest

from kafka_lab.exercises import check
from kafka_lab.exercises import lab05 as ex
from kafka_lab.incident_stats import duplicate_summary
from kafka_lab.sim import purgatory_incident, truncation_incident
from kafka_lab.sim.server.broker import PID_BLOCK_SIZE
from kafka_lab.sim.server.producer_state import NUM_BATCHES_TO_RETAIN
from kafka_lab.ui import cluster as ui

LAB = Path(__file__).resolve().parent.parent / "labs" / "05_truncation.ipynb"
CELLS = json.loads(LAB.read_text())["cells"]
SRC = "\n".join("".join(c["source"]) for c in CELLS)
TEXT = " ".join(" ".join("".join(c["source"]).split()) for c in CELLS if c["cell_type"] == "markdown")
OPTIONS = {"producers": 50, "burst": 1, "rate_per_s": 20, "partitions": 20, "request_timeout_ms": 10}


@pytest.fixture(scope="module")
def runs():
    return {
        "plain": purgatory_incident(control_plane=False, **OPTIONS),
        "idempotent": purgatory_incident(control_plane=False, enable_idempotence=True, **OPTIONS),
    }


def _first(text):
    return next(i for i, c in enumerate(CELLS) if text in "".join(c["source"]))


def test_the_lab_makes_these_calls_and_the_exercise_shares_them(runs):
    for call in (
        "plain = purgatory_incident(control_plane=False, producers=50, burst=1, rate_per_s=20, partitions=20,\n"
        "                           request_timeout_ms=10)",
        "idempotent = purgatory_incident(control_plane=False, producers=50, burst=1, rate_per_s=20, partitions=20,\n"
        "                                request_timeout_ms=10, enable_idempotence=True)",
        'duplicates_table({"enable.idempotence=false": plain, "enable.idempotence=true": idempotent})',
    ):
        assert call in SRC, call
    assert ex.DUPLICATES == OPTIONS
    for on, key in ((False, "plain"), (True, "idempotent")):  # the check grades the runs the lab shows
        assert ex.duplicates_run(on).ledger.equals(runs[key].ledger)


def test_the_exercise_is_asked_before_the_runs_that_answer_it():
    assert _first('check("05.duplicates"') < _first("plain = purgatory_incident(")
    assert _first("DUPLICATE_CHOICES") < _first('check("05.duplicates"')
    assert check("05.duplicates", "b").ok and not check("05.duplicates", "a").ok


def test_retries_write_130_records_twice_without_idempotence_and_none_with_it(runs):
    plain, idem = duplicate_summary(runs["plain"]), duplicate_summary(runs["idempotent"])
    assert (plain["duplicate_records"], plain["duplicate_batches"], plain["duplicate_partitions"]) == (
        130,
        13,
        ["orders-0"],
    )
    assert (idem["duplicate_records"], idem["duplicate_batches"]) == (0, 0)
    assert "**130** records (**13** batches, all of `orders-0`) are in broker 2's log twice" in TEXT
    assert "removes them: **0** here" in TEXT
    assert (plain["retried_batches"], idem["retried_batches"]) == (86, 92)
    assert "retry as much (**92** batches sent more than once, against **86**)" in TEXT
    # conservation in both: every record handed over has one outcome; retries happen in both runs
    for s, res in ((plain, runs["plain"]), (idem, runs["idempotent"])):
        assert s["records"] == res.ledger["records"].sum() and s["retried_batches"] > 50
    # the table shows the same numbers
    table = ui.duplicates_table(
        {"enable.idempotence=false": runs["plain"], "enable.idempotence=true": runs["idempotent"]}
    )
    assert table.loc["records in a leader's log twice"].tolist() == [130, 0]
    assert table.loc["partitions holding them"].tolist() == ["orders-0", "—"]
    assert "Takeaway" in TEXT and "write a batch twice (130 records here)" in TEXT and "0 duplicates" in TEXT


def test_how_the_duplicates_come_about(runs):
    """The step's story, from the request log and the ledger: the duplicated batches waited out retry.backoff.ms
    behind a refused batch, each producer then sent up to five requests to broker 2 at once on one connection, and
    every duplicate is a batch sent more than once to broker 2."""
    res = runs["plain"]
    lg = res.ledger
    twice = lg[lg["duplicates"] > 0]
    assert (twice["attempts"] >= 2).all() and (twice["broker_id"] == 2).all()
    assert (twice["first_sent_ms"] - twice["created_ms"] > 10).all()  # they waited in the accumulator
    r = res.requests
    to_2 = r[(r["api"] == "Produce") & (r["broker_id"] == 2)]
    assert to_2.groupby(["client_id", "sent_ms"]).size().max() == 5  # max.in.flight.requests.per.connection
    assert "up to five requests (`max.in.flight.requests.per.connection`) on its one connection" in TEXT
    assert "`retry.backoff.ms` (100 ms)" in TEXT


def test_what_the_step_says_of_the_idempotent_producer():
    assert NUM_BATCHES_TO_RETAIN == 5 and "its last **5** batches (`ProducerStateManager`)" in TEXT
    assert PID_BLOCK_SIZE == 1000 and "ids from blocks of 1000" in TEXT
    message = "Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence."
    with pytest.raises(ValueError) as e:
        truncation_incident(control_plane=False, enable_idempotence=True)
    assert str(e.value) == message and f"`{message}`" in TEXT
    assert "`truncation_incident(control_plane=False, enable_idempotence=True)` is refused" in TEXT
    assert "Since Kafka 3.0 (KIP-679) the producer's defaults are `enable.idempotence=true` and `acks=all`" in TEXT
