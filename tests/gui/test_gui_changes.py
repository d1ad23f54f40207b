"""The Changes section, the diff viewer and Undo, driven by clicks, on a real run that changed
a real git repository (Baton's own loop, the scripted LLM server)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from core.model.events import Event
from core.workspace.restore import checkpoints_of
from gui.changes.actions import RestoreDialog, run_events
from gui.changes.diff_viewer import DiffViewer
from gui.changes.patch_view import PAGE_LINES
from gui.changes.run_changes import RunChangesDialog
from gui.run.run_view import RunView
from tests.git_repos import changes_of, make_repo, run_parallel_edits, run_step, three_changes
from tests.gui.conftest import DialogAnswerer
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.usefixtures("qasync_loop")


def _run(qtbot: QtBot, server: LLMServer, folder: Path) -> list[Event]:
    task = asyncio.ensure_future(run_step(server, folder))
    qtbot.waitUntil(task.done, timeout=15_000)
    return task.result()


def _three_changes_shown(
    qtbot: QtBot, server: LLMServer, tmp_path: Path, view: RunView
) -> tuple[Path, list[Event]]:
    """A step that changed three files in a new repository, shown in ``view``."""
    repo = make_repo(tmp_path / "repo")
    three_changes(server)
    events = _run(qtbot, server, repo)
    view.load_events(events)
    return repo, events


def _viewers() -> list[DiffViewer]:
    return [
        w for w in QApplication.topLevelWidgets() if isinstance(w, DiffViewer) and w.isVisible()
    ]


def details(dialog: QWidget) -> str:
    """The restore dialog's text of what would change and be lost."""
    assert isinstance(dialog, RestoreDialog)
    return dialog.details.toPlainText()


def _click(qtbot: QtBot, button: QPushButton) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_the_step_pane_lists_its_changes_and_opens_them_unified_and_side_by_side(
    qtbot: QtBot, llm_server: LLMServer, tmp_path: Path, view: RunView
) -> None:
    _three_changes_shown(qtbot, llm_server, tmp_path, view)
    section = view.pane(0).changes
    assert section is not None and section.isVisible()
    assert section.title.text() == "Changes · 3 files  +3 −2"
    labels = [b.text() for b in section.file_buttons]
    assert labels == ["app.py  +1 −1", "docs/new.md  +1 −0  new", "notes.txt  +1 −1"]

    _click(qtbot, section.file_buttons[2])
    qtbot.waitUntil(lambda: bool(_viewers()))
    viewer = _viewers()[0]
    qtbot.addWidget(viewer)
    shown = viewer.current_file()
    assert shown is not None and shown.path == "notes.txt"
    assert viewer.unified.kinds == ["hunk", "removed", "added", "context"]
    text = viewer.unified.toPlainText()
    assert "colour: red" in text and "colour: blue" in text

    _click(qtbot, viewer.split_button)
    assert viewer.old_side.toPlainText().splitlines()[1].endswith("colour: red")
    assert viewer.new_side.toPlainText().splitlines()[1].endswith("colour: blue")
    assert viewer.old_side.kinds == ["hunk", "removed", "context"]
    assert viewer.new_side.kinds == ["hunk", "added", "context"]

    viewer.file_list.setCurrentRow(0)
    assert "return 'hi'" in viewer.new_side.toPlainText()


def test_undo_this_step_shows_what_changes_and_puts_all_three_files_back(
    qtbot: QtBot, llm_server: LLMServer, tmp_path: Path, view: RunView, dialogs: DialogAnswerer
) -> None:
    repo, _events = _three_changes_shown(qtbot, llm_server, tmp_path, view)
    section = view.pane(0).changes
    assert section is not None and section.undo_button.isEnabled()
    seen: list[str] = []
    dialogs.answer("Restore", before=lambda dialog: seen.append(details(dialog)))
    dialogs.answer("OK")

    _click(qtbot, section.undo_button)

    qtbot.waitUntil(lambda: dialogs.pending() == 0)
    qtbot.waitUntil(lambda: not (repo / "docs").exists())
    assert "3 files would change" in seen[0] and "Warning" not in seen[0]
    assert "deleted  docs/new.md" in seen[0]
    assert "hello" in (repo / "app.py").read_text(encoding="utf-8")
    assert "red" in (repo / "notes.txt").read_text(encoding="utf-8")


def test_undo_over_a_later_edit_warns_what_would_be_lost_and_cancel_keeps_it(
    qtbot: QtBot, llm_server: LLMServer, tmp_path: Path, view: RunView, dialogs: DialogAnswerer
) -> None:
    repo, _events = _three_changes_shown(qtbot, llm_server, tmp_path, view)
    (repo / "app.py").write_text("mine\n", encoding="utf-8")
    seen: list[str] = []
    dialogs.answer("Cancel", before=lambda dialog: seen.append(details(dialog)))
    section = view.pane(0).changes
    assert section is not None
    _click(qtbot, section.undo_button)
    qtbot.waitUntil(lambda: dialogs.pending() == 0)
    assert "1 file changed since the run's last checkpoint" in seen[0]
    assert "modified app.py" in seen[0]
    assert (repo / "app.py").read_text(encoding="utf-8") == "mine\n"


