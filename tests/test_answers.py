"""The answer readers every check shares (kafka_lab.exercises.answers), on the shapes learners type."""

import numpy as np
import pytest

from kafka_lab.exercises.answers import (
    PER_MILLISECOND,
    REPLICAS,
    SECONDS,
    Choices,
    choice,
    number,
    number_in,
    whole_number,
    whole_numbers,
)


@pytest.mark.parametrize(
    "answer, value",
    [
        (36, 36),
        (np.int64(36), 36),
        (36.0, 36),
        (36 / 6, 6),
        ("36", 36),
        (" 6.0 ", 6),
        ("-3", -3),
        ("+7", 7),
        (True, None),
        (6.5, None),
        ("6.5", None),
        ("36 replicas", None),
        ("twelve", None),
        (None, None),
        ([36], None),
    ],
)
def test_whole_number(answer, value):
    assert whole_number(answer) == value


@pytest.mark.parametrize(
    "answer, value",
    [
        ([0, 3, 1], [0, 3, 1]),
        ((0, 3, 1), [0, 3, 1]),
        (np.array([0, 3, 1]), [0, 3, 1]),
        (("0", "3", "1"), [0, 3, 1]),
        ("[0, 3, 1]", [0, 3, 1]),
        ("(0,3,1)", [0, 3, 1]),
        ("0 3 1", [0, 3, 1]),
        ("0; 3", [0, 3]),
        ({2: 1, 0: 3, 1: 2}, [3, 2, 1]),  # a mapping is read in key order
        ([], None),
        ("", None),
        ("0, x", None),
        ([0, 1.5], None),
        (b"031", None),
        (5, None),
        ({"a": 1, 0: 2}, None),
    ],
)
def test_whole_numbers(answer, value):
    assert whole_numbers(answer) == value


@pytest.mark.parametrize(
    "answer, value",
    [
        (50, 50.0),
        (12.5, 12.5),
        (np.float64(0.05), 0.05),
        ("50", 50.0),
        ("50 ms", 50.0),
        ("4,000/s", 4000.0),
        ("1,700", 1700.0),
        ("12,000.5 ms", 12000.5),
        # a decimal comma, as a European learner writes 12.23 s: not 1223 (a wrong answer called right or the
        # feedback for a number 100x too large)
        ("12,23", 12.23),
        ("0,5 s", None),  # "s" is no unit of number(): seconds() reads it
        ("1,5", 1.5),
        ("3,14159", 3.14159),
        ("1,2,3", None),
        ("12,23,4", None),
        ("4_000 requests per second", 4000.0),
        (" 62.5ms ", 62.5),
        ("1e3 rps", 1000.0),
        (True, None),
        (float("nan"), None),
        (float("inf"), None),
        ("inf", None),
        ("fifty", None),
        ("50 s", None),
        (None, None),
        ([50], None),
    ],
)
def test_number(answer, value):
    assert number(answer) == value


@pytest.mark.parametrize(
    "answer, units, value",
    [
        ("0.05 s", SECONDS, 0.05),
        ("50 seconds", SECONDS, 50.0),
        ("4 per ms", PER_MILLISECOND, 4.0),
        ("36 replicas", REPLICAS, 36.0),
        (" 1 Replica ", REPLICAS, 1.0),
        ("36", REPLICAS, None),  # no unit: the bare number is whole_number's or number's to read
        ("36 brokers", REPLICAS, None),
        ("many replicas", REPLICAS, None),
        (36, REPLICAS, None),
    ],
)
def test_number_in(answer, units, value):
    assert number_in(answer, units) == value


CHOICES = Choices({"a": "the queue drops it", "b": "the processor is blocked.", "c": "FIFO anyway"})


@pytest.mark.parametrize(
    "answer, key",
    [
        ("b", "b"),
        ("B", "b"),
        (" B. ", "b"),
        ("(b)", "b"),
        ("b)", "b"),
        ("'b'", "b"),
        ("[c]", "c"),
        ("the processor is blocked", "b"),
        ("The processor is blocked.", "b"),
        ("d", None),
        ("ab", None),
        ("", None),
        (2, None),
        (None, None),
        ("the processor", None),
    ],
)
def test_choice(answer, key):
    assert choice(answer, CHOICES) == key


def test_choice_keeps_the_keys_case():
    assert choice("c)", Choices({"A": "x", "C": "y"})) == "C"


def test_choices_show_as_a_lettered_list():
    assert repr(CHOICES) == "(a) the queue drops it\n(b) the processor is blocked.\n(c) FIFO anyway"
    shown = CHOICES._repr_html_()
    assert shown.count("<li>") == 3 and "<b>(b)</b> the processor is blocked." in shown
    assert "&lt;" in Choices({"a": "x < y"})._repr_html_()


def test_seconds_reads_a_unit_of_seconds_and_leaves_milliseconds_to_the_check():
    from kafka_lab.exercises.answers import seconds

    assert seconds("2.8 s") == seconds("2.8seconds") == seconds(" 2.8 sec ") == seconds(2.8) == 2.8
    assert seconds("3000 ms") == 3000.0  # left in ms: the check says the question asks seconds
    assert seconds("fast") is None and seconds(True) is None and seconds(10**400) is None
    # lab 09's fence time written with a decimal comma: 12.23 s, not 1223 s
    assert seconds("12,23 s") == seconds("12,23") == 12.23
