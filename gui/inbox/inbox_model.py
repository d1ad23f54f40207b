"""The window's attention inbox: approvals, budget questions and failed steps of every run
started from the window, in one list. The list itself is Qt-free
(:class:`core.run.attention.AttentionList`); this object fills it from the run controller and says
when it changed.

Sources, all on the GUI thread (= the asyncio loop's):

* the :class:`gui.approvals.approval_queue.ApprovalQueue`'s queued / resolved signals;
* the :class:`gui.approvals.budget_queue.BudgetQueue`'s queued / resolved signals;
* every run's typed events (a listener per run): ``step_finished`` with ``error`` is a failed
  step; it stays until the person dismisses it or resumes / re-runs that run. ``gate_waiting``
  is a gate of a graph run (kind ``gate``), until its ``gate_decided`` or the run's end;
  opening it shows the run, whose view asks the gate's question.

Each new item notifies (:class:`gui.widgets.notifications.Notifier`) when the window is not
focused, naming the run and why; clicking the notification shows the step.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from core.model.budget import BudgetQuestion
from core.model.events import Event, GateDecided, GateWaiting, RunFinished, StepFinished
from core.run.attention import (
    KIND_WORDS,
    Attention,
    AttentionList,
    budget_key,
    failed_key,
    gate_key,
)

if TYPE_CHECKING:
    from gui.run.run_controller import RunController, RunSession


class InboxModel(QObject):
    """What waits for the person. GUI thread only."""

    # -- signals (GUI thread) ------------------------------------------------------------

    changed = Signal(int)
    """Items were added or removed; the argument is how many wait now."""
    openRequested = Signal(str, int)
    """(run id, step): show that step (an item was opened)."""

    def __init__(self, controller: RunController) -> None:
        super().__init__(controller)
        self._controller = controller
        self.items = AttentionList()
        approvals = controller.approvals
        approvals.requestQueued.connect(self._approval_queued)
        approvals.requestResolved.connect(lambda _r, _s, request_id, _d: self._remove(request_id))
        controller.budgets.questionQueued.connect(self._budget_queued)
        controller.budgets.questionResolved.connect(
            lambda q: self._remove(budget_key(q.run_id, q.step))
        )
        controller.sessionStarted.connect(self._session_started)
        controller.sessionFinished.connect(self._session_finished)
        for session in controller.sessions():
            self._session_started(session)

    # -- public API ----------------------------------------------------------------------

    def count(self) -> int:
        return len(self.items)

    def open(self, key: str) -> None:
        """Show the item's step, and its question (the approval or budget dialog; a gate's
        question is in the run's view, above the panes)."""
        item = self.items.get(key)
        if item is None:
            return
        self.openRequested.emit(item.run_id, item.step)
        if item.kind == "approval":
            self._controller.approvals.show_dialog()
        elif item.kind == "budget":
            self._controller.budgets.show_dialog()

    def dismiss(self, key: str) -> None:
        """Take a failed step off the list (questions leave only when answered)."""
        item = self.items.get(key)
        if item is not None and item.kind == "failed":
            self._remove(key)

    # -- private -------------------------------------------------------------------------

    def _title(self, run_id: str) -> str:
        session = self._controller.session(run_id)
        return session.title() if session is not None else run_id

    def _add(self, item: Attention, *, warning: bool = False, tray: bool = True) -> None:
        self.items.add(item)
        self.changed.emit(self.count())
        self._controller.notifier.notify(
            KIND_WORDS[item.kind],
            f"{item.run_title}, step {item.step + 1}: {item.why}",
            warning=warning,
            target=(item.run_id, item.step),
            tray=tray,
        )

    def _remove(self, key: str) -> None:
        if self.items.remove(key) is not None:
            self.changed.emit(self.count())

    def _approval_queued(self, run_id: str, step: int, request_id: str) -> None:
        pending = self._controller.approvals.pending()
        request = next((r for r in pending if r.request_id == request_id), None)
        if request is None:
            return
        what = f"{request.tool} {request.action}" if request.action else request.tool
        why = f"{request.agent} wants to use {what}."
        item = Attention("approval", request_id, run_id, step, self._title(run_id), why)
        # Where approvals reach the desktop with Approve / Deny, a tray message would be a
        # second notification for the same question.
        self._add(item, tray=not self._controller.approvals.notices_work())

    def _budget_queued(self, question: BudgetQuestion) -> None:
        key = budget_key(question.run_id, question.step)
        why = f"the {question.scope} cap is reached ({question.reason})."
        title = self._title(question.run_id)
        self._add(Attention("budget", key, question.run_id, question.step, title, why))

    def _session_started(self, session: RunSession) -> None:
        lineage = session.request.lineage
        if lineage is not None and self.items.remove_run(lineage.run_id, ("failed",)):
            self.changed.emit(self.count())
        session.runner.listeners.append(partial(self._event, session))

    def _session_finished(self, session: RunSession) -> None:
        """A run that failed with no failed step (it could not write its file, it crashed)
        still waits for the person, at its first step."""
        result = session.runner.result
        failed = any(i.kind == "failed" and i.run_id == session.run_id for i in self.items)
        if result is None or result.status != "error" or failed:
            return
        why = (result.error or "the run failed").strip().splitlines()[0]
        key = failed_key(session.run_id, 0)
        self._add(Attention("failed", key, session.run_id, 0, session.title(), why), warning=True)

    def _event(self, session: RunSession, event: Event) -> None:
        if isinstance(event, GateWaiting | GateDecided | RunFinished):
            self._gate_event(session, event)
            return
        if not isinstance(event, StepFinished) or event.status != "error" or event.step is None:
            return
        why = (event.error or "the step failed").strip().splitlines()[0]
        key = failed_key(session.run_id, event.step)
        item = Attention("failed", key, session.run_id, event.step, session.title(), why)
        self._add(item, warning=True)

    def _gate_event(
        self, session: RunSession, event: GateWaiting | GateDecided | RunFinished
    ) -> None:
        if isinstance(event, GateDecided):
            self._remove(gate_key(session.run_id, event.gate_id))
        elif isinstance(event, RunFinished):
            if self.items.remove_run(session.run_id, ("gate",)):
                self.changed.emit(self.count())
        else:
            key = gate_key(session.run_id, event.gate_id)
            step = event.step if event.step is not None else 0
            why = f"before “{event.node}”: {event.question}"
            self._add(Attention("gate", key, session.run_id, step, session.title(), why))
