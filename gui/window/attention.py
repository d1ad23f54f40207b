"""What asks for the person's attention, wherever they may look: the title bar, the sidebar's
Inbox count, the taskbar and the tray.

The run controller and its inbox are made here on first use (they bring in the backends), and
their signals are wired to the window once, so the window itself only asks for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMainWindow

if TYPE_CHECKING:
    from gui.inbox.inbox_model import InboxModel
    from gui.run.run_controller import RunController, RunSession


def activity_text(running: int, waiting: int) -> str:
    """``1 running, 2 waiting for you`` (empty when neither): the title's and the tray's."""
    parts = [f"{running} running"] if running else []
    if waiting:
        parts.append(f"{waiting} waiting for you")
    return ", ".join(parts)


def window_title(waiting: int, dirty: bool, running: int = 0) -> str:
    """``Baton (1 running, 2 waiting for you) — unsaved changes`` and the shorter forms."""
    activity = activity_text(running, waiting)
    title = "Baton" + (f" ({activity})" if activity else "")
    return title + (" — unsaved changes" if dirty else "")


class Attention:
    """The window's runs and what of them waits for the person."""

    def __init__(
        self,
        window: QMainWindow,
        open_step: Callable[[str, int], None],
        session_started: Callable[[RunSession], None],
        waiting_changed: Callable[[int], None],
    ) -> None:
        """``open_step(run_id, step)`` shows a step (an inbox item or a notification was
        opened); ``session_started`` gets each launched run; ``waiting_changed`` gets the
        inbox's count (the taskbar and tray are told here, after it)."""
        self._window = window
        self._open_step = open_step
        self._session_started = session_started
        self._waiting_changed = waiting_changed
        self._controller: RunController | None = None
        self._inbox: InboxModel | None = None

    def made(self) -> RunController | None:
        """The controller if a run was launched or asked for, else None (nothing to close)."""
        return self._controller

    def controller(self) -> RunController:
        if self._controller is None:
            from gui.inbox.inbox_model import InboxModel
            from gui.run.run_controller import RunController

            controller = RunController(self._window)
            self._controller = controller
            controller.sessionStarted.connect(self._session_started)
            # A run that starts or ends changes what the title, sidebar and tray say.
            controller.sessionStarted.connect(lambda _session: self._changed(self.waiting()))
            controller.sessionFinished.connect(lambda _session: self._changed(self.waiting()))
            controller.notifier.opened.connect(self._open_step)
            self._inbox = InboxModel(controller)
            self._inbox.changed.connect(self._changed)
            self._inbox.openRequested.connect(self._open_step)
        return self._controller

    def inbox(self) -> InboxModel:
        self.controller()
        assert self._inbox is not None
        return self._inbox

    def waiting(self) -> int:
        """How many items wait for the person (0 before any run)."""
        return self._inbox.count() if self._inbox is not None else 0

    def running(self) -> int:
        """Runs of this window at work now: started, not ended, and not waiting for the
        person (those are counted as waiting)."""
        if self._controller is None:
            return 0
        waiting_runs = {item.run_id for item in self.inbox().items}
        return sum(s.run_id not in waiting_runs for s in self._controller.active())

    def _changed(self, count: int) -> None:
        self._waiting_changed(count)
        self.controller().notifier.set_activity(self.running(), count)
