"""The window shell: qasync wiring, run_app, sidebar, menus, status bar, remembered geometry."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from core.model.events import Lineage, PlannedStep, RunStarted
from gui.qt_asyncio import asyncSlot
from gui.window.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


class _AsyncWidget(QWidget):
    """A widget whose button starts a coroutine, as the run view will."""

    def __init__(self) -> None:
        super().__init__()
        self.button = QPushButton("Go")
        self.label = QLabel("idle")
        layout = QVBoxLayout(self)
        layout.addWidget(self.button)
        layout.addWidget(self.label)
        self.button.clicked.connect(self.start)

    @asyncSlot()
    async def start(self) -> None:
        self.label.setText("working")
        loop = asyncio.get_running_loop()
        total = await loop.run_in_executor(None, sum, range(1000))  # a hop to a worker thread
        timed = loop.create_future()  # a timer on the qasync loop: part of what is tested
        loop.call_later(0, timed.set_result, None)
        await timed
        self.label.setText(f"done {total}")


def test_async_task_from_a_widget_updates_a_label(
    qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop
) -> None:
    widget = _AsyncWidget()
    qtbot.addWidget(widget)
    widget.show()
    assert asyncio.get_running_loop() is qasync_loop

    qtbot.mouseClick(widget.button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: widget.label.text() == "done 499500")


def test_run_app_shows_the_window_runs_asyncio_and_saves_geometry(tmp_path: Path) -> None:
    """The real entry point in a child process (it owns QApplication.exec()); once started,
    its objects are out of the garbage collector's sight."""
    script = tmp_path / "drive.py"
    script.write_text(
        "import asyncio, gc, sys\n"
        "from PySide6.QtCore import QEvent, QObject, QSettings\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication(['baton'])\n"
        "seen = []\n"
        "def shown():\n"
        "    return [w.windowTitle() for w in app.topLevelWidgets() if w.isVisible()]\n"
        "class Shows(QObject):\n"  # wakes the loop when a window is shown
        "    waiting = None\n"
        "    def eventFilter(self, watched, event):\n"
        "        if event.type() == QEvent.Type.Show and self.waiting and shown():\n"
        "            self.waiting.done() or self.waiting.set_result(None)\n"
        "        return False\n"
        "shows = Shows()\n"
        "app.installEventFilter(shows)\n"
        "async def inside_loop():\n"  # runs on the asyncio loop once start-up is done
        "    if not shown():\n"
        "        shows.waiting = asyncio.get_running_loop().create_future()\n"
        "        await asyncio.wait_for(shows.waiting, 30)\n"
        "    seen.append(shown())\n"
        "    app.closeAllWindows()\n"
        "import gui.app\n"
        "freeze = gui.app.freeze_start_up\n"
        "def last_step():\n"  # the start-up steps' last one, run from the asyncio loop
        "    freeze()\n"
        "    asyncio.ensure_future(inside_loop())\n"
        "gui.app.freeze_start_up = last_step\n"
        "code = gui.app.run_app([])\n"
        "print('code', code)\n"
        "print('windows', seen)\n"
        "print('geometry', QSettings().contains('main/geometry'))\n"
        "print('start-up frozen', gc.get_freeze_count() > 10_000)\n",
        encoding="utf-8",
    )
    result = _run_python([str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "code 0" in result.stdout
    assert "windows [['Baton']]" in result.stdout
    assert "geometry True" in result.stdout
    assert "start-up frozen True" in result.stdout  # no full collection walks it again
    assert "Traceback" not in result.stderr


def test_the_application_uses_fusion_whatever_style_the_system_prefers(tmp_path: Path) -> None:
    """Baton's style sheet is written for Fusion; a desktop that asks for another style (here
    through QT_STYLE_OVERRIDE) must not get a half-styled window."""
    script = (
        "from gui.app import create_application\n"
        "app = create_application([])\n"
        "app.setStyleSheet('')\n"  # the style sheet wraps the style: look at the style itself
        "print('style', app.style().name())\n"
    )
    result = _run_python(["-c", script], tmp_path, QT_STYLE_OVERRIDE="Windows")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "style fusion"


def test_a_busy_worker_thread_hands_the_gil_back_to_the_window_within_a_tenth_of_a_millisecond(
    tmp_path: Path,
) -> None:
    """Each Python slot and paint of a turn takes the GIL again; at Python's default 5 ms a
    thread reading a saved run made every one of them wait that long."""
    script = (
        "import sys\n"
        "from gui.app import create_application\n"
        "app = create_application([])\n"
        "print('switch', round(sys.getswitchinterval() * 1e6), 'us')\n"
    )
    result = _run_python(["-c", script], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "switch 100 us"


def _run_python(
    arguments: list[str], folder: Path, **environment: str
) -> subprocess.CompletedProcess[str]:
    """A fresh Python process on the offscreen platform: it owns its QApplication."""
    return subprocess.run(
        [sys.executable, *arguments],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT), **environment},
        timeout=60,
        check=False,
    )


def test_sidebar_lists_the_views_and_the_keyboard_moves_between_them(
    qtbot: QtBot, make_window: Callable[..., MainWindow]
) -> None:
    window = make_window()
    assert window.sidebar.labels() == [
        "Agents",
        "Presets",
        "Runs",
        "Documents",
        "Batches",
        "Inbox",
    ]
    assert window.current_view() == "agents"

    window.sidebar.list.setFocus()
    qtbot.keyClick(window.sidebar.list, Qt.Key.Key_Down)
    assert window.current_view() == "presets"
    assert window.stack.currentWidget() is window.presets_view

    qtbot.keyClick(window.sidebar.list, Qt.Key.Key_End)
    assert window.current_view() == "inbox"
    assert window.stack.currentWidget() is window.view("inbox")
    qtbot.keyClick(window.sidebar.list, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.current_view() == "agents"


def test_status_bar_shows_the_configured_provider_and_model(
    make_window: Callable[..., MainWindow], isolated_home: Path
) -> None:
    window = make_window()
    assert window.model_label.text() == "No model configured"

    (isolated_home / "config" / "config.yaml").write_text(
        "providers:\n  - name: ollama\n    base_url: http://127.0.0.1:11434/v1\n"
        "default_model: qwen2.5-coder:7b\n",
        encoding="utf-8",
    )
    window.refresh_status()
    assert window.model_label.text() == "ollama · http://127.0.0.1:11434/v1 · qwen2.5-coder:7b"

    (isolated_home / "config" / "config.yaml").write_text("providers: [oops\n", encoding="utf-8")
    window.refresh_status()
    assert window.model_label.text() == "Settings problem: config.yaml could not be read"
    assert "not valid YAML" in window.model_label.toolTip()


def test_geometry_splitter_and_view_are_restored(
    qtbot: QtBot, make_window: Callable[..., MainWindow], gui_settings: QSettings
) -> None:
    first = make_window()
    first.resize(780, 540)
    qtbot.waitUntil(lambda: first.size().width() == 780)
    first.agents_view.splitter.setSizes([265, 330])
    left_width = first.agents_view.splitter.sizes()[0]
    first.show_view("runs")
    first.close()
    assert gui_settings.contains("main/geometry")

    second = make_window(settings=QSettings(gui_settings.fileName(), QSettings.Format.IniFormat))
    assert second.size().width() == 780
    assert second.size().height() == 540
    # The list pane keeps its width; the editor takes what is left once laid out.
    qtbot.waitUntil(lambda: second.agents_view.splitter.sizes()[0] == left_width)
    assert second.current_view() == "runs"


def test_menus_about_and_quit(
    qtbot: QtBot, make_window: Callable[..., MainWindow], dialogs: Any
) -> None:
    window = make_window()
    menus = [action.text() for action in window.menuBar().actions()]
    assert menus == ["&File", "&Edit", "&View", "&Run", "&Help"]
    assert window.new_action.shortcut().toString() == "Ctrl+N"
    assert window.save_action.shortcut().toString() == "Ctrl+S"

    texts: list[str] = []
    dialogs.answer("OK", lambda box: texts.append(box.text()))
    window.about_action.trigger()
    assert "Baton" in texts[0]

    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.sidebar.list, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible()


def test_changing_the_working_folder_rereads_the_project(
    qtbot: QtBot,
    make_window: Callable[..., MainWindow],
    tmp_path: Path,
    write_agent: Callable[..., Path],
) -> None:
    window = make_window()
    other = tmp_path / "other-project"
    write_agent(other / ".pi" / "agents", "porter", "Ports code")

    window.working_folder = other

    names = [e.name for e in window.agents_view.agent_list.visible_entries()]
    assert "porter" in names
    assert window.folder_label.toolTip() == str(other)
    assert window.agents_view.working_folder == other


def test_the_window_fits_800_pixels_on_every_view(qtbot: QtBot, make_window) -> None:
    window = make_window()
    # every view, the lazily built ones too: the stack is as wide as its widest page
    for key in ("agents", "presets", "runs", "documents", "batches", "inbox"):
        window.show_view(key)
        QApplication.processEvents()
        assert window.minimumSizeHint().width() <= 770, key
    window.resize(800, 560)
    qtbot.waitUntil(lambda: window.width() == 800)


def test_the_first_view_lists_its_agents_after_the_window_opens(
    qtbot: QtBot, make_window: Callable[..., MainWindow], gui_settings: QSettings, project: Path
) -> None:
    first = make_window()
    builtin = next(
        e for e in first.agents_view.agent_list.visible_entries() if e.source == "builtin"
    )
    first.agents_view.open_path(Path(builtin.path))
    first.close()

    settings = QSettings(gui_settings.fileName(), QSettings.Format.IniFormat)
    second = MainWindow(project, settings)
    qtbot.addWidget(second)
    view = second.agents_view
    # Built and shown before a single agent file is read: they are read on a worker thread.
    assert not view.is_read()
    assert view.agent_list.visible_entries() == []
    assert view.editor.path() is None
    second.show()
    qtbot.waitUntil(view.is_read)
    assert builtin.name in [e.name for e in view.agent_list.visible_entries()]
    # The file open at the last close is open again, read-only as a built-in is.
    assert view.editor.path() == Path(builtin.path)
    assert view.editor.is_read_only()
    view.shutdown()


def test_a_linked_run_s_header_does_not_widen_the_window(qtbot: QtBot, make_window) -> None:
    """A resumed run with long parameters and a long origin line: both elide (the full text in
    the tooltip), so the window stays usable at 800 pixels."""
    window = make_window()
    started = RunStarted(
        run_id="20261204-101010-abcdef",
        ts=0,
        mode="chain",
        preset="implement-and-review",
        steps=[
            PlannedStep(agent=f"agent-with-a-long-name-{n}", task="do", cwd=".") for n in range(3)
        ],
        params={f"1.parameter_{n}": "a fairly long value " * 2 for n in range(4)},
        cwd=str(window.working_folder),
        started_at="2026-12-04T10:10:10+00:00",
        lineage=Lineage(run_id="20261203-090909-fedcba" * 3, step=2, kind="resume"),
    )
    window.show_view("runs")
    page = window.runs_view.open_events([started])
    header = page.view.header
    qtbot.waitUntil(header.origin.isVisible)
    assert header.origin.full_text().startswith("·  resumed from run 20261203-090909-fedcba")
    assert window.minimumSizeHint().width() <= 800
    window.resize(800, 560)
    qtbot.waitUntil(lambda: window.width() == 800)
    qtbot.waitUntil(lambda: header.origin.text() != header.origin.full_text())  # elided
    assert header.origin.toolTip() == header.origin.full_text()
