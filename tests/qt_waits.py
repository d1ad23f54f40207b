"""pytest-qt's waits with limits that hold on a busy machine.

pytest-qt gives up on a condition after 5 s unless told otherwise. On a loaded machine (a CI
box running other jobs, a laptop compiling) a window can take longer than that to repaint or
to finish a background read, and a correct test fails. A wait on a condition returns as soon
as the condition holds, so its limit only matters when something is broken: :class:`PatientQtBot`
makes every such limit at least :data:`QT_WAIT_MS`, whatever the test asked for.

A wait with ``raising=False`` is not a limit but a deliberate pause (``assertNotEmitted`` waits
that long to see that a signal does *not* come): it keeps the length it was given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytestqt.qtbot import QtBot

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QWidget
    from pytestqt.wait_signal import CallbackBlocker, MultiSignalBlocker, SignalBlocker

QT_WAIT_MS = 120_000
"""The least any wait on a condition gives it before failing the test (ms)."""


def patient(timeout: int, raising: bool | None = None) -> int:
    """``timeout`` raised to :data:`QT_WAIT_MS`, unless it is a pause (``raising=False``) or
    already longer (or ``0``/negative, which pytest-qt reads as "no limit")."""
    if raising is False or timeout <= 0:
        return timeout
    return max(timeout, QT_WAIT_MS)


class PatientQtBot(QtBot):
    """A :class:`QtBot` whose waits on conditions never give up early (module docstring)."""

    def waitUntil(self, callback: Callable[[], bool | None], *, timeout: int = 5000) -> None:
        super().waitUntil(callback, timeout=patient(timeout))

    def waitSignal(
        self, signal: SignalInstance, *, timeout: int = 5000, **options: Any
    ) -> SignalBlocker:
        return super().waitSignal(
            signal, timeout=patient(timeout, options.get("raising")), **options
        )

    def waitSignals(
        self, signals: list[SignalInstance], *, timeout: int = 5000, **options: Any
    ) -> MultiSignalBlocker:
        return super().waitSignals(
            signals, timeout=patient(timeout, options.get("raising")), **options
        )

    def waitCallback(self, *, timeout: int = 5000, raising: bool | None = None) -> CallbackBlocker:
        return super().waitCallback(timeout=patient(timeout, raising), raising=raising)

    def waitExposed(self, widget: QWidget, *, timeout: int = 5000) -> Any:
        return super().waitExposed(widget, timeout=patient(timeout))

    def waitActive(self, widget: QWidget, *, timeout: int = 5000) -> Any:
        return super().waitActive(widget, timeout=patient(timeout))
