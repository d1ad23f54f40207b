"""Desktop notifications with buttons ("Approve" / "Deny"), for what a person can answer from
where they are without switching to Baton (architecture: "The window").

Sent through ``desktop-notifier`` (the freedesktop ``org.freedesktop.Notifications`` service over
D-Bus on Linux, the Notification Center on macOS, WinRT on Windows), imported on first use so
the window's start-up never pays for it. A button press calls back on the asyncio loop, which
is the GUI thread (qasync).

Notifications are a convenience, never a channel Baton depends on: with no session bus, no
notification server, or a server without actions, :func:`send_actionable` logs and returns,
and the window's own alert (taskbar, tray, the inbox) still says what waits. A press that
arrives for something already answered elsewhere is the callback's to ignore.

Reuse: anything waiting for a person (an approval, a pipeline gate) calls
:func:`send_actionable` with a title, a body, its actions and a callback taking the action's
key, and :func:`withdraw` when it was answered another way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

log = logging.getLogger(__name__)

APP_NAME = "Baton"
SEND_TIMEOUT_S = 10.0
"""A bus that accepts the connection and then never answers must not hold a task for ever."""


class _OneLineFailures(logging.Filter):
    """desktop-notifier logs a failed send as a warning with its traceback; on a machine
    without a session bus that is ordinary, so the record keeps the error's one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            record.msg = f"{record.getMessage()}: {record.exc_info[1]}"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


def _quieten_library_logs() -> None:
    """Put :class:`_OneLineFailures` on each of the library's loggers (a logger's filters do
    not reach its children, and the backends log under their module names)."""
    names = [n for n in logging.root.manager.loggerDict if n.startswith("desktop_notifier")]
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _OneLineFailures) for f in logger.filters):
            logger.addFilter(_OneLineFailures())


@dataclass(frozen=True)
class NoticeAction:
    key: str
    """What the callback receives (``approve``, ``deny``, ``open``…)."""
    label: str
    """The button's text."""


class DesktopNotices:
    """One ``desktop_notifier.DesktopNotifier`` for the process, made on first use.

    ``backend``: a desktop-notifier backend to use instead of the platform's (tests pass the
    library's ``DummyNotificationCenter``)."""

    def __init__(self, backend: Any | None = None) -> None:
        self._backend = backend
        self._notifier: Any | None = None
        self._ids: dict[str, str] = {}
        """Our key → the library's identifier, for :meth:`withdraw`."""
        self._tasks: set[asyncio.Task[Any]] = set()
        """Sends and withdrawals under way (held: the loop keeps only weak references)."""
        self.sent: list[tuple[str, str, tuple[NoticeAction, ...]]] = []
        """(title, body, actions) of each notification handed to the platform."""
        self.working: bool | None = None
        """Whether the last notification could be shown (None: none tried yet), so callers
        can leave out a second, plainer message saying the same."""

    def notifier(self) -> Any:
        if self._notifier is None:
            from desktop_notifier import DesktopNotifier

            _quieten_library_logs()
            notifier = DesktopNotifier(app_name=APP_NAME)
            if self._backend is not None:
                notifier._backend = self._backend
            self._notifier = notifier
        return self._notifier

    async def send(
        self,
        key: str,
        title: str,
        body: str,
        actions: Sequence[NoticeAction],
        on_action: Callable[[str], None],
    ) -> bool:
        """Show a notification whose buttons call ``on_action(action.key)``; False when it
        could not be shown (no library, no bus, no server)."""
        try:
            from desktop_notifier import Button, Notification, Urgency
        except ImportError:
            log.info("desktop-notifier is not installed; no actionable notification")
            return False
        buttons = tuple(
            Button(
                title=action.label,
                identifier=action.key,
                on_pressed=partial(on_action, action.key),
            )
            for action in actions
        )
        notification = Notification(
            title, body, urgency=Urgency.Critical, buttons=buttons, timeout=-1
        )
        notifier = self.notifier()
        try:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await notifier.send_notification(notification)
        except Exception as error:  # no bus, no server: the window's own alert remains
            # One line, not a traceback: a machine without a session bus is ordinary.
            log.info("the desktop notification could not be sent: %s", error)
            self.working = False
            return False
        if notification.identifier not in await _current(notifier):
            self.working = False
            return False  # the library logged why (it never raises for a failed send)
        self.working = True
        self._ids[key] = notification.identifier
        self.sent.append((title, body, tuple(actions)))
        return True

    def keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def has(self, key: str) -> bool:
        """Whether a notification sent under ``key`` may still be showing."""
        return key in self._ids

    async def withdraw(self, key: str) -> None:
        """Take back the notification sent under ``key`` (answered elsewhere)."""
        identifier = self._ids.pop(key, None)
        if identifier is None or self._notifier is None:
            return
        try:
            async with asyncio.timeout(SEND_TIMEOUT_S):
                await self._notifier.clear(identifier)
        except Exception:
            log.info("the desktop notification could not be withdrawn", exc_info=True)


async def _current(notifier: Any) -> list[str]:
    try:
        return list(await notifier.get_current_notifications())
    except Exception:
        return []


_shared: DesktopNotices | None = None


def shared_notices() -> DesktopNotices:
    """The process's notices (one connection to the notification service)."""
    global _shared
    if _shared is None:
        _shared = DesktopNotices()
    return _shared


def send_actionable(
    key: str,
    title: str,
    body: str,
    actions: Sequence[NoticeAction],
    on_action: Callable[[str], None],
    notices: DesktopNotices | None = None,
) -> asyncio.Future[bool] | None:
    """Send from GUI code without awaiting: the task is returned (None when no asyncio loop
    runs, as in a window built without one). ``key`` names what waits, for :func:`withdraw`."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    target = notices or shared_notices()
    task = loop.create_task(target.send(key, title, body, actions, on_action))
    target.keep(task)
    return task


def withdraw(key: str, notices: DesktopNotices | None = None) -> None:
    """Take back what :func:`send_actionable` sent under ``key``, if anything was."""
    target = notices or _shared
    if target is None or not target.has(key):
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    target.keep(loop.create_task(target.withdraw(key)))
