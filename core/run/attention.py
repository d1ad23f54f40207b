"""What waits for the person, across every run: the attention inbox's model.

Four things wait: an approval (a tool call asks), a budget question (a cap was reached), a
graph's gate (a person decides before a step) and a failed step (resume, re-run or let it
be). Each is an :class:`Attention` keyed so the same thing is never listed twice and can be
taken off when it is answered elsewhere (the approval dialog, the run being cancelled).
Qt-free, so the window shows it and a terminal front end could list the same items.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

AttentionKind = Literal["approval", "budget", "gate", "failed"]

KIND_WORDS: dict[AttentionKind, str] = {
    "approval": "Approval needed",
    "budget": "Budget reached",
    "gate": "Gate waiting",
    "failed": "Step failed",
}
"""The heading of each kind: the notification's title and the inbox row's first words."""


@dataclass(frozen=True)
class Attention:
    kind: AttentionKind
    key: str
    """Unique among waiting items: the approval's request id, ``budget:RUN:STEP``, …"""
    run_id: str
    step: int
    """0-based, as in events; shown from 1."""
    run_title: str
    why: str
    """One sentence: what the step wants, or what went wrong."""

    def headline(self) -> str:
        """``Approval needed — implement "add a flag", step 2``: which run and which step."""
        return f"{KIND_WORDS[self.kind]} — {self.run_title}, step {self.step + 1}"


def failed_key(run_id: str, step: int) -> str:
    return f"failed:{run_id}:{step}"


def budget_key(run_id: str, step: int) -> str:
    return f"budget:{run_id}:{step}"


def gate_key(run_id: str, gate_id: str) -> str:
    """A waiting gate (``gate_waiting``'s ``gate_id``), taken off by its ``gate_decided``."""
    return f"gate:{run_id}:{gate_id}"


class AttentionList:
    """The waiting items, oldest first. Adding a key already there replaces it in place."""

    def __init__(self) -> None:
        self._items: dict[str, Attention] = {}

    def add(self, item: Attention) -> None:
        self._items[item.key] = item

    def remove(self, key: str) -> Attention | None:
        return self._items.pop(key, None)

    def remove_run(self, run_id: str, kinds: tuple[AttentionKind, ...]) -> list[Attention]:
        """Take off a run's items of ``kinds`` (it was resumed, or it ended)."""
        gone = [i for i in self._items.values() if i.run_id == run_id and i.kind in kinds]
        for item in gone:
            del self._items[item.key]
        return gone

    def get(self, key: str) -> Attention | None:
        return self._items.get(key)

    def __iter__(self) -> Iterator[Attention]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)
