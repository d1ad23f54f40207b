"""Both CLI parsers end a step stopped by a signal alike (core.backends.cli_events)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from core.backends.claude_events import ClaudeEventParser
from core.backends.pi_events import PiEventParser
from core.model.events import StepFinished


def _ending(events: Sequence[object]) -> StepFinished:
    ending = events[-1]
    assert isinstance(ending, StepFinished)
    return ending


def _stopped_by(error: str | None) -> str | None:
    match = re.search(r"stopped by (.+) before it finished", error or "")
    return match.group(1) if match else None


@pytest.mark.parametrize(
    ("exit_code", "signal"),
    [
        (-15, "SIGTERM"),  # asyncio's report of a signal
        (-9, "SIGKILL"),
        (-6, "signal 6"),  # a signal without a name in the table is still a signal
        (130, "SIGINT"),  # Node's and the shells' 128 + n
        (143, "SIGTERM"),
        (129, "SIGHUP"),
        (134, None),  # 128 + 6 may be the program's own status: not read as a signal
        (1, None),
    ],
)
def test_both_parsers_name_the_same_signal(exit_code: int, signal: str | None) -> None:
    pi = _ending(PiEventParser("r", 0, clock=lambda: 1.0).finish(exit_code, "boom"))
    claude = _ending(ClaudeEventParser("r", 0, clock=lambda: 1.0).finish(exit_code, "boom"))
    assert _stopped_by(pi.error) == signal
    assert _stopped_by(claude.error) == signal
    if signal is not None:
        assert pi.status == claude.status == "aborted"
    else:
        assert pi.status == claude.status == "error"
        assert pi.error is not None and pi.error.endswith(f"status {exit_code}: boom")
        assert claude.error is not None and claude.error.endswith(f"status {exit_code}: boom")


def test_both_parsers_stamp_their_events_with_run_step_and_clock() -> None:
    for parser in (
        PiEventParser("run-1", 3, clock=lambda: 2.5),
        ClaudeEventParser("run-1", 3, clock=lambda: 2.5),
    ):
        (warning,) = parser.feed("not json at all")
        assert (warning.run_id, warning.step, warning.ts) == ("run-1", 3, 2.5)
        assert warning.type == "log"


@pytest.mark.parametrize(
    ("parser", "line", "named"),
    [
        (
            PiEventParser("r", 0, clock=lambda: 1.0),
            '{"type":"message_end","message":5}',
            "pi's 'message_end' event",
        ),
        (
            ClaudeEventParser("r", 0, clock=lambda: 1.0),
            '{"type":"user","message":3}',
            "a 'user' line",
        ),
    ],
)
def test_a_line_shaped_unlike_the_cli_is_a_warning_not_a_failure(
    parser: PiEventParser | ClaudeEventParser, line: str, named: str
) -> None:
    (warning,) = parser.feed(line)
    assert warning.type == "log" and warning.level == "warning"
    assert warning.message.startswith(f"could not read {named}: AttributeError(")
    ending = _ending(parser.finish(0))
    assert ending.status == "error"  # no answer came, and the odd line did not raise
