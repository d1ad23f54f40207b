"""The spinners' shared clock ticks only while a running spinner is shown: hidden with its
window it stops, shown again it resumes, and a finished step stops it."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from gui.widgets.run_status import StatusIcon, spinner_clock


def test_the_clock_follows_the_shown_running_spinners(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    icon = StatusIcon("running")
    QVBoxLayout(window).addWidget(icon)
    assert not spinner_clock().is_ticking()  # running, but not on screen yet
    window.show()
    assert spinner_clock().is_ticking()
    window.hide()  # the window goes: its spinner with it
    assert not spinner_clock().is_ticking()
    window.show()
    assert spinner_clock().is_ticking()
    icon.set_phase("ok")
    assert not spinner_clock().is_ticking()
    icon.set_phase("running")
    assert spinner_clock().is_ticking()
    window.close()
    assert not spinner_clock().is_ticking()
