"""The GUI's approval responder: requests from every running step, answered one at a time.

:class:`ApprovalQueue` is what a run launched from the window passes to
:class:`core.run.runner.Runner` as ``responder``. The gate awaits it; it queues the request, shows
it in the :class:`gui.approvals.approval_dialog.ApprovalDialog` (oldest first, with "1 of N
waiting"),
and returns the person's answer. Nothing here blocks: each request is an asyncio future that
the dialog's signal resolves, so parallel steps, other runs and the rest of the window keep
going while a person thinks.

Each request is described (:func:`core.tools.approval_describe.describe`: files read, diffs
computed,
the document store looked up) in a worker thread before it joins the queue, so a huge diff
never stalls the window.

While Baton is not the active application, each request queued also goes out as a desktop
notification with Approve / Deny buttons (:mod:`gui.approvals.notice_answers` decides which, and
what a press means); answered anywhere, the notification is withdrawn.

If the awaiting task is cancelled (the run was cancelled), the request leaves the queue and
the dialog moves on to the next one or closes; the gate itself records the request as denied.

Threading: everything runs on the GUI thread, which is also the asyncio loop's thread (qasync).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QWidget

from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from core.tools.approval_describe import Description, describe
from gui.approvals.approval_dialog import ApprovalDialog
from gui.approvals.notice_answers import notice_actions, notice_answer, notice_body
from gui.approvals.sandbox_note import bash_sandbox
from gui.approvals.waiting import Waiting, WaitingList
from gui.widgets.desktop_notices import (
    DesktopNotices,
    send_actionable,
    shared_notices,
    withdraw,
)


@dataclass(frozen=True)
class _Asked:
    request: ApprovalRequest
    description: Description


class ApprovalQueue(QObject):
    """A responder (``await queue(request)``) backed by one approval dialog."""

    # -- signals (GUI thread) ------------------------------------------------------------

    requestQueued = Signal(str, int, str)
    """(run_id, step, request_id): a request waits for a person."""
    requestShown = Signal(str, int, str)
    """(run_id, step, request_id): the dialog now shows this request (highlight its pane)."""
    requestResolved = Signal(str, int, str, str)
    """(run_id, step, request_id, decision): answered, or ``cancelled`` with its run."""
    pendingCountChanged = Signal(int)
    """How many requests wait (0: the dialog is closed)."""

    def __init__(
        self,
        parent: QWidget | None = None,
        dialog_factory: Callable[[QWidget | None], ApprovalDialog] = ApprovalDialog,
        notices: DesktopNotices | None = None,
    ) -> None:
        """``notices``: where desktop notifications go (default: the process's own)."""
        super().__init__(parent)
        self._notices = notices
        self._parent_widget = parent
        self._dialog_factory = dialog_factory
        self._dialog: ApprovalDialog | None = None
        self._waiting: WaitingList[_Asked, ApprovalAnswer] = WaitingList(
            self._queued, self._cancelled
        )

    # -- public API ----------------------------------------------------------------------

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Queue ``request`` and wait for the person's answer (the responder protocol)."""
        description = await asyncio.to_thread(describe, request)
        return await self._waiting.ask(_Asked(request, description))

    @property
    def dialog(self) -> ApprovalDialog:
        """The dialog (created on first use, parented to the window given at construction)."""
        if self._dialog is None:
            self._dialog = self._dialog_factory(self._parent_widget)
            self._dialog.answered.connect(self._answered)
        return self._dialog

    def pending(self) -> list[ApprovalRequest]:
        """Waiting requests, oldest (the shown one) first."""
        return [entry.question.request for entry in self._waiting.entries()]

    def show_dialog(self) -> None:
        """Bring the dialog back to the front (e.g. from a "waiting for approval" pane)."""
        entries = self._waiting.entries()
        if entries:
            first = entries[0].question
            self.dialog.show_request(first.request, len(entries), first.description)

    def notices_work(self) -> bool:
        """Whether approvals reach the desktop as notifications with buttons (the last one
        could be shown): then the inbox leaves out its plainer tray message."""
        return (self._notices or shared_notices()).working is True

    def deny_all(self, reason: str = "Denied: the window was closed") -> None:
        """Answer every waiting request with a denial (the window is closing, or the run was
        cancelled): nobody decided, so the answer says so."""
        for entry in self._waiting.entries():
            answer = ApprovalAnswer(decision="deny", reason=reason, decided_by="cancel")
            self._resolve(entry, answer)

    # -- private -------------------------------------------------------------------------

    def _queued(self, asked: _Asked) -> None:
        request = asked.request
        away = QApplication.activeWindow() is None  # the person is in another application
        self.requestQueued.emit(request.run_id, request.step, request.request_id)
        self._refresh()
        if away:
            self._notify(asked)

    def _notify(self, asked: _Asked) -> None:
        request, shown = asked.request, asked.description
        sandboxed = bash_sandbox().active
        request_id = request.request_id

        def pressed(key: str) -> None:
            entry = self._waiting.find(lambda a: a.request.request_id == request_id)
            if entry is None:
                return  # answered in the dialog meanwhile, or its run ended
            answer = notice_answer(key, shown, sandboxed)
            if answer is None:  # Review…: the dialog, in front
                self._bring_forward()
                return
            self._resolve(entry, answer)

        title = f"Approval needed: {shown.tool} — {request.agent}"
        body = notice_body(shown, sandboxed)
        send_actionable(
            request_id, title, body, notice_actions(shown, sandboxed), pressed, self._notices
        )

    def _bring_forward(self) -> None:
        window = self._parent_widget.window() if self._parent_widget is not None else None
        if window is not None:
            window.showNormal()
            window.raise_()
            window.activateWindow()
        self.show_dialog()
        self.dialog.raise_()
        self.dialog.activateWindow()

    def _cancelled(self, asked: _Asked) -> None:
        request = asked.request
        withdraw(request.request_id, self._notices)
        self.requestResolved.emit(request.run_id, request.step, request.request_id, "cancelled")
        self._refresh()

    def _answered(self, request_id: str, answer: ApprovalAnswer) -> None:
        entry = self._waiting.find(lambda asked: asked.request.request_id == request_id)
        if entry is not None:
            self._resolve(entry, answer)

    def _resolve(self, entry: Waiting[_Asked, ApprovalAnswer], answer: ApprovalAnswer) -> None:
        self._waiting.answer(entry, answer)
        request = entry.question.request
        withdraw(request.request_id, self._notices)
        self.requestResolved.emit(request.run_id, request.step, request.request_id, answer.decision)
        self._refresh()

    def _refresh(self) -> None:
        """Show the oldest waiting request, update the counter, or close the dialog."""
        entries = self._waiting.entries()
        self.pendingCountChanged.emit(len(entries))
        if not entries:
            if self._dialog is not None:
                self._dialog.clear_request()
            return
        first = entries[0].question.request
        shown = self.dialog.request
        self.dialog.show_request(first, len(entries), entries[0].question.description)
        if shown is None or shown.request_id != first.request_id:
            self.requestShown.emit(first.run_id, first.step, first.request_id)
