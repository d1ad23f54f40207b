"""GUI fixtures: windows on temporary folders, a dialog answerer, and a qasync loop.

Every test already has temporary HOME/config/data folders (``tests/conftest.py``). On top:

* ``gui_settings`` — a QSettings in an INI file under ``tmp_path``: QSettings caches its
  default path per process, so relying on ``$HOME`` would share state between tests.
* ``no_running_qt_timers`` (autouse) — fails a test that leaves a Qt timer running.
* ``dialogs`` (autouse) — answers modal dialogs by button label, as a person would click
  them. A dialog nobody expected is closed and fails the test instead of hanging it.
* ``qasync_loop`` — a qasync loop on pytest-qt's QApplication, set as the *running* asyncio
  loop for the test (``asyncio.create_task`` and ``qasync.asyncSlot`` work; tasks advance
  while ``qtbot.wait*`` spins Qt), cancelled and closed afterwards.
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QEvent, QObject, QSettings, Qt, QTimer
from PySide6.QtWidgets import QAbstractButton, QApplication, QDialog, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from gui.qt_asyncio import attached_event_loop
from gui.run.run_view import RunView
from gui.window.main_window import MainWindow
from tests.llm_server import LLMServer

OFFSCREEN_NOISE = r"This plugin does not support (raise|propagateSizeHints)"


def _write_agent(
    folder: Path, name: str, description: str = "", body: str = "", **fields: str
) -> Path:
    """Write ``<folder>/<name>.md`` with frontmatter; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"name: {name}", f"description: {description or 'The ' + name + ' agent'}"]
    lines += [f"{key}: {value}" for key, value in fields.items()]
    lines += ["---", body or f"You are {name}."]
    path = folder / f"{name}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def gui_settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "baton-gui.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def server(llm_server: LLMServer) -> LLMServer:
    """The scripted server, saved as the user's provider (what a launch from the window
    reads). Tests that need another default model or queued replies define their own."""
    save_settings(llm_server.settings())
    return llm_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder (the windows' working folder) with an empty ``.claude/agents``."""
    folder = tmp_path / "project"
    (folder / ".claude" / "agents").mkdir(parents=True)
    return folder


@pytest.fixture
def user_agents(isolated_home: Path) -> Path:
    """Baton's user agent folder (``<config>/agents``), created."""
    folder = isolated_home / "config" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def make_window(
    qtbot: QtBot, gui_settings: QSettings, project: Path
) -> Iterator[Callable[..., MainWindow]]:
    """Build, show and (at teardown) close main windows without prompts."""
    windows: list[MainWindow] = []

    def make(folder: Path | None = None, settings: QSettings | None = None) -> MainWindow:
        window = MainWindow(folder or project, settings or gui_settings)
        # pytest-qt closes the window after the test; unsaved edits a test left behind must
        # not raise a prompt then.
        qtbot.addWidget(window, before_close_func=_forget_edits)
        window.show()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow)  # shortcuts (Ctrl+S...) need an active window
        qtbot.waitUntil(window.has_started)  # status bar and welcome panel: after first paint
        if "agents" in window.views:  # the first view lists its files after the first paint
            qtbot.waitUntil(window.agents_view.is_read)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.agents_view.shutdown()
        if window._launch_dialog is not None:
            window._launch_dialog.close()  # its background model listing ends with it


def _forget_edits(window: QWidget) -> None:
    if isinstance(window, MainWindow):
        window.agents_view.editor.text_edit.document().setModified(False)


class DialogAnswerer:
    """Clicks buttons of modal dialogs in the order the test queued them."""

    def __init__(self) -> None:
        self._queue: list[tuple[str, Callable[[QWidget], None] | None]] = []
        self.seen: list[str] = []
        self.unexpected: list[str] = []
        self._timer = QTimer()
        self._timer.setInterval(10)
        self._timer.timeout.connect(self._poll)
        self._timer.start()

    def answer(self, button: str, before: Callable[[QWidget], None] | None = None) -> None:
        """Click ``button`` on the next dialog, after ``before(dialog)`` (e.g. to type)."""
        self._queue.append((button, before))

    def pending(self) -> int:
        return len(self._queue)

    def stop(self) -> None:
        self._timer.stop()

    def _poll(self) -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or not dialog.isVisible():
            return
        text = dialog.text() if isinstance(dialog, QMessageBox) else dialog.windowTitle()
        self.seen.append(dialog.objectName())
        if not self._queue:
            self.unexpected.append(f"{dialog.objectName()}: {text}")
            self._close(dialog)
            return
        label, before = self._queue.pop(0)
        if before is not None:
            before(dialog)
        for button in dialog.findChildren(QAbstractButton):
            if button.text().replace("&", "") == label and button.isVisible():
                if not button.isEnabled():
                    self.unexpected.append(f"button {label!r} is disabled in {text}")
                    self._close(dialog)
                    return
                button.click()
                return
        self.unexpected.append(f"no button {label!r} in {dialog.objectName()}: {text}")
        self._close(dialog)

    @staticmethod
    def _close(dialog: QWidget) -> None:
        if isinstance(dialog, QDialog):
            dialog.reject()
        else:
            dialog.close()


