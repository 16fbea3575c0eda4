"""Self-checks for the labs' guided exercises.

A guided exercise is a question in a lab, an answer cell the learner fills in, and a check that
answers in plain words. Every exercise is registered here, once, with its solution and at least
one typical wrong answer, so the test suite can prove each check against both:

>>> from kafka_lab.exercises import check
>>> check("01.controller_endpoint", None).status
'unanswered'

A check never raises at the learner: whatever the answer (the wrong type, a typo, an exception
inside the check), it comes back as a :class:`Feedback` that says what is wrong and how to go on.

Writing an exercise (in ``kafka_lab/exercises/labNN.py``; modules here are discovered
automatically)::

    @exercise("01.controller_endpoint", solution="CONTROLLER://broker1:9091",
              wrong=["INTERNAL://broker1:9092"],
              prompt="Which endpoint does the controller connect to?")
    def _(answer):
        if answer == truth:
            return correct("... and why")
        return incorrect("what is wrong", hint="where to look")

Checks compute the truth from the package (``kafka_lab.listeners``, ``kafka_lab.assignment``,
``kafka_lab.sim``), never from a copy of the expected value, so a check cannot drift from the model.
"""

from __future__ import annotations

import html
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Exercise",
    "Feedback",
    "check",
    "correct",
    "exercise",
    "exercises",
    "incorrect",
    "is_unanswered",
    "show_solution",
    "unanswered",
]

Status = Literal["correct", "incorrect", "unanswered"]

# Symbols every common font has (DejaVu, Liberation): colour emoji render as empty boxes without an emoji font.
_ICON = {"correct": "✓", "incorrect": "✗", "unanswered": "✎"}
_COLOUR = {"correct": "#1b7f3b", "incorrect": "#b3261e", "unanswered": "#5f6368"}


@dataclass(frozen=True)
class Feedback:
    """What a check says about one answer: a status, a message and, when wrong, a hint."""

    exercise_id: str
    status: Status
    message: str
    hint: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "correct"

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        head = {"correct": "Correct", "incorrect": "Not yet", "unanswered": "Not answered yet"}[self.status]
        text = f"{_ICON[self.status]} [{self.exercise_id}] {head}: {self.message}"
        if self.hint:
            text += f"\n   Hint: {self.hint}"
        return text

    def __repr__(self) -> str:  # what a notebook prints when the check is a cell's last expression
        return str(self)

    def _repr_html_(self) -> str:
        head = {"correct": "Correct", "incorrect": "Not yet", "unanswered": "Not answered yet"}[self.status]
        hint = f"<div style='margin-top:4px'><b>Hint:</b> {html.escape(self.hint)}</div>" if self.hint else ""
        return (
            f"<div class='kl-feedback kl-feedback-{self.status}' style='border-left:4px solid "
            f"{_COLOUR[self.status]};padding:6px 10px;margin:4px 0'>"
            f"<b>{_ICON[self.status]} {head}</b> <span style='color:#666'>[{html.escape(self.exercise_id)}]</span>"
            f"<div>{html.escape(self.message)}</div>{hint}</div>"
        )


@dataclass(frozen=True)
class _Verdict:
    status: Status
    message: str
    hint: str | None = None


def correct(why: str) -> _Verdict:
    """The answer is right; ``why`` says what makes it right (the learning point)."""
    return _Verdict("correct", why)


def incorrect(what: str, hint: str) -> _Verdict:
    """The answer is wrong; ``what`` says what is wrong with it, ``hint`` how to find the right one."""
    if not hint:
        raise ValueError("an incorrect verdict needs a hint")
    return _Verdict("incorrect", what, hint)


def unanswered(message: str = "fill in the answer cell above, then run this cell again.") -> _Verdict:
    return _Verdict("unanswered", message)


def is_unanswered(answer: Any) -> bool:
    """``None``, ``...`` and empty strings or containers are the blank answers of a fresh notebook."""
    if answer is None or answer is Ellipsis:
        return True
    if isinstance(answer, str) and not answer.strip():
        return True
    return isinstance(answer, (list, tuple, dict, set)) and len(answer) == 0


@dataclass(frozen=True)
class Exercise:
    """One guided exercise: its id (``"NN.name"``, NN = the lab), prompt, check and answers."""

    id: str
    prompt: str
    checker: Callable[[Any], _Verdict]
    solution: Any
    wrong: tuple[Any, ...]
    explanation: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def lab(self) -> str:
        return self.id.split(".", 1)[0]

    def check(self, answer: Any) -> Feedback:
        if is_unanswered(answer):
            v = unanswered()
        else:
            try:
                v = self.checker(answer)
            except Exception as exc:  # a check must never show a learner a traceback
                v = incorrect(
                    f"this answer could not be checked ({type(exc).__name__}: {exc}).",
                    hint=f"the exercise asks: {self.prompt}",
                )
            if not isinstance(v, _Verdict):
                raise TypeError(f"check for {self.id} returned {v!r}, not a verdict")
        return Feedback(self.id, v.status, v.message, v.hint)


_REGISTRY: dict[str, Exercise] = {}


def exercise(exercise_id: str, *, solution: Any, wrong: list | tuple, prompt: str, explanation: str = ""):
    """Register a check. ``wrong`` must hold at least one typical wrong answer."""
    if not wrong:
        raise ValueError(f"exercise {exercise_id} needs at least one typical wrong answer")

    def register(fn: Callable[[Any], _Verdict]) -> Callable[[Any], _Verdict]:
        if exercise_id in _REGISTRY:
            raise ValueError(f"exercise {exercise_id} is registered twice")
        _REGISTRY[exercise_id] = Exercise(exercise_id, prompt, fn, solution, tuple(wrong), explanation)
        return fn

    return register


_loaded = False


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    _loaded = True


def exercises(lab: str | None = None) -> dict[str, Exercise]:
    """Every registered exercise (of one lab, e.g. ``"01"``), by id."""
    _load_all()
    return {k: v for k, v in sorted(_REGISTRY.items()) if lab is None or v.lab == lab}


def check(exercise_id: str, answer: Any) -> Feedback:
    """Check a learner's answer; the result shows itself in a notebook."""
    _load_all()
    if exercise_id not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY))
        return Feedback(
            exercise_id,
            "incorrect",
            f"there is no exercise called {exercise_id!r}.",
            hint=f"the exercises are: {known}",
        )
    return _REGISTRY[exercise_id].check(answer)


def show_solution(exercise_id: str) -> str:
    """The solution and why, for a learner who is stuck (deliberately one call away, not on the page)."""
    _load_all()
    ex = _REGISTRY[exercise_id]
    text = f"[{ex.id}] {ex.prompt}\nSolution: {ex.solution!r}"
    if ex.explanation:
        text += f"\nWhy: {ex.explanation}"
    return text
