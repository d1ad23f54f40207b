"""The window's budget asker: reached caps from every run, asked one at a time.

:class:`BudgetQueue` is the :data:`core.model.budget.BudgetAsker` a run launched from the window
gets. The runner awaits it before the step's next request (so nothing is spent while the
question is open); it queues the question, shows the oldest in the
:class:`gui.approvals.budget_dialog.BudgetDialog`, and returns the raised caps or None (stop).
A run cancelled meanwhile cancels the awaiting task: its question leaves the queue.

Threading: GUI thread only (= the asyncio loop's thread, qasync).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from core.model.budget import BudgetQuestion, Caps
from gui.approvals.budget_dialog import BudgetDialog
from gui.approvals.waiting import WaitingList


class BudgetQueue(QObject):
    """``await queue(question)``: the person's answer. ``titles(run_id)`` names a run."""

    # -- signals (GUI thread) ------------------------------------------------------------

    questionQueued = Signal(object)
    """A :class:`BudgetQuestion` waits for a person."""
    questionResolved = Signal(object)
    """That question was answered, or its run was cancelled."""

    def __init__(
        self, parent: QWidget | None = None, titles: Callable[[str], str] = lambda run_id: run_id
    ) -> None:
        super().__init__(parent)
        self._parent_widget = parent
        self._titles = titles
        self._dialog: BudgetDialog | None = None
        self._waiting: WaitingList[BudgetQuestion, Caps | None] = WaitingList(
            self._queued, self._resolved
        )

    # -- public API ----------------------------------------------------------------------

    async def __call__(self, question: BudgetQuestion) -> Caps | None:
        return await self._waiting.ask(question)

    @property
    def dialog(self) -> BudgetDialog:
        if self._dialog is None:
            self._dialog = BudgetDialog(self._parent_widget)
            self._dialog.answered.connect(self._answered)
        return self._dialog

    def pending(self) -> list[BudgetQuestion]:
        return [entry.question for entry in self._waiting.entries()]

    def show_dialog(self) -> None:
        """Bring the question back to the front (the inbox's "open")."""
        self._refresh()

    def stop_all(self) -> None:
        """Answer every question with "stop" (the window is closing)."""
        for entry in self._waiting.entries():
            self._waiting.answer(entry, None)
            self._resolved(entry.question)

    # -- private -------------------------------------------------------------------------

    def _queued(self, question: BudgetQuestion) -> None:
        self.questionQueued.emit(question)
        self._refresh()

    def _resolved(self, question: BudgetQuestion) -> None:
        self.questionResolved.emit(question)
        self._refresh()

    def _answered(self, question: BudgetQuestion, caps: Caps | None) -> None:
        entry = self._waiting.find(lambda waiting: waiting is question)
        if entry is not None:
            self._waiting.answer(entry, caps)
            self._resolved(question)

    def _refresh(self) -> None:
        entries = self._waiting.entries()
        if not entries:
            if self._dialog is not None:
                self._dialog.clear_question()
            return
        first = entries[0].question
        self.dialog.show_question(first, self._titles(first.run_id), len(entries))
