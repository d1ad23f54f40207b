"""Projects as a person changes them: File ▸ Open Folder…, File ▸ Open Recent, a folder or a
run file dropped on the window, and ``baton PATH`` / ``baton FILE`` from a desktop's "Open
with"; a restart from the desktop (in the home folder) reopens the last project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QFileOpenEvent
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from core.cli import build_parser
from core.config.recent_projects import recent_projects
from core.safety.rule_store import RuleStore
from gui import launcher
from gui.settings.settings_dialog import SettingsDialog
from gui.window.main_window import MainWindow
from gui.window.projects import FileOpenEvents
from tests.gui.conftest import DialogAnswerer

ROOT = Path(__file__).resolve().parents[2]
Window = Callable[..., MainWindow]


def _names(window: MainWindow) -> list[str]:
    return [entry.name for entry in window.agents_view.agent_list.visible_entries()]


def _recent_menu(window: MainWindow) -> QMenu:
    menu = window.menuBar().findChild(QMenu, "OpenRecentMenu")
    assert isinstance(menu, QMenu)
    menu.aboutToShow.emit()  # what opening it does
    return menu


def test_open_folder_switches_the_agents_status_bar_and_launch_dialog(
    qtbot: QtBot, make_window: Window, tmp_path: Path, write_agent: Callable[..., Path]
) -> None:
    window = make_window()
    other = tmp_path / "other-project"
    write_agent(other / ".claude" / "agents", "porter", "Ports code")
    assert "porter" not in _names(window)
    dialog = window.open_launch_dialog()
    asked: list[Path] = []
    changed: list[Path] = []
    window.projectChanged.connect(changed.append)

    def chooser(_parent: object, start: Path) -> Path:
        asked.append(start)
        return other

    window.projects.choose = chooser
    window.open_folder_action.trigger()

    assert asked == [window.agents_view.working_folder.parent / "project"]
    qtbot.waitUntil(lambda: "porter" in _names(window))
    assert window.working_folder == other.resolve()
    assert window.folder_label.toolTip() == str(other.resolve())
    assert dialog.working_folder() == other.resolve()
    assert changed == [other.resolve()]
    assert recent_projects()[0] == other.resolve()
    window.show_view("presets")
    assert window.presets_view.working_folder == other.resolve()


def test_a_cancelled_chooser_changes_nothing(make_window: Window, project: Path) -> None:
    window = make_window()
    window.projects.choose = lambda _parent, _start: None
    assert not window.open_folder()
    assert window.working_folder == project
    assert recent_projects() == []


def test_open_recent_lists_the_projects_and_opens_one(
    qtbot: QtBot, make_window: Window, tmp_path: Path, write_agent: Callable[..., Path]
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_agent(first / ".claude" / "agents", "alpha")
    write_agent(second / ".claude" / "agents", "beta")
    window = make_window()
    assert [a.text() for a in _recent_menu(window).actions()] == ["No recent projects"]
    assert window.open_project(first) and window.open_project(second)
    actions = [a for a in _recent_menu(window).actions() if a.toolTip().startswith("/")]
    assert [a.toolTip() for a in actions] == [str(second.resolve()), str(first.resolve())]
    actions[1].trigger()
    qtbot.waitUntil(lambda: "alpha" in _names(window))
    assert "beta" not in _names(window)
    assert recent_projects() == [first.resolve(), second.resolve()]


def test_a_missing_folder_is_refused_in_the_status_bar(make_window: Window, tmp_path: Path) -> None:
    window = make_window()
    before = window.working_folder
    assert not window.open_project(tmp_path / "nowhere")
    assert window.working_folder == before
    assert "is not a folder" in window.statusBar().currentMessage()


def test_unsaved_agent_edits_keep_the_project_when_the_person_cancels(
    make_window: Window,
    project: Path,
    tmp_path: Path,
    write_agent: Callable[..., Path],
    dialogs: DialogAnswerer,
) -> None:
    path = write_agent(project / ".claude" / "agents", "editing")
    window = make_window()
    assert window.agents_view.open_path(path)
    window.agents_view.editor.text_edit.insertPlainText("unsaved ")
    dialogs.answer("Cancel")
    other = tmp_path / "other"
    other.mkdir()
    assert not window.open_project(other)
    assert window.working_folder == project


def _drop(window: MainWindow, path: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)


def test_a_dropped_folder_becomes_the_project_and_a_dropped_run_opens(
    qtbot: QtBot,
    make_window: Window,
    tmp_path: Path,
    write_agent: Callable[..., Path],
) -> None:
    window = make_window()
    assert window.acceptDrops()
    other = tmp_path / "dropped"
    write_agent(other / ".pi" / "agents", "dropper")
    _drop(window, other)
    qtbot.waitUntil(lambda: "dropper" in _names(window))
    assert window.working_folder == other.resolve()

    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z",'
        '"cwd":"/tmp"}\n'
        '{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01Z",'
        '"message":{"role":"user","content":[{"type":"text","text":"hello there"}],'
        '"timestamp":1}}\n',
        encoding="utf-8",
    )
    _drop(window, transcript)
    assert window.current_view() == "runs"
    qtbot.waitUntil(lambda: window.runs_view.tabs.count() >= 2)


def test_the_launcher_knows_every_sub_command() -> None:
    parser = build_parser()
    choices = next(
        a.choices for a in parser._actions if a.dest == "command" and a.choices is not None
    )
    assert set(choices) == launcher.COMMANDS


def test_baton_file_opens_it_like_baton_open(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    opened: list[Path] = []

    def open_run(_self: object, path: Path, _events: object, _shot: object) -> int:
        opened.append(path)
        return 0

    monkeypatch.setattr(launcher.Window, "open_run", open_run)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00Z",'
        '"cwd":"/tmp"}\n',
        encoding="utf-8",
    )
    assert launcher.main([str(transcript)]) == 0
    assert opened == [transcript]
    # a sub-command wins over a file of the same name; an option is never a path
    assert launcher.open_with(["agents"]) is None
    assert launcher.open_with(["--version"]) is None
    assert launcher.open_with(["missing"]) is None  # argparse names the commands
    assert launcher.main([str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err == f"baton: {tmp_path / 'missing'}: no such file or folder\n"


CHILD = r"""
import os, sys
import gui.window.welcome_panel
gui.window.welcome_panel.OLLAMA_URL = "unset://ollama"
from pathlib import Path
from PySide6.QtCore import QTimer
import gui.window.projects
from gui.window.main_window import MainWindow

