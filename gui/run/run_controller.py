"""Runs started from the window: prepared, started, watched, answered, cancelled, finished.

:class:`RunController` is the window's one owner of live runs. For each launch it

1. loads the settings and prepares a :class:`core.run.runner.Runner` — the same checks as
   ``baton run``; an untrusted project asks with the trust dialog (:func:`prepare_runner`);
   every failure is a :class:`core.model.errors.RunError` the launch dialog shows inline;
2. creates a :class:`gui.run.run_view.RunView` that shows the runner's own folded state
   (:meth:`gui.run.run_model.RunModel.follow`: the run is folded once, by its recording) and
   subscribes it to the runner's events, which then only say what changed;
3. starts ``runner.run()`` as a task on the qasync loop (the GUI thread), so the runner, the
   view and the approval dialog share one thread and need no locks;
4. answers budget questions through :class:`gui.approvals.budget_queue.BudgetQueue` (a run at its
   cap pauses until the person raises the cap or stops it), and approvals through the
   window's :class:`gui.approvals.approval_queue.ApprovalQueue` ("ask me"),
   or approves / denies everything, as the launch dialog chose;
5. cancels on the view's Cancel (``runner.cancel()``: the run ends ``aborted``, the run file
   keeps everything received);
6. answers gates with the person's decision from the run view (``runner.decide_gate``; the
   inbox lists and announces a waiting gate, with its question);
7. tells the person when a run finishes while they look elsewhere
   (:mod:`gui.widgets.notifications`); what waits for them — approvals, budget questions,
   failed steps — is the inbox's to announce (:mod:`gui.inbox.inbox_model`).

Closing the window while runs are active asks first; "Cancel runs and quit" cancels them and
closes the window once every run has written its end (:meth:`confirm_close`).
"""

from __future__ import annotations

import asyncio
import traceback
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMainWindow, QMessageBox, QWidget

from core.backends.steering import SteerError
from core.config.settings import SettingsError, load_settings
from core.model.errors import RunError
from core.model.events import GateDecision, RunFinished
from core.record.run_names import run_name
from core.run.gates import GateError
from core.run.run_request import RunRequest
from core.run.runner import Runner
from core.safety.approvals import Responder, approve_all, deny_by_setting
from gui.approvals.approval_queue import ApprovalQueue
from gui.approvals.budget_queue import BudgetQueue
from gui.approvals.trust_dialog import prepare_runner
from gui.run.run_header import run_title
from gui.run.run_view import RunView
from gui.widgets.notifications import Notifier

if TYPE_CHECKING:
    from gui.launch.launch_dialog import ApprovalMode

_ENDINGS = {
    "ok": "Run finished",
    "aborted": "Run cancelled",
}
"""Endings announced here; a failed step waits in the inbox, which announces it."""


@dataclass(eq=False)
class RunSession:
    """One live run and its view."""

    runner: Runner
    view: RunView
    task: asyncio.Future[RunFinished] | None = None

    @property
    def run_id(self) -> str:
        return self.runner.run_id

    @property
    def request(self) -> RunRequest:
        return self.runner.request

    def is_active(self) -> bool:
        return self.task is not None and not self.task.done()

    def title(self) -> str:
        """The run's name; from the request until the view has folded the run's start (a
        question may come before the view's next update)."""
        state = self.view.state()
        if state.run_id:
            return run_title(state)
        request = self.request
        agents = [step.agent for step in request.steps]
        return run_name(request.mode, request.preset, request.args, agents) or self.run_id


