"""A double-clicked app has no terminal: a start-up error goes to the log file in the data
folder and to a dialog naming it, and Help ▸ Open Log Folder opens that folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QMenu

from gui.app_log import LOG_NAME
from gui.window.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import sys
from PySide6.QtWidgets import QMessageBox
from gui.window.main_window import MainWindow

def broken(self, *args, **kwargs):
    raise RuntimeError("the window cannot be built: disk on fire")

def shown(box):
    print("dialog", box.text(), "|", box.informativeText(), flush=True)
    return 0

MainWindow.__init__ = broken
QMessageBox.exec = shown
from gui.launcher import main
sys.exit(main([]))
"""


def test_a_start_up_error_is_logged_and_shown(isolated_home: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(ROOT),
        "BATON_LOGIN_SHELL": "0",
    }
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stderr[-3000:]
    log = isolated_home / "data" / "logs" / LOG_NAME
    assert result.stdout.strip() == (
        "dialog Baton could not start: the window cannot be built: disk on fire | "
        f"The details are in {log}."
    )
    text = log.read_text(encoding="utf-8")
    assert "Baton could not start" in text
    assert "Traceback" in text and "disk on fire" in text


def test_help_opens_the_log_folder(
    make_window: Callable[..., MainWindow], isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[QUrl] = []
    monkeypatch.setattr("PySide6.QtGui.QDesktopServices.openUrl", opened.append)
    window = make_window()
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    assert isinstance(help_menu, QMenu)
    assert window.open_log_folder_action in help_menu.actions()
    window.open_log_folder_action.trigger()
    assert [url.toLocalFile() for url in opened] == [str(isolated_home / "data" / "logs")]
    assert (isolated_home / "data" / "logs").is_dir()


def test_no_display_is_written_to_the_log_too(isolated_home: Path, tmp_path: Path) -> None:
    """A menu start without a usable display can show no dialog: the log says why."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(isolated_home),
        "BATON_DATA_DIR": str(isolated_home / "data"),
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        [sys.executable, "-m", "gui.launcher"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    if not sys.platform.startswith("linux"):
        pytest.skip("the display check only matters on Linux")
    assert result.returncode == 2
    log = (isolated_home / "data" / "logs" / LOG_NAME).read_text(encoding="utf-8")
    assert "baton: no display available" in log