def _files(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` outside ``.git``, with its text."""
    return {
        str(path.relative_to(folder)): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(folder).parts
    }


def _text(seen: list[str]) -> Callable[[QWidget], None]:
    """A ``before`` for :meth:`DialogAnswerer.answer` noting the message box's text."""

    def note(dialog: QWidget) -> None:
        assert isinstance(dialog, QMessageBox)
        seen.append(dialog.text())

    return note


def test_undo_in_the_restored_message_puts_the_files_back_as_before_the_restore(
    qtbot: QtBot, llm_server: LLMServer, tmp_path: Path, view: RunView, dialogs: DialogAnswerer
) -> None:
    repo, events = _three_changes_shown(qtbot, llm_server, tmp_path, view)
    after_run = _files(repo)
    section = view.pane(0).changes
    assert section is not None
    seen: list[str] = []
    dialogs.answer("Restore")
    dialogs.answer("Undo", before=_text(seen))
    dialogs.answer("OK", before=_text(seen))

    _click(qtbot, section.undo_button)

    qtbot.waitUntil(lambda: dialogs.pending() == 0)
    qtbot.waitUntil(lambda: (repo / "docs" / "new.md").exists())
    assert _files(repo) == after_run
    run_id = changes_of(events).run_id
    assert seen[0].startswith("Restored 3 files to before step 1. Undo puts them back")
    assert f"baton runs restore {run_id} --undo" in seen[0]
    assert seen[1].startswith(f"The files in {repo} are back as they were before the restore")
    assert "3 files changed" in seen[1]
    _path, saved = run_events(run_id)
    assert [c.kind for c in checkpoints_of(saved)] == ["step", "restore", "restore"]


def test_undo_over_an_edit_made_after_the_restore_asks_and_cancel_keeps_the_edit(
    qtbot: QtBot, llm_server: LLMServer, tmp_path: Path, view: RunView, dialogs: DialogAnswerer
) -> None:
    repo, _events = _three_changes_shown(qtbot, llm_server, tmp_path, view)
    section = view.pane(0).changes
    assert section is not None
    asked: list[str] = []

    def edit(_dialog: QWidget) -> None:  # while the "Restored" message is open
        (repo / "app.py").write_text("mine\n", encoding="utf-8")

    dialogs.answer("Restore")
    dialogs.answer("Undo", before=edit)
    dialogs.answer("Cancel", before=_text(asked))

    _click(qtbot, section.undo_button)

    qtbot.waitUntil(lambda: dialogs.pending() == 0)
    assert dialogs.seen == ["RestoreDialog", "ChangesMessage", "ChangesConfirm"]
    assert "restoring would overwrite these changes" in asked[0]
    assert "modified app.py" in asked[0]
    assert (repo / "app.py").read_text(encoding="utf-8") == "mine\n"
    assert not (repo / "docs").exists()


def test_the_run_changes_view_restores_to_before_a_chosen_step(
    qtbot: QtBot, llm_server: LLMServer, tmp_path: Path, view: RunView, dialogs: DialogAnswerer
) -> None:
    repo = make_repo(tmp_path / "repo")
    three_changes(llm_server)
    events = _run(qtbot, llm_server, repo)
    run_id = changes_of(events).run_id
    dialog = RunChangesDialog(run_id, events)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.summary.text() == "3 files changed by 1 step"
    top = dialog.tree.topLevelItem(0)
    assert top is not None
    assert top.text(0) == "Step 1 worker — 3 files  +3 −2"
    assert not dialog.restore_button.isEnabled()
    file_item = top.child(1)
    assert file_item is not None
    dialog.tree.setCurrentItem(file_item)
    assert dialog.restore_button.text() == "Restore to before step 1"
    assert _restore(qtbot, dialog, dialogs).startswith("Restored to before step 1")
    assert not (repo / "docs").exists()


def test_a_large_diff_is_paged(qtbot: QtBot) -> None:
    lines = PAGE_LINES + 150
    body = "".join(f"+line {n}\n" for n in range(lines))
    patch = (
        "diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n"
        f"@@ -0,0 +1,{lines} @@\n{body}"
    )
    viewer = DiffViewer("big", patch)
    qtbot.addWidget(viewer)
    viewer.show()
    assert viewer.page_label.text() == f"lines 1–{PAGE_LINES} of {lines + 1} · page 1/2"
    assert len(viewer.unified.kinds) == PAGE_LINES
    assert not viewer.previous_button.isEnabled()
    _click(qtbot, viewer.next_button)
    assert viewer.page_label.text().startswith(f"lines {PAGE_LINES + 1}–{lines + 1}")
    assert viewer.unified.toPlainText().splitlines()[-1].endswith(f"line {lines - 1}")
    assert not viewer.next_button.isEnabled()


def test_a_step_without_changes_has_no_section(
    qtbot: QtBot, llm_server: LLMServer, tmp_path: Path, view: RunView
) -> None:
    repo = make_repo(tmp_path / "repo")
    llm_server.queue(Reply.answer("Nothing to do."))
    view.load_events(_run(qtbot, llm_server, repo))
    assert view.pane(0).changes is None


def test_a_parallel_run_s_changes_are_shown_and_restored_for_the_whole_run(
    qtbot: QtBot, llm_server: LLMServer, tmp_path: Path, view: RunView, dialogs: DialogAnswerer
) -> None:
    repo = make_repo(tmp_path / "repo")
    task = asyncio.ensure_future(run_parallel_edits(llm_server, repo))
    qtbot.waitUntil(task.done, timeout=15_000)
    view.load_events(task.result())
    assert all(view.pane(i).changes is None for i in range(2))  # not attributed per task
    button = view.header.changes_button
    assert button.isVisible()
    _click(qtbot, button)
    qtbot.waitUntil(lambda: bool(_run_changes()))
    (dialog,) = _run_changes()
    qtbot.addWidget(dialog)
    assert dialog.summary.text().startswith("2 files changed by the run's 2 parallel tasks")
    assert "not per task" in dialog.summary.text()
    top = dialog.tree.topLevelItem(0)
    assert top is not None
    assert top.text(0) == "All tasks (not attributed per task) — 2 files  +2 −1"
    dialog.tree.setCurrentItem(top)
    assert not dialog.step_button.isEnabled()
    assert dialog.restore_button.text() == "Restore to before the run"

    _click(qtbot, dialog.all_button)
    qtbot.waitUntil(lambda: bool(_viewers()))
    viewer = _viewers()[0]
    qtbot.addWidget(viewer)
    assert [f.path for f in viewer.files] == ["app.py", "docs/new.md"]
    viewer.close()

    assert _restore(qtbot, dialog, dialogs).startswith("Restored to before the run")
    assert not (repo / "docs").exists()
    assert "hello" in (repo / "app.py").read_text(encoding="utf-8")


def _restore(qtbot: QtBot, dialog: RunChangesDialog, dialogs: DialogAnswerer) -> str:
    """Click the Changes view's restore button, confirm, and return the new entry's text."""
    dialogs.answer("Restore")
    dialogs.answer("OK")
    _click(qtbot, dialog.restore_button)
    qtbot.waitUntil(lambda: dialog.tree.topLevelItemCount() == 2)
    # the "Restored" message is shown without blocking: the entry can come first
    qtbot.waitUntil(lambda: dialogs.pending() == 0)
    restored = dialog.tree.topLevelItem(1)
    assert restored is not None
    return restored.text(0)


def _run_changes() -> list[RunChangesDialog]:
    return [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, RunChangesDialog) and w.isVisible()
    ]


PATCH = (
    "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n"
    "@@ -1 +1 @@\n-colour: red\n+colour: blue\n"
)


def _viewer_with_a_comment(qtbot: QtBot) -> tuple[DiffViewer, list[object]]:
    viewer = DiffViewer("notes", PATCH, commentable=True)
    qtbot.addWidget(viewer)
    viewer.show()
    sent: list[object] = []
    viewer.commentsSent.connect(sent.append)
    view = viewer.unified
    last = view.document().blockCount() - 1
    rect = view.cursorRect(QTextCursor(view.document().findBlockByNumber(last)))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    viewer.comment.setFocus()
    qtbot.keyClicks(viewer.comment, "Blue clashes with the logo.")
    _click(qtbot, viewer.comment_button)
    assert viewer.comment_list.count() == 1
    return viewer, sent


@pytest.mark.parametrize("answer", ["Cancel", "Discard", "Send 1 comment"])
def test_closing_the_diff_viewer_with_unsent_comments_asks_first(
    qtbot: QtBot, dialogs: DialogAnswerer, answer: str
) -> None:
    viewer, sent = _viewer_with_a_comment(qtbot)
    dialogs.answer(answer)
    viewer.close()
    assert dialogs.seen == ["UnsentComments"]
    if answer == "Cancel":  # keep editing: the viewer and the comment stay
        assert viewer.isVisible() and viewer.comment_list.count() == 1 and not sent
        dialogs.answer("Discard")  # the test's own clean-up closes it
    elif answer == "Discard":
        assert not viewer.isVisible() and not sent
    else:
        assert not viewer.isVisible() and len(sent) == 1


def test_sending_comments_closes_the_viewer_without_asking(
    qtbot: QtBot, dialogs: DialogAnswerer
) -> None:
    viewer, sent = _viewer_with_a_comment(qtbot)
    _click(qtbot, viewer.send_button)
    assert not viewer.isVisible() and len(sent) == 1
    assert dialogs.seen == []
