"""Reading the login shell's environment without holding up the window.

:func:`core.config.login_environment.read_login_environment` runs the user's shell, which may take
seconds (nvm, conda) or hang: it runs on a plain thread started before the window is built,
and its result comes back to the GUI thread through a queued signal, where the environment is
changed (``os.environ`` is only ever written from the GUI thread) and whoever waits for it —
the welcome panel's detection — is told. Its failure is logged and otherwise ignored: the app
carries on with the environment it was started with.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from core.config.login_environment import (
    DEFAULT_TIMEOUT_S,
    LoginEnvironment,
    LoginShellError,
    apply,
    merge,
    read_login_environment,
)

log = logging.getLogger("baton.login_shell")


def timeout_s() -> float:
    """The time the login shell gets (``BATON_LOGIN_SHELL_TIMEOUT`` seconds, if set)."""
    try:
        return float(os.environ.get("BATON_LOGIN_SHELL_TIMEOUT", "")) or DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S


class LoginShellReader(QObject):
    """Reads ``shell``'s login environment once, on its own thread."""

    _done = Signal(object, str)  # LoginEnvironment | None, error text

    def __init__(self, shell: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.result: LoginEnvironment | None = None
        self.error = ""
        self.finished = False
        self._callbacks: list[Callable[[], None]] = []
        self._done.connect(self._deliver)  # queued: emitted from the reading thread
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._read, name="login-shell", daemon=True)
        self._thread.start()

    def when_finished(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` on the GUI thread once the environment is applied (or failed);
        at once when that already happened."""
        if self.finished:
            callback()
        else:
            self._callbacks.append(callback)

    def _read(self) -> None:
        try:
            login = read_login_environment(self.shell, timeout_s())
        except LoginShellError as error:
            self._done.emit(None, str(error))
            return
        except Exception as error:  # never let a surprise kill the thread silently
            self._done.emit(None, f"{type(error).__name__}: {error}")
            return
        self._done.emit(merge(os.environ, login), "")

    def _deliver(self, change: LoginEnvironment | None, error: str) -> None:
        from gui.app_log import start_logging

        start_logging()
        if change is not None:
            apply(change)
            log.info(
                "login shell %s: PATH gained %s; %d variables added",
                self.shell,
                ", ".join(change.path_folders) or "nothing",
                len(change.added),
            )
        else:
            log.warning("login shell %s: not used: %s", self.shell, error)
        self.result, self.error, self.finished = change, error, True
        for callback in self._callbacks:
            callback()
        self._callbacks.clear()