class RunController(QObject):
    """Owns the window's live runs. GUI thread (= the asyncio loop's thread) only."""

    # -- signals (GUI thread) ------------------------------------------------------------

    sessionStarted = Signal(object)
    """A :class:`RunSession` was created and its run started (show its view)."""
    sessionFinished = Signal(object)
    """A session's run ended (ok, error or aborted); the run file and index are final."""

    def __init__(
        self,
        window: QWidget,
        approvals: ApprovalQueue | None = None,
        notifier: Notifier | None = None,
    ) -> None:
        super().__init__(window)
        self._window = window
        self.approvals = approvals if approvals is not None else ApprovalQueue(window)
        self.notifier = notifier if notifier is not None else Notifier(window)
        self.budgets = BudgetQueue(window, titles=self._title_of)
        self._sessions: list[RunSession] = []
        self._close_when_done = False

    # -- public API ----------------------------------------------------------------------

    async def launch(
        self, request: RunRequest, approvals: ApprovalMode, parent: QWidget | None
    ) -> RunSession | None:
        """Prepare and start a run; None when the person cancelled at the trust question.
        Raises :class:`RunError` (settings unreadable, unknown agent, missing folder…)."""
        try:
            settings = load_settings()
        except SettingsError as error:
            raise RunError(str(error)) from None
        responder = self._responder(approvals)

        def make(req: RunRequest) -> Runner:
            return Runner(req, settings=settings, responder=responder, budget_asker=self.budgets)

        runner = await prepare_runner(parent or self._window, request, make)
        if runner is None:
            return None
        return self.start(runner)

    def start(self, runner: Runner) -> RunSession:
        """Start a prepared (or preparable) runner and show it."""
        view = RunView()
        session = RunSession(runner, view)
        view.model.follow(runner.state)
        runner.listeners.append(view.add_event)
        view.cancelRequested.connect(runner.cancel)
        view.steerRequested.connect(partial(self._steer, session))
        view.gateDecisionRequested.connect(partial(self._decide_gate, session))
        self._sessions.append(session)
        session.task = asyncio.ensure_future(runner.run())
        session.task.add_done_callback(partial(self._finished, session))
        self.sessionStarted.emit(session)
        return session

    def sessions(self) -> list[RunSession]:
        return list(self._sessions)

    def active(self) -> list[RunSession]:
        return [s for s in self._sessions if s.is_active()]

    def session(self, run_id: str) -> RunSession | None:
        return next((s for s in self._sessions if s.run_id == run_id), None)

    def forget(self, session: RunSession) -> None:
        """Drop a finished session (its tab was closed)."""
        if not session.is_active() and session in self._sessions:
            self._sessions.remove(session)

    def cancel_all(self) -> None:
        for session in self.active():
            session.runner.cancel()
        self.approvals.deny_all("Denied: the run was cancelled")
        self.budgets.stop_all()

    def confirm_close(self) -> bool:
        """True when the window may close now. With active runs, asks; on "Cancel runs and
        quit" cancels them and closes the window itself once they have ended."""
        active = self.active()
        if not active:
            return True
        box = QMessageBox(self._window)
        box.setObjectName("CancelRunsPrompt")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Runs still running")
        box.setText(_still_running(active))
        box.setInformativeText(
            "Cancel and quit? What the agents did so far stays in the run history."
        )
        stop = box.addButton("Cancel runs and quit", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton("Keep running", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        ended: list[bool] = []

        def follow(_session: object) -> None:
            """Runs end while the question is open: say so, or stop asking when none is left."""
            still = self.active()
            if not still:
                ended.append(True)
                box.done(0)
                return
            box.setText(_still_running(still))

        self.sessionFinished.connect(follow)
        try:
            box.exec()
        finally:
            self.sessionFinished.disconnect(follow)
        if ended:
            return True  # nothing runs any more: the window may close
        if box.clickedButton() is not stop:
            return False
        self._close_when_done = True
        self.cancel_all()
        if isinstance(self._window, QMainWindow):
            self._window.statusBar().showMessage("Cancelling runs…")
        return False

    def shutdown(self) -> None:
        """The window is closing (no active runs left)."""
        self.notifier.shutdown()

    # -- private -------------------------------------------------------------------------

    def _responder(self, approvals: ApprovalMode) -> Responder:
        if approvals == "all":
            return approve_all
        if approvals == "deny":
            return deny_by_setting("approvals: deny")
        return self.approvals

    def _steer(self, session: RunSession, step: int, text: str) -> None:
        try:
            session.runner.steer(step, text)
        except SteerError as error:
            session.view.show_message_problem(step, f"Not sent: {error}.")

    def _decide_gate(
        self,
        session: RunSession,
        gate_id: str,
        decision: GateDecision,
        text: str | None,
        note: str | None,
    ) -> None:
        try:
            session.runner.decide_gate(gate_id, decision, text=text, note=note)
        except GateError as error:
            session.view.show_gate_problem(f"Not taken: {error}.")

    def _finished(self, session: RunSession, task: asyncio.Future[RunFinished]) -> None:
        runner = session.runner
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            assert error is not None
            traceback.print_exception(type(error), error, error.__traceback__)
            if runner.result is None:  # the run never wrote its end: say so in the view
                ending = RunFinished(
                    run_id=runner.run_id,
                    status="error",
                    error=f"the run stopped unexpectedly: {error}",
                )
                runner.state.apply(ending)  # the state the view shows; its run is over
                session.view.add_event(ending)
        result = runner.result
        status = result.status if result is not None else "error"
        title = _ENDINGS.get(status)
        if title is not None:
            detail = session.title()
            if result is not None and result.error:
                detail = f"{detail}\n{result.error}"
            self.notifier.notify(title, detail)
        self.sessionFinished.emit(session)
        if self._close_when_done and not self.active():
            self._close_when_done = False
            self._window.close()

    def _title_of(self, run_id: str) -> str:
        session = self.session(run_id)
        return session.title() if session is not None else run_id


def _still_running(active: list[RunSession]) -> str:
    count = len(active)
    names = ", ".join(s.title() for s in active[:3]) + ("…" if count > 3 else "")
    return f"{count} run{'s are' if count != 1 else ' is'} still running: {names}"
