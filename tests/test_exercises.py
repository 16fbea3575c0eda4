"""Every guided exercise's check, run against its solution and against its typical wrong answers."""

import pytest

from kafka_lab.exercises import Feedback, Solution, check, exercises, show_solution

ALL = exercises()


def test_every_lab_with_exercises_has_at_least_three():
    labs = {}
    for ex in ALL.values():
        labs.setdefault(ex.lab, []).append(ex.id)
    for lab, ids in labs.items():
        assert len(ids) >= 3, f"lab {lab} has only {ids}"


@pytest.mark.parametrize("ex_id", sorted(ALL))
def test_solution_is_correct(ex_id):
    fb = check(ex_id, ALL[ex_id].solution)
    assert isinstance(fb, Feedback)
    assert fb.status == "correct", str(fb)
    assert fb.message and len(fb.message) > 10, "a correct answer is told why it is right"


@pytest.mark.parametrize("ex_id", sorted(ALL))
def test_wrong_answers_get_a_hint(ex_id):
    for wrong in ALL[ex_id].wrong:
        fb = check(ex_id, wrong)
        assert fb.status == "incorrect", f"{wrong!r} passed: {fb}"
        assert fb.hint, f"{wrong!r} got no hint"
        assert "Traceback" not in str(fb)


@pytest.mark.parametrize("ex_id", sorted(ALL))
def test_blank_answer_is_not_answered_yet(ex_id):
    for blank in (None, ..., ""):
        assert check(ex_id, blank).status == "unanswered"


@pytest.mark.parametrize("ex_id", sorted(ALL))
def test_garbage_answer_is_feedback_not_traceback(ex_id):
    fb = check(ex_id, object())
    assert fb.status == "incorrect" and fb.hint


@pytest.mark.parametrize("ex_id", sorted(ALL))
def test_solution_can_be_shown(ex_id):
    sol = show_solution(ex_id)
    assert isinstance(sol, Solution) and check(ex_id, sol.solution).ok
    # a shell gets plain text, a notebook formatted text: no raw "\n" escapes in either
    for text in (str(sol), repr(sol), sol._repr_markdown_(), sol._repr_html_()):
        assert ex_id in text and "\\n" not in text
    assert str(sol) == repr(sol) and "Solution:" in str(sol)
    if ALL[ex_id].explanation:
        assert ALL[ex_id].explanation in str(sol) and "**Why:**" in sol._repr_markdown_()


def test_a_multi_line_solution_is_shown_as_a_block():
    sol = show_solution("01.fix_config")
    assert "```\nbroker.id=1\n" in sol._repr_markdown_() and "<pre" in sol._repr_html_()
    assert "\nbroker.id=1\n" in str(sol)


def test_unknown_solution_lists_the_exercises():
    with pytest.raises(ValueError, match=r"no exercise called '00\.replica'; the exercises are: 00\.acks_all_losses, "):
        show_solution("00.replica")


def test_unknown_exercise_is_feedback():
    fb = check("99.nope", 1)
    assert fb.status == "incorrect" and "no exercise" in fb.message


def _choice_sets():
    """Every multiple-choice option set of an exercise module: (lab number, name, Choices)."""
    import importlib
    import pkgutil

    import kafka_lab.exercises as pkg
    from kafka_lab.exercises.answers import Choices

    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name.startswith("lab"):
            module = importlib.import_module(f"kafka_lab.exercises.{mod.name}")
            for name, value in vars(module).items():
                if isinstance(value, Choices):
                    yield mod.name[3:], name, value


@pytest.mark.parametrize("lab, name, options", list(_choice_sets()), ids=lambda v: v if isinstance(v, str) else "")
def test_multiple_choice_options_are_shown_from_code_not_retyped(lab, name, options):
    import json
    from pathlib import Path

    (path,) = (Path(__file__).resolve().parent.parent / "labs").glob(f"{lab}_*.ipynb")
    cells = json.loads(path.read_text())["cells"]
    markdown = " ".join(" ".join("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    code = [ln.strip() for c in cells if c["cell_type"] == "code" for ln in "".join(c["source"]).splitlines()]
    assert name in code, f"{path.name} never shows {name} (a cell whose last line is {name})"
    retyped = [text for text in options.values() if " ".join(text.split())[:40] in markdown]
    assert not retyped, f"{path.name} retypes options of {name} in markdown: {retyped}"


@pytest.mark.parametrize("lab, name, options", list(_choice_sets()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_right_option_is_not_the_one_that_stands_out(lab, name, options):
    """A learner review found the right option was always the longest, and the only one giving a reason: a
    tell that answers without thinking. The right option is at most a quarter longer than the longest wrong
    one; its reason goes in the feedback."""
    # the exercise whose checker reads these options
    (ex,) = [e for e in exercises().values() if e.id.startswith(lab + ".") and name in e.checker.__code__.co_names]
    right = len(options[ex.solution])
    wrong = max(len(text) for key, text in options.items() if key != ex.solution)
    assert right <= 1.25 * wrong, f"{ex.id}: the right option ({right} characters) stands out against {wrong}"
