"""Worktree isolation from the window: the launch dialog's option starts a run in its own
worktree; the run's Changes view merges or discards it."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.model.events import Event, RunStarted
from core.record.run_files import RunIndex, load_run
from gui.changes.run_changes import RunChangesDialog
from gui.window.main_window import MainWindow
from tests.git_repos import git, isolated_run
from tests.gui.conftest import DialogAnswerer
from tests.gui.launching import (
    click,
    open_launch_dialog,
    pick_preset,
    type_into,
    wait_for_session,
    wait_until_finished,
)
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.usefixtures("qasync_loop")


def _commit_all(folder: Path) -> None:
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["-c", "user.name=P", "-c", "user.email=p@p", "commit", "-q", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def test_the_launch_dialog_option_runs_in_a_worktree_on_its_own_branch(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer, project: Path
) -> None:
    save_settings(llm_server.settings())
    (project / "README.md").write_text("# project\n", encoding="utf-8")
    _commit_all(project)
    llm_server.queue(Reply.answer("README.md is all"), Reply.answer("1. nothing"))
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    pick_preset(qtbot, dialog, "scout-and-plan")
    type_into(qtbot, dialog.args_edit, "docs")
    click(qtbot, dialog.worktree_check)
    click(qtbot, dialog.run_button)
    assert wait_until_finished(qtbot, wait_for_session(qtbot, window)) == "ok"

    (record,) = RunIndex().list()
    started = load_run(Path(record.path))[0]
    assert isinstance(started, RunStarted) and started.worktree is not None
    assert started.worktree.branch == f"baton/{record.id}"
    assert started.cwd == started.worktree.path != str(project)
    assert git(project, "for-each-ref", "--format=%(refname)", "refs/heads").split() == [
        f"refs/heads/baton/{record.id}",
        "refs/heads/main",
    ]


def _isolated_run(qtbot: QtBot, server: LLMServer, folder: Path) -> list[Event]:
    task = asyncio.ensure_future(isolated_run(server, folder))
    qtbot.waitUntil(task.done, timeout=15_000)
    return task.result()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "app.py").write_text("def greet():\n    return 'hello'\n", encoding="utf-8")
    (folder / "notes.txt").write_text("colour: red\n", encoding="utf-8")
    _commit_all(folder)
    return folder


def test_discard_in_the_changes_view_removes_worktree_and_branch(
    qtbot: QtBot, llm_server: LLMServer, repo: Path, dialogs: DialogAnswerer
) -> None:
    events = _isolated_run(qtbot, llm_server, repo)
    started = events[0]
    assert isinstance(started, RunStarted) and started.worktree is not None
    view = RunChangesDialog(started.run_id, events)
    qtbot.addWidget(view)
    view.show()
    assert view.worktree_label.text() == (
        f"Worked in {started.worktree.path} on branch {started.worktree.branch}"
    )
    dialogs.answer("Discard")
    dialogs.answer("OK")
    click(qtbot, view.discard_button)
    qtbot.waitUntil(lambda: not view.discard_button.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: dialogs.pending() == 0)  # the message does not block the view
    assert not Path(started.worktree.path).exists()
    assert git(repo, "branch", "--list", "baton/*") == ""
    assert "hello" in (repo / "app.py").read_text(encoding="utf-8")


def test_merge_in_the_changes_view_fast_forwards_the_checkout(
    qtbot: QtBot, llm_server: LLMServer, repo: Path, dialogs: DialogAnswerer
) -> None:
    events = _isolated_run(qtbot, llm_server, repo)
    started = events[0]
    assert isinstance(started, RunStarted)
    assert "hello" in (repo / "app.py").read_text(encoding="utf-8")  # untouched until merge
    view = RunChangesDialog(started.run_id, events)
    qtbot.addWidget(view)
    view.show()
    dialogs.answer("OK")
    click(qtbot, view.merge_button)
    qtbot.waitUntil(lambda: not view.merge_button.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: dialogs.pending() == 0)  # the message does not block the view
    assert "hi" in (repo / "app.py").read_text(encoding="utf-8")
    assert "blue" in (repo / "notes.txt").read_text(encoding="utf-8")
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "branch", "--list", "baton/*") == ""
