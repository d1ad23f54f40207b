"""The PySide6 6.12 / CPython 3.11 reference-count work-around (``gui/pyside_refcounts.py``).

Run in a child process: without the fix the interpreter aborts, which must fail this test
rather than take pytest down with it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import os
os.environ["QT_QPA_PLATFORM"] = "offscreen"
import gui  # applies the work-around
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
