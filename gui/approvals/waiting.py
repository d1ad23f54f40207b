"""Questions waiting for a person, each awaited by the step that asked: the common part of the
approval queue and the budget queue.

A step awaits :meth:`WaitingList.ask`; the window answers with :meth:`WaitingList.answer`. A
step cancelled while waiting (its run was cancelled) leaves the list by itself and says so
through ``cancelled``. Nothing blocks: each question is an asyncio future.

Threading: GUI thread only (= the asyncio loop's thread, qasync).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

Q = TypeVar("Q")
A = TypeVar("A")


@dataclass(eq=False)
class Waiting(Generic[Q, A]):
    question: Q
    future: asyncio.Future[A]


class WaitingList(Generic[Q, A]):
    """Oldest first. ``added(question)`` runs once a question is in the list (announce it,
    show it); ``cancelled(question)`` once a cancelled asker took its question out."""

    def __init__(self, added: Callable[[Q], None], cancelled: Callable[[Q], None]) -> None:
        self._entries: list[Waiting[Q, A]] = []
        self._added = added
        self._cancelled = cancelled

    async def ask(self, question: Q) -> A:
        """Wait in the list for the answer."""
        entry: Waiting[Q, A] = Waiting(question, asyncio.get_running_loop().create_future())
        self._entries.append(entry)
        self._added(question)
        try:
            return await entry.future
        except asyncio.CancelledError:
            if entry in self._entries:
                self._entries.remove(entry)
                self._cancelled(question)
            raise

    def answer(self, entry: Waiting[Q, A], answer: A) -> None:
        """Take ``entry`` out and hand ``answer`` to the step awaiting it."""
        self._entries.remove(entry)
        if not entry.future.done():
            entry.future.set_result(answer)

    def entries(self) -> list[Waiting[Q, A]]:
        return list(self._entries)

    def find(self, match: Callable[[Q], bool]) -> Waiting[Q, A] | None:
        return next((e for e in self._entries if match(e.question)), None)

    def __len__(self) -> int:
        return len(self._entries)
