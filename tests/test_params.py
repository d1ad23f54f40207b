"""Typed agent parameters: spec checks, the values a run shows, and getting them back."""

from __future__ import annotations

import re

import pytest

from core.definitions.agents import AgentFileError, parse_agent_text
from core.definitions.params import ParamsError, params_shown, run_params, split_shown, step_params


def agent(name: str, params: str) -> object:
    return parse_agent_text(f"---\nname: {name}\ndescription: d\nparams:\n{params}---\nbody\n")


TONE = "  tone: {type: enum, values: [formal, casual], default: casual}\n"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("  n: {type: integer, min: 5, max: 1}\n", "'min' (5) is greater than 'max' (1)"),
        ("  s: {type: string, max: 3}\n", "apply to number and integer parameters only"),
    ],
)
def test_bad_ranges_are_file_errors(params: str, message: str) -> None:
    with pytest.raises(AgentFileError, match=re.escape(message)):
        agent("x", params)


def test_values_shown_per_step_come_back_for_a_rerun() -> None:
    writer = agent("writer", TONE + "  count: {type: integer, default: 2, max: 9}\n")
    run_values = run_params([writer, writer], {"count": "3"})  # type: ignore[list-item]
    first = step_params(writer, {}, run_values)  # type: ignore[arg-type]
    second = step_params(writer, {"tone": "formal"}, run_values)  # type: ignore[arg-type]
    assert first == {"tone": "casual", "count": 3}
    shown = params_shown([(writer, first), (writer, second)])  # type: ignore[list-item]
    assert shown == {"1.tone": "casual", "2.tone": "formal", "count": 3}
    assert split_shown(shown, 2) == ({"count": 3}, [{"tone": "casual"}, {"tone": "formal"}])


def test_a_step_value_outside_its_enum_names_the_allowed_ones() -> None:
    writer = agent("writer", TONE)
    with pytest.raises(ParamsError, match="Input should be 'formal' or 'casual'"):
        step_params(writer, {"tone": "rude"}, {})  # type: ignore[arg-type]
