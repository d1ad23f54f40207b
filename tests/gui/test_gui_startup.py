"""Start-up: the ``baton`` window paints before it imports what its first picture does not need.

The window's first paint (what the start-up benchmark times) must not wait for pydantic, yaml,
the agent model or the HTTP client; settings (status bar, welcome panel) and the agent files
are read right after it. Checked in a fresh process running the ``baton`` command, which
reports what is imported at its first paint and again once the agents are listed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from gui.window.first_paint import FirstPaint

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import os, sys
import gui.app
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication
from gui.window.main_window import MainWindow

def report(stage, window):
    print(stage, "modules", " ".join(sorted(sys.modules)))
    print(stage, "status", repr(window.model_label.text()))
    print(stage, "agents", len(window.agents_view.agent_list.visible_entries()))
    sys.stdout.flush()

def listed(window):
    report("listed", window)
    os._exit(0)

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and watched.isWidgetType():
            window = watched.window()
            if isinstance(window, MainWindow):
                QApplication.instance().removeEventFilter(self)
                report("painted", window)
                window.agents_view.catalogChanged.connect(lambda: listed(window))
        return False

probe = FirstPaint()
show = MainWindow.show

def probed_show(window):
    QApplication.instance().installEventFilter(probe)
    show(window)

MainWindow.show = probed_show
from gui.launcher import main
main([])
"""

DEFERRED = {
    "asyncio",
    "qasync",
    "pydantic",
    "yaml",
    "httpx",
    "core.definitions.agents",
    "core.config.settings",
    "core.model.events",
    "core.definitions.checks",
    "html",
    "gui.definitions.definition_editor",
}
"""Not needed to paint the window: the event loop starts after the first paint, settings and
agent files are read after it, the agents view opens on its empty state (its editor is built
when first needed)."""


def run_baton(folder: Path) -> dict[str, str]:
    """``stage field`` → value, from the child's report lines."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(ROOT),
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # configured: no welcome panel probing
    }
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [line.split(" ", 2) for line in result.stdout.splitlines()]
    return {f"{stage} {field}": value for stage, field, value in lines}


def test_the_window_paints_before_settings_and_agent_files_are_read(tmp_path: Path) -> None:
    report = run_baton(tmp_path)

    at_paint = set(report["painted modules"].split())
    assert DEFERRED & at_paint == set()
    assert report["painted status"] == "''"  # the model is named once settings are read
    assert report["painted agents"] == "0"

    # Then, with the window on screen, the work happens: nothing was merely dropped.
    listed = set(report["listed modules"].split())
    assert {"pydantic", "yaml", "core.definitions.agents", "core.config.settings"} <= listed
    assert "127.0.0.1:9" in report["listed status"]
    assert int(report["listed agents"]) > 0  # the built-in agents


def _let_queued_work_run(qtbot: QtBot) -> None:
    """Returns once Qt ran what was queued before now (a zero timer queued after it fired)."""
    marker: list[bool] = []
    QTimer.singleShot(0, lambda: marker.append(True))
    qtbot.waitUntil(lambda: bool(marker))


def test_held_start_up_work_waits_for_the_release_and_the_paint(qtbot: QtBot) -> None:
    """``baton`` holds the work past its first paint until the asyncio loop runs."""
    ran: list[str] = []
    first_paint = FirstPaint(lambda: ran.append("read settings"))
    first_paint.hold()

    first_paint.painted()
    _let_queued_work_run(qtbot)
    assert ran == []

    first_paint.release()
    first_paint.release()  # released twice, run once
    qtbot.waitUntil(lambda: ran == ["read settings"])
    assert first_paint.started
    _let_queued_work_run(qtbot)
    assert ran == ["read settings"]


def test_released_start_up_work_still_waits_for_the_first_paint(qtbot: QtBot) -> None:
    ran: list[str] = []
    first_paint = FirstPaint(lambda: ran.append("list agents"))
    first_paint.hold()
    first_paint.release()
    _let_queued_work_run(qtbot)
    assert ran == []

    first_paint.painted()
    first_paint.painted()  # a second paint runs nothing twice
    qtbot.waitUntil(lambda: bool(ran))
    _let_queued_work_run(qtbot)
    assert ran == ["list agents"]


def test_a_wait_for_the_first_paint_ends_in_that_paint_and_only_then() -> None:
    """``baton`` waits for its window's first paint to start the asyncio loop: the callback
    comes inside the first paint (not a turn later), and never again."""
    ended: list[str] = []
    first_paint = FirstPaint()
    first_paint.when_painted(lambda: ended.append("wait over"))
    assert not first_paint.is_painted() and ended == []

    first_paint.painted()
    assert first_paint.is_painted() and ended == ["wait over"]
    first_paint.painted()
    assert ended == ["wait over"]