def say(*parts):
    print(*parts, flush=True)

def choose(_parent, start):
    say("asked", start)
    return Path(os.environ["PROBE_CHOOSE"])

if os.environ.get("PROBE_CHOOSE"):
    gui.window.projects.choose_folder = choose

show = MainWindow.show

def probed_show(window):
    window.first_paint.when_painted(lambda: say("painted"))
    show(window)

    def check(*_args):
        asking = os.environ.get("PROBE_CHOOSE") and window.working_folder == Path.home()
        if window.has_started() and window.agents_view.is_read() and not asking:
            say("folder", window.working_folder)
            say("agents", ",".join(e.name for e in window.agents_view.agent_list.visible_entries()))
            window.save_state()
            os._exit(0)

    def watch():  # after every start-up step; then at each change of folder or agents
        window.projectChanged.connect(check)
        window.agents_view.catalogChanged.connect(check)
        check()

    window.after_first_paint.append(lambda: QTimer.singleShot(0, watch))

MainWindow.show = probed_show
from gui.launcher import main
sys.exit(main(sys.argv[1:]))
"""


def run_window(args: list[str], cwd: Path, **env: str) -> dict[str, str]:
    """Start ``baton ARGS`` in a child process and return what it reported, once its window
    has listed the agents."""
    environment = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(ROOT),
        "BATON_LOGIN_SHELL": "0",
        **env,
    }
    result = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition(" ")
        report[key] = value
    return report


def test_baton_path_opens_the_project_and_a_desktop_restart_reopens_it(
    isolated_home: Path, tmp_path: Path, write_agent: Callable[..., Path]
) -> None:
    project = tmp_path / "repo"
    write_agent(project / ".claude" / "agents", "repo-helper")

    report = run_window([str(project)], cwd=isolated_home)  # Exec=baton %F
    assert report["folder"] == str(project.resolve())
    assert "repo-helper" in report["agents"].split(",")

    restarted = run_window([], cwd=isolated_home)  # a double-click starts in the home folder
    assert restarted["folder"] == str(project.resolve())
    assert "repo-helper" in restarted["agents"].split(",")


def test_a_desktop_start_with_no_project_asks_for_one(
    isolated_home: Path, tmp_path: Path, write_agent: Callable[..., Path]
) -> None:
    project = tmp_path / "chosen"
    write_agent(project / ".claude" / "agents", "chosen-helper")

    report = run_window([], cwd=isolated_home, PROBE_CHOOSE=str(project))

    assert report["asked"] == str(isolated_home)
    assert report["folder"] == str(project.resolve())
    assert "chosen-helper" in report["agents"].split(",")
    assert recent_projects() == [project.resolve()]


def test_the_status_bar_says_when_there_is_no_project(
    make_window: Window, isolated_home: Path
) -> None:
    window = make_window(isolated_home)
    assert window.folder_label.text() == "No project: File ▸ Open Folder…"


def test_settings_open_on_the_rules_of_the_windows_project(
    make_window: Window, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        (folder / ".git").mkdir(parents=True)
        RuleStore().add(folder.resolve(), "allow", "bash(git status)")
    (second / "src").mkdir()
    window = make_window()
    window.open_project(second / "src")  # a sub-folder: the rules of its repository
    dialog = window.open_settings()
    try:
        current = dialog.rules.tree.currentItem()
        assert current is not None and current.text(0) == str(second.resolve())
    finally:
        dialog.reject()


def test_settings_open_on_a_project_with_no_rules_yet_so_add_works_at_once(
    qtbot: QtBot, make_window: Window, project: Path
) -> None:
    """Issue #34: "+ Add" stayed disabled, with no hint, until "Add project…"."""
    dialog = make_window().open_settings()
    try:
        _add_a_rule_as_a_person(qtbot, dialog, project.resolve())
        assert not RuleStore().path.exists()  # nothing written before Save
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        assert not dialog.isVisible()
    finally:
        if dialog.isVisible():
            dialog.reject()
    saved = json.loads(RuleStore().path.read_text(encoding="utf-8"))
    allowed = {"deny": [], "ask": [], "allow": ["Bash(make test)"]}
    assert saved == {str(project.resolve()): allowed}


