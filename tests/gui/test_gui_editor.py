"""Editing through the widgets: atomic save, formats kept, live validation, conflicts, prompts."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from gui.window.main_window import MainWindow

Window = Callable[..., MainWindow]
Click = Callable[[MainWindow, Path], None]
CTRL = Qt.KeyboardModifier.ControlModifier


def _type(qtbot: QtBot, widget: QWidget, text: str) -> None:
    """Type ``text`` key by key; newlines are Return presses (QTest has no key for "\\n")."""
    for index, line in enumerate(text.split("\n")):
        if index:
            qtbot.keyClick(widget, Qt.Key.Key_Return)
        if line:
            qtbot.keyClicks(widget, line)


def _type_at_end(qtbot: QtBot, window: MainWindow, text: str) -> None:
    edit = window.agents_view.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_End, CTRL)
    _type(qtbot, edit, text)


def _press_save(qtbot: QtBot, window: MainWindow) -> None:
    # A window manager hands activation back after a dialog; the offscreen platform does not.
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.agents_view.editor.text_edit, Qt.Key.Key_S, CTRL)


@pytest.fixture
def agent_file(user_agents: Path, write_agent: Callable[..., Path]) -> Path:
    return write_agent(user_agents, "helper", "Helps with things", body="Be helpful.")


def test_typing_then_ctrl_s_saves_atomically(
    qtbot: QtBot, make_window: Window, click_agent: Click, agent_file: Path
) -> None:
    window = make_window()
    click_agent(window, agent_file)
    inode_before = os.stat(agent_file).st_ino

    _type_at_end(qtbot, window, "Always cite file paths.\n")
    assert window.agents_view.header.dirty_mark.isVisible()
    assert window.windowTitle() == "Baton — unsaved changes"
    _press_save(qtbot, window)

    expected = "---\nname: helper\ndescription: Helps with things\n---\nBe helpful.\n"
    assert agent_file.read_text(encoding="utf-8") == expected + "Always cite file paths.\n"
    assert os.stat(agent_file).st_ino != inode_before  # replaced by rename, not rewritten
    assert sorted(p.name for p in agent_file.parent.iterdir()) == ["helper.md"]  # no temp files
    assert not window.agents_view.editor.is_dirty()
    assert not window.agents_view.header.dirty_mark.isVisible()
    assert window.windowTitle() == "Baton"


def test_save_button_keeps_bom_and_crlf(
    qtbot: QtBot, make_window: Window, click_agent: Click, user_agents: Path
) -> None:
    path = user_agents / "windows.md"
    path.write_bytes(
        b"\xef\xbb\xbf---\r\nname: windows\r\ndescription: CRLF file\r\n---\r\nBody\r\n"
    )
    window = make_window()
    click_agent(window, path)
    assert window.agents_view.editor.text().startswith("---\nname: windows")

    _type_at_end(qtbot, window, "More\n")
    qtbot.mouseClick(window.agents_view.header.save_button, Qt.MouseButton.LeftButton)

    assert path.read_bytes() == (
        b"\xef\xbb\xbf---\r\nname: windows\r\ndescription: CRLF file\r\n---\r\nBody\r\nMore\r\n"
    )


def test_invalid_frontmatter_typed_shows_the_error_inline(
    qtbot: QtBot, make_window: Window, click_agent: Click, agent_file: Path
) -> None:
    window = make_window()
    editor = window.agents_view.editor
    click_agent(window, agent_file)
    assert not editor.problem_banner.isVisible()

    edit = editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_A, CTRL)
    _type(qtbot, edit, "---\ndescription: a: b\n---\nbody")

    qtbot.waitUntil(editor.problem_banner.isVisible)
    assert editor.problem_banner.kind() == "error"
    assert editor.problem_banner.message().startswith("Line 2: Frontmatter is not valid YAML")
    assert edit.marks() == {2: "error"}
    marked = [s.cursor.blockNumber() for s in edit.extraSelections() if s.format.toolTip()]
    assert marked == [1]  # block 1 is line 2

    # Fixing it step by step: with a name the file loads again, leniently (a warning).
    qtbot.keyClick(edit, Qt.Key.Key_Home, CTRL)
    qtbot.keyClick(edit, Qt.Key.Key_Down)
    _type(qtbot, edit, "name: fixed\n")
    qtbot.waitUntil(lambda: editor.problem_banner.kind() == "warning")
    assert edit.marks() == {3: "warning"}
    qtbot.mouseClick(editor.problem_banner.button("Go to line"), Qt.MouseButton.LeftButton)
    assert edit.textCursor().blockNumber() == 2


def test_saving_invalid_text_asks_first(
    qtbot: QtBot, make_window: Window, click_agent: Click, agent_file: Path, dialogs: Any
) -> None:
    window = make_window()
    click_agent(window, agent_file)
    original = agent_file.read_text(encoding="utf-8")
    edit = window.agents_view.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_A, CTRL)
    qtbot.keyClicks(edit, "no frontmatter yet")

    dialogs.answer("Cancel")
    _press_save(qtbot, window)
    assert agent_file.read_text(encoding="utf-8") == original
    assert window.agents_view.editor.is_dirty()

    dialogs.answer("Save anyway")
    _press_save(qtbot, window)
    assert agent_file.read_text(encoding="utf-8") == "no frontmatter yet"
    assert dialogs.seen == ["SaveInvalidPrompt", "SaveInvalidPrompt"]


@pytest.mark.parametrize("choice", ["Overwrite", "Reload from disk", "Cancel"])
def test_outside_change_while_editing_raises_the_conflict_prompt(
    qtbot: QtBot,
    make_window: Window,
    click_agent: Click,
    agent_file: Path,
    dialogs: Any,
    choice: str,
) -> None:
    window = make_window()
    editor = window.agents_view.editor
    click_agent(window, agent_file)
    _type_at_end(qtbot, window, "Mine.\n")
    mine = editor.text()
    theirs = "---\nname: helper\ndescription: Changed by another editor\n---\nTheirs.\n"
    agent_file.write_text(theirs, encoding="utf-8")

    dialogs.answer(choice)
    _press_save(qtbot, window)

    assert dialogs.seen == ["ConflictPrompt"]
    if choice == "Overwrite":
        assert agent_file.read_text(encoding="utf-8") == mine
        assert not editor.is_dirty()
    elif choice == "Reload from disk":
        assert agent_file.read_text(encoding="utf-8") == theirs
        assert editor.text() == theirs
        assert not editor.is_dirty()
    else:
        assert agent_file.read_text(encoding="utf-8") == theirs
        assert editor.text() == mine
        assert editor.is_dirty()


def test_outside_change_reloads_silently_when_there_are_no_edits(
    qtbot: QtBot, make_window: Window, click_agent: Click, agent_file: Path
) -> None:
    window = make_window()
    editor = window.agents_view.editor
    click_agent(window, agent_file)
    theirs = "---\nname: helper\ndescription: Now different\n---\nNew body.\n"
    agent_file.write_text(theirs, encoding="utf-8")

    qtbot.waitUntil(lambda: editor.text() == theirs)
    assert not editor.is_dirty()
    assert not editor.disk_banner.isVisible()
    item = window.agents_view.agent_list.item_for_path(str(agent_file))
    assert item is not None and "Now different" in item.toolTip(0)


@pytest.mark.parametrize("button", ["Reload", "Keep mine"])
def test_outside_change_with_edits_shows_a_banner(
    qtbot: QtBot, make_window: Window, click_agent: Click, agent_file: Path, button: str
) -> None:
    window = make_window()
    editor = window.agents_view.editor
    click_agent(window, agent_file)
    _type_at_end(qtbot, window, "Mine.\n")
    mine = editor.text()
    theirs = "---\nname: helper\ndescription: From elsewhere\n---\nTheirs.\n"
    agent_file.write_text(theirs, encoding="utf-8")

    qtbot.waitUntil(editor.disk_banner.isVisible)
    assert "changed on disk" in editor.disk_banner.message()
    assert editor.text() == mine  # nothing lost while the user decides

    qtbot.mouseClick(editor.disk_banner.button(button), Qt.MouseButton.LeftButton)
    assert not editor.disk_banner.isVisible()
    if button == "Reload":
        assert editor.text() == theirs
        assert not editor.is_dirty()
    else:
        # The user chose their text: saving overwrites without a second question.
        _press_save(qtbot, window)
        assert agent_file.read_text(encoding="utf-8") == mine


@pytest.mark.parametrize("answer", ["Cancel", "Don't save", "Save"])
def test_switching_agents_with_unsaved_edits_asks(
    qtbot: QtBot,
    make_window: Window,
    click_agent: Click,
    agent_file: Path,
    user_agents: Path,
    write_agent: Callable[..., Path],
    dialogs: Any,
    answer: str,
) -> None:
    other = write_agent(user_agents, "other", "Another one")
    window = make_window()
    view = window.agents_view
    click_agent(window, agent_file)
    original = agent_file.read_text(encoding="utf-8")
    _type_at_end(qtbot, window, "Edited.\n")

    dialogs.answer(answer)
    click_agent(window, other)

    assert dialogs.seen == ["UnsavedPrompt"]
    if answer == "Cancel":
        assert view.editor.path() == agent_file
        assert view.agent_list.current_path() == str(agent_file)
        assert view.editor.is_dirty()
    else:
        assert view.editor.path() == other
        assert view.agent_list.current_path() == str(other)
        saved = agent_file.read_text(encoding="utf-8")
        assert saved == (original + "Edited.\n" if answer == "Save" else original)


def test_closing_the_window_with_unsaved_edits_asks(
    qtbot: QtBot, make_window: Window, click_agent: Click, agent_file: Path, dialogs: Any
) -> None:
    window = make_window()
    click_agent(window, agent_file)
    _type_at_end(qtbot, window, "Edited.\n")

    dialogs.answer("Cancel")
    window.close()
    assert window.isVisible()

    dialogs.answer("Don't save")
    window.close()
    assert not window.isVisible()
    assert "Edited." not in agent_file.read_text(encoding="utf-8")


def test_built_in_agents_are_read_only(
    qtbot: QtBot, make_window: Window, click_agent: Click
) -> None:
    window = make_window()
    view = window.agents_view
    planner = next(a for a in view.catalog.agents if a.name == "planner")
    click_agent(window, Path(planner.path or ""))
    before = view.editor.text()

    _type_at_end(qtbot, window, "sneaky edit")

    assert view.editor.text() == before
    assert view.editor.is_read_only()
    assert view.readonly_banner.isVisible()
    assert "read-only" in view.readonly_banner.message()
    assert not view.header.save_button.isVisible()
    assert not view.header.delete_button.isEnabled()
    assert view.header.source_badge.text() == "Built-in"