@pytest.fixture(autouse=True)
def no_running_qt_timers(qapp: QApplication, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail a test that leaves a Qt timer running (napari's ``_dangling_qtimers``): a timer
    that outlives its test fires in a later one, into objects that test never made.

    Every ``QTimer.start`` and ``QTimer.singleShot`` made from Python during the test is
    noted with where it was called. After the test — its widgets closed by pytest-qt and
    deleted here, the other fixtures torn down — a noted timer still active, or a single shot
    still pending whose context object (if it has one) is alive, fails the test and is
    stopped. Timers of deleted objects died with them and are not leaks.
    """
    started: weakref.WeakKeyDictionary[QTimer, str] = weakref.WeakKeyDictionary()
    shots: dict[object, tuple[str, weakref.ref[QObject] | None]] = {}
    base_start = QTimer.start
    base_single_shot: Callable[..., None] = QTimer.singleShot  # every overload goes through

    def start(timer: QTimer, *args: Any) -> None:
        started[timer] = _called_from()
        base_start(timer, *args)

    def single_shot(*args: Any) -> None:
        *head, callback = args
        if not callable(callback):  # a receiver and a slot's name: Qt's own bookkeeping
            base_single_shot(*args)
            return
        token = object()
        context = head[-1] if len(head) > 1 and isinstance(head[-1], QObject) else None
        shots[token] = (_called_from(), weakref.ref(context) if context is not None else None)

        def fire() -> None:
            shots.pop(token, None)
            callback()

        base_single_shot(*head, fire)

    monkeypatch.setattr(QTimer, "start", start)
    monkeypatch.setattr(QTimer, "singleShot", staticmethod(single_shot))
    yield
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # closed widgets go now
    running = []
    for timer, where in list(started.items()):
        if shiboken6.isValid(timer) and timer.isActive():
            running.append(where)
            timer.stop()
    for where, context in shots.values():
        alive = context() if context is not None else None
        if context is None or (alive is not None and shiboken6.isValid(alive)):
            running.append(f"single shot from {where}")
    if running:
        pytest.fail(f"Qt timers still running after the test, started at: {running}")


def _called_from() -> str:
    """Where a timer was started: the caller, and its caller (a throttle's owner, say)."""
    frames: list[str] = []
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and len(frames) < 2:
        frames.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}")
        frame = frame.f_back
    return " <- ".join(frames)


@pytest.fixture(autouse=True)
def dialogs(qapp: QApplication, no_running_qt_timers: None) -> Iterator[DialogAnswerer]:
    """Answers dialogs; its polling timer is stopped before the timer check runs (hence the
    dependency: the check is set up first and torn down last)."""
    answerer = DialogAnswerer()
    yield answerer
    answerer.stop()
    assert answerer.unexpected == [], "unexpected or unanswerable dialogs"
    assert answerer.pending() == 0, "a queued dialog answer was never used"


@pytest.fixture
def qasync_loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """The loop for the test; a test that leaves asyncio tasks pending fails (they are
    cancelled either way, so the next test starts clean)."""
    with attached_event_loop(qapp) as loop:
        yield loop
        QApplication.processEvents()  # let tasks finishing right now finish
        pending = sorted(
            repr(task.get_coro())
            for task in asyncio.all_tasks(loop)
            # The loop's own clean-up of async generators left suspended (httpx's byte
            # streams) is not the test's doing; attached_event_loop drives them to the end.
            if not task.done()
            and not task.cancelling()  # its owner stopped it; the loop's teardown finishes it
            and type(task.get_coro()).__name__ != "async_generator_athrow"
        )
    if pending:
        pytest.fail(f"asyncio tasks still pending after the test: {pending}")


def _click_agent(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    """Click the agent row of ``path`` in the list, the way a person selects it."""
    agent_list = window.agents_view.agent_list
    item = agent_list.item_for_path(str(path))
    assert item is not None, f"{path} is not in the list"
    agent_list.scrollToItem(item)
    rect = agent_list.visualItemRect(item)
    qtbot.mouseClick(agent_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


@pytest.fixture
def write_agent() -> Callable[..., Path]:
    """``write_agent(folder, name, description="", body="", **fields) -> path``."""
    return _write_agent


@pytest.fixture
def click_agent(qtbot: QtBot) -> Callable[[MainWindow, Path], None]:
    """``click_agent(window, path)``: select a row with the mouse."""
    return lambda window, path: _click_agent(qtbot, window, path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if (
            here in Path(str(item.path)).parents
            and item.get_closest_marker("qt_log_ignore") is None
        ):
            # The offscreen platform plugin cannot raise windows or pass size hints to a window
            # manager and warns whenever a window is raised or its size limits change; that is
            # about the plugin, not about Baton (xcb and others stay quiet). Tests that set
            # their own qt_log_ignore keep it.
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def no_ollama_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows built without a provider show the welcome panel, which looks for Ollama on
    localhost. Tests must not depend on what runs on this machine, and a probe cancelled
    mid-connect at teardown can leave anyio's half-made connection for a later test's
    warnings; an address httpx refuses before any I/O keeps the panel's "not running" path.
    The welcome tests pass their own ``ollama_url``."""
    monkeypatch.setattr("gui.window.welcome_panel.OLLAMA_URL", "unset://ollama")


@pytest.fixture
def view(qtbot: QtBot) -> RunView:
    """A shown run view (test modules about other views define their own ``view``)."""
    widget = RunView()
    qtbot.addWidget(widget)
    widget.resize(1000, 700)
    widget.show()
    return widget
