"""The condition language of graph presets: parsed by hand (never eval), typed, with columns."""

from __future__ import annotations

import pytest

from core.definitions.conditions import ConditionError, StepResult, parse_condition

REVIEW = {
    "passed": False,
    "issues": [
        {"severity": "major", "description": "a"},
        {"severity": "major", "description": "b"},
        {"severity": "minor", "description": "c"},
    ],
}


def holds(text: str, **results: StepResult) -> bool:
    return parse_condition(text).holds(results)


def test_counts_and_severity_order() -> None:
    check = StepResult("done", REVIEW)
    assert holds("check.count(major) == 2", check=check)
    assert holds("check.count(critical) == 0 and check.count(major) > 1", check=check)
    assert holds("check.max_severity >= major", check=check)
    assert not holds("check.max_severity >= critical", check=check)
    assert holds("check.max_severity > minor and not check.passed", check=check)
    assert holds("check.max_severity == none", check=StepResult("done", {"passed": True}))


def test_status_words_and_parentheses() -> None:
    assert holds("scout.status == done", scout=StepResult("done"))
    assert holds(
        "(a.status == failed or a.status == skipped) and not b.status != done",
        a=StepResult("skipped"),
        b=StepResult("done"),
    )


def test_a_step_without_a_result_counts_as_skipped() -> None:
    assert holds("gone.status == skipped")
    assert holds("gone.count(critical) == 0")
    assert not holds("gone.passed")


def test_names_with_hyphens_and_the_steps_read() -> None:
    condition = parse_condition("check-2.passed or fix_1.status == done")
    assert condition.steps() == ["check-2", "fix_1"]


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("check.count(major) == ", 22, "expected a value"),
        ("check.severity >= major", 6, "unknown attribute"),
        ("check.max_severity >= 3", 19, "cannot compare a severity with a number"),
        ("check.status > done", 13, "only be compared with == or !="),
        ("check.count(huge) == 0", 12, "count takes a severity"),
        ("check.count(major)", 0, "not true or false"),
        ("(check.passed", 13, "expected ')'"),
        ("check.passed; rm -rf /", 12, "unexpected character ';'"),
        ("__import__('os').system('x')", 11, "unexpected character"),
        ("", 0, "empty"),
    ],
)
def test_errors_say_where(text: str, column: int, words: str) -> None:
    with pytest.raises(ConditionError) as caught:
        parse_condition(text)
    assert words in str(caught.value)
    assert caught.value.column == column


RAN = {"done", "failed", "stopped"}


@pytest.mark.parametrize(
    ("text", "statuses", "could"),
    [
        ("a.max_severity >= major", {"a": RAN}, True),  # a structured result could be anything
        ("a.max_severity >= major", {"a": {"skipped"}}, False),  # nothing found when skipped
        ("a.max_severity >= major", {}, False),  # not run yet: skipped
        ("a.status == skipped", {"a": RAN}, False),
        ("a.status == skipped or a.passed", {"a": RAN}, True),
        ("a.status == failed and a.passed", {"a": {"skipped", "failed"}}, True),
        ("a.status == skipped and a.passed", {"a": {"skipped", "done"}}, False),
        ("not a.passed and a.status == done", {"a": RAN}, True),
        ("a.status == done and a.status != done", {"a": RAN | {"skipped"}}, False),
        ("a.status == done and b.status == skipped", {"a": RAN, "b": {"skipped"}}, True),
        ("false or (true and not true)", {}, False),
    ],
)
def test_could_hold_tries_every_outcome_of_the_steps_read(
    text: str, statuses: dict[str, set[str]], could: bool
) -> None:
    """What validation refuses a ``when:`` by: no outcome makes it true (Kleene's three
    values for structured results, which could be anything once a step ran)."""
    assert parse_condition(text).could_hold(statuses) is could
