"""PySide6 6.12.0 drops references to None/True on void calls and emits, and CPython 3.11
aborts after a few thousand of them; pyproject pins PySide6 below 6.12. This guards the pin: an
upgrade that brings the bug back fails here instead of crashing users' windows.

Run in a child process: the abort must fail this test rather than take pytest down with it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import os
os.environ["QT_QPA_PLATFORM"] = "offscreen"
import gui
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QWidget

class Source(QObject):
    fired = Signal()

app = QApplication([])
widget, source = QWidget(), Source()
for _ in range(20_000):
    widget.setEnabled(True)  # void: returns None
    source.fired.emit()  # returns True
print("survived")
"""


def test_many_void_calls_and_emits_do_not_abort_the_interpreter() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "survived"
