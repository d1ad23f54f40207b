"""What the parsers of both agent CLIs (:mod:`~core.backends.pi_events`,
:mod:`~core.backends.claude_events`) build their Baton events with.

Each parser turns one step's printed lines into events of that run and step, stamped on its
own clock, and ends the step with a reason a person can act on. The rules that must read the
same for both CLIs live here once: which lines are events at all, how a process stopped by a
signal is named (whichever way the signal was reported), and how much of stderr an error shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from core.backends.cli_output import ERROR_TAIL_CHARS, json_object
from core.model.events import Event, Log

E = TypeVar("E", bound=Event)
LogLevel = Literal["debug", "info", "warning", "error"]

Dispatch = Callable[[dict[str, Any], list[Event]], None]
"""A parser's reader of one decoded line: appends the events it stands for."""

_SIGNAL_NAMES = {1: "SIGHUP", 2: "SIGINT", 9: "SIGKILL", 15: "SIGTERM"}
"""The signals a person, a terminal or Baton stops a CLI with."""


class StepEvents:
    """Makes one step's events: run id and step filled in, ``ts`` read from ``now`` when the
    event is made (a live step's run clock, or a transcript's own time)."""

    def __init__(self, run_id: str, step: int, now: Callable[[], float]) -> None:
        self._run_id = run_id
        self._step = step
        self._now = now

    def make(self, kind: type[E], **fields: Any) -> E:
        return kind(run_id=self._run_id, step=self._step, ts=self._now(), **fields)

    def log(self, level: LogLevel, message: str) -> Log:
        return self.make(Log, level=level, message=message)

    def read(self, dispatch: Dispatch, data: dict[str, Any], what: str) -> list[Event]:
        """The events ``dispatch`` makes of one decoded line. A line shaped unlike what the
        parser knows (a newer CLI, a hostile one) is a warning naming ``what``, never an
        exception: one odd line must not fail a step."""
        out: list[Event] = []
        try:
            dispatch(data, out)
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            out.append(self.log("warning", f"could not read {what}: {error!r}"))
        return out


def event_object(text: str) -> dict[str, Any] | None:
    """One printed line as a CLI event (a JSON object with a string ``type``), else None."""
    data = json_object(text)
    return data if data is not None and isinstance(data.get("type"), str) else None


def stopping_signal(exit_code: int | None) -> str | None:
    """The name of the signal that stopped the process, or None when none did.

    asyncio reports a signal as ``-n``; Node and shells exit with ``128 + n``, which is read
    as a signal only for the signals above (a program may exit 130 of its own accord too).
    ``None`` (nobody saw the process exit, as for a transcript) is no signal."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return _SIGNAL_NAMES.get(-exit_code, f"signal {-exit_code}")
    return _SIGNAL_NAMES.get(exit_code - 128)


def error_tail(stderr_tail: str) -> str:
    """The end of what a CLI printed on stderr, as much of it as a step's error shows."""
    return stderr_tail.strip()[-ERROR_TAIL_CHARS:].strip()
