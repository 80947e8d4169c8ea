"""Structured output's decisions after a turn: accept, one retry that says what failed, then
an error."""

from __future__ import annotations

from peri_cli.agent.structured import (
    STRUCTURED_TOOL,
    Accept,
    GiveUp,
    Retry,
    StructuredCapture,
    decide,
)


def test_an_accepted_answer_is_the_value() -> None:
    capture = StructuredCapture()
    capture.accept({"n": 1})
    assert decide(capture, 0) == Accept({"n": 1})


def test_a_turn_without_a_call_is_retried_with_a_note_asking_for_the_call() -> None:
    step = decide(StructuredCapture(), 0)
    assert isinstance(step, Retry)
    assert f"call {STRUCTURED_TOOL}" in step.note


def test_a_refused_call_is_retried_with_its_validation_problem() -> None:
    capture = StructuredCapture()
    capture.refuse("n: 'x' is not of type 'integer'")
    step = decide(capture, 0)
    assert isinstance(step, Retry)
    assert "n: 'x' is not of type 'integer'" in step.note


def test_after_the_one_retry_a_failure_gives_up_saying_what_failed() -> None:
    capture = StructuredCapture()
    capture.refuse("n: required")
    capture.next_attempt()
    capture.refuse("n: still wrong")
    step = decide(capture, 1)
    assert isinstance(step, GiveUp)
    assert "after 1 retry" in step.error and "n: still wrong" in step.error
    nothing = decide(StructuredCapture(), 1)
    assert isinstance(nothing, GiveUp) and "was not called" in nothing.error


def test_a_valid_call_after_a_refused_one_in_the_same_turn_is_accepted() -> None:
    capture = StructuredCapture()
    capture.refuse("n: required")
    capture.accept({"n": 2})
    assert decide(capture, 0) == Accept({"n": 2})


def test_the_retry_judges_its_own_calls() -> None:
    capture = StructuredCapture()
    capture.refuse("n: required")
    capture.next_attempt()
    assert capture.problem is None and capture.calls == 0
    assert "was not called" in decide(capture, 1).error  # type: ignore[union-attr]