def _add_a_rule_as_a_person(qtbot: QtBot, dialog: SettingsDialog, project: Path) -> None:
    """Open Rules, read the hint on the disabled Add, type a rule and click Add."""
    sections, page = dialog.tabs.list, dialog.rules
    rules_row = sections.findItems("Rules", Qt.MatchFlag.MatchExactly)[0]
    where = sections.visualItemRect(rules_row).center()
    qtbot.mouseClick(sections.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert dialog.tabs.currentWidget() is page
    current = page.tree.currentItem()
    assert current is not None and current.text(0) == str(project)
    assert current.text(1) == "no rules yet"
    assert not page.add_button.isEnabled() and "Type a rule" in page.add_button.toolTip()
    qtbot.mouseClick(page.rule_edit, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(page.rule_edit, "Bash(make test)")
    assert page.add_button.isEnabled()
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)


def test_a_drag_of_files_is_welcome_and_macos_file_open_events_open_the_project(
    qtbot: QtBot, make_window: Window, tmp_path: Path, write_agent: Callable[..., Path]
) -> None:
    window = make_window()
    other = tmp_path / "from-finder"
    write_agent(other / ".claude" / "agents", "finder")
    events = FileOpenEvents(window.projects, window)
    assert events.eventFilter(window, QFileOpenEvent(str(other)))
    qtbot.waitUntil(lambda: "finder" in _names(window))
    assert window.working_folder == other.resolve()

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(other))])
    drag = QDragEnterEvent(
        QPoint(5, 5),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dragEnterEvent(drag)
    assert drag.isAccepted()
    text = QMimeData()
    text.setText("not a file")
    refused = QDragEnterEvent(
        QPoint(5, 5),
        Qt.DropAction.CopyAction,
        text,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    refused.ignore()
    window.dragEnterEvent(refused)
    assert not refused.isAccepted()
