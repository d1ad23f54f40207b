"""What a run is called and the word for its status — one scheme for the window, the command
line and exports, so a run reads the same wherever a person meets it.

* a preset run: ``implement add a --json flag`` (the preset and its arguments);
* a chain: ``scout → planner → worker``;
* parallel tasks: ``parallel: reviewer ×2, scout``;
* a single step: ``worker``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from core.model.events import RunStarted

STATUS_WORDS = {
    "running": "running",
    "waiting": "waiting for you",
    "ok": "done",
    "error": "failed",
    "aborted": "cancelled",
    "interrupted": "interrupted",
    "incomplete": "interrupted",
    "budget": "stopped at budget",
}
"""Run status (as stored, and the window's ``waiting``/``incomplete``) → the word shown."""


def run_name(mode: str, preset: str | None, args: Sequence[str], agents: Sequence[str]) -> str:
    """The run's name ("" when nothing is known yet: the caller shows the run id)."""
    if preset:
        return " ".join([preset, *args]).strip()
    if not agents:
        return ""
    if mode == "chain":
        return " → ".join(agents)
    if mode == "parallel":
        counts = Counter(agents)
        return "parallel: " + ", ".join(f"{a} ×{n}" if n > 1 else a for a, n in counts.items())
    return agents[0]


def status_word(status: str) -> str:
    """``aborted`` → ``cancelled``, ``ok`` → ``done`` …; unknown words are shown as they are."""
    return STATUS_WORDS.get(status, status)


class RunOrigin(BaseModel):
    """A run's parent: ``resume`` / ``rerun`` (:class:`core.model.events.Lineage`) or ``child`` (an
    agent started it from ``step`` of ``run_id``)."""

    kind: Literal["resume", "rerun", "continue", "follow_up", "child"]
    run_id: str
    step: int

    @classmethod
    def of(cls, event: RunStarted) -> RunOrigin | None:
        if event.lineage is not None:
            return cls(
                kind=event.lineage.kind, run_id=event.lineage.run_id, step=event.lineage.step
            )
        if event.parent_run is not None:
            return cls(kind="child", run_id=event.parent_run, step=event.parent_step or 0)
        return None

    def describe(self) -> str:
        """``resumed from run X at step 2`` …, steps counted from 1."""
        verb = {
            "resume": "resumed from",
            "rerun": "re-run from",
            "continue": "continues",
            "follow_up": "follow-up of",
            "child": "started by",
        }[self.kind]
        where = "at step" if self.kind in ("resume", "rerun", "follow_up") else "step"
        return f"{verb} run {self.run_id}, {where} {self.step + 1}"
