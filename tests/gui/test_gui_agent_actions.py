"""New / Duplicate / Delete, driven through the buttons and dialogs a person would use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QRadioButton, QWidget
from pytestqt.qtbot import QtBot

from core.definitions.agents import parse_agent_text
from gui.window.main_window import MainWindow

Window = Callable[..., MainWindow]
Click = Callable[[MainWindow, Path], None]


def _fill_new_agent(
    qtbot: QtBot, name: str, description: str, project: bool = False
) -> Callable[[QWidget], None]:
    def fill(dialog: QWidget) -> None:
        qtbot.keyClicks(dialog.findChild(QLineEdit, "NameField"), name)
        qtbot.keyClicks(dialog.findChild(QLineEdit, "DescriptionField"), description)
        if project:
            [radio] = [
                r for r in dialog.findChildren(QRadioButton) if r.text().startswith("Project")
            ]
            radio.click()

    return fill


@pytest.mark.parametrize("scope", ["user", "project"])
def test_new_agent_creates_a_template_and_opens_it(
    qtbot: QtBot,
    make_window: Window,
    project: Path,
    user_agents: Path,
    dialogs: Any,
    scope: str,
) -> None:
    window = make_window()
    dialogs.answer(
        "Create", _fill_new_agent(qtbot, "Test Writer", "Writes tests", scope == "project")
    )
    qtbot.keyClick(window.agents_view.agent_list, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)

    folder = user_agents if scope == "user" else project / ".claude" / "agents"
    path = folder / "test-writer.md"
    assert path.is_file()
    agent = parse_agent_text(path.read_text(encoding="utf-8"))
    assert (agent.name, agent.description) == ("Test Writer", "Writes tests")
    view = window.agents_view
    assert view.editor.path() == path
    assert view.agent_list.current_path() == str(path)
    assert view.header.title.text() == "Test Writer"
    assert not view.editor.problem_banner.isVisible()  # the template is valid as it is


def test_new_agent_dialog_refuses_a_name_taken_in_its_scope(
    qtbot: QtBot,
    make_window: Window,
    user_agents: Path,
    write_agent: Callable[..., Path],
    dialogs: Any,
) -> None:
    write_agent(user_agents, "helper")
    window = make_window()
    seen: dict[str, object] = {}

    def try_names(dialog: Any) -> None:
        qtbot.keyClicks(dialog.name_field, "HELPER")  # names compare case-insensitively
        seen["taken"] = (dialog.create_button.isEnabled(), dialog.problem.text())
        dialog.project_scope.click()  # the same name is free in the project
        seen["project"] = dialog.create_button.isEnabled()

    dialogs.answer("Cancel", try_names)
    window.agents_view.new_agent()

    assert seen["taken"] == (False, "An agent named “HELPER” already exists here.")
    assert seen["project"] is True
    assert sorted(p.name for p in user_agents.iterdir()) == ["helper.md"]


def test_duplicating_a_built_in_makes_an_editable_override(
    qtbot: QtBot, make_window: Window, click_agent: Click, user_agents: Path
) -> None:
    window = make_window()
    view = window.agents_view
    scout = next(a for a in view.catalog.agents if a.name == "scout")
    click_agent(window, Path(scout.path or ""))

    qtbot.mouseClick(view.readonly_banner.button("Duplicate"), Qt.MouseButton.LeftButton)

    copy = user_agents / "scout.md"
    assert copy.read_bytes() == Path(scout.path or "").read_bytes()
    assert view.editor.path() == copy
    assert not view.editor.is_read_only()
    assert view.header.override_badge.text() == "overrides built-in"
    rows = {(e.name, e.source): e.badge for e in view.agent_list.visible_entries()}
    assert rows[("scout", "user")] == "overrides built-in"
    assert rows[("scout", "builtin")] == "shadowed by user"


def test_duplicating_a_user_agent_copies_it_under_a_new_name(
    qtbot: QtBot,
    make_window: Window,
    click_agent: Click,
    user_agents: Path,
    write_agent: Callable[..., Path],
) -> None:
    original = write_agent(user_agents, "helper", "Helps", body="Body text.")
    window = make_window()
    click_agent(window, original)

    qtbot.mouseClick(window.agents_view.header.duplicate_button, Qt.MouseButton.LeftButton)

    copy = user_agents / "helper-copy.md"
    agent = parse_agent_text(copy.read_text(encoding="utf-8"))
    assert (agent.name, agent.description, agent.system_prompt) == (
        "helper-copy",
        "Helps",
        "Body text.",
    )
    assert window.agents_view.editor.path() == copy
    assert original.is_file()


@pytest.mark.parametrize("answer", ["Cancel", "Delete"])
def test_delete_asks_naming_the_file(
    qtbot: QtBot,
    make_window: Window,
    click_agent: Click,
    project: Path,
    write_agent: Callable[..., Path],
    dialogs: Any,
    isolated_home: Path,
    answer: str,
) -> None:
    doomed = write_agent(project / ".claude" / "agents", "doomed", "Soon gone")
    window = make_window()
    view = window.agents_view
    click_agent(window, doomed)
    texts: list[str] = []

    dialogs.answer(answer, lambda box: texts.append(box.informativeText()))
    qtbot.mouseClick(view.header.delete_button, Qt.MouseButton.LeftButton)

    assert str(doomed) in texts[0]
    if answer == "Cancel":
        assert doomed.is_file()
        assert view.editor.path() == doomed
    else:
        assert not doomed.exists()
        trash = isolated_home / ".local" / "share" / "Trash" / "files" / "doomed.md"
        assert trash.is_file()  # recoverable, as the prompt promised
        assert view.editor.path() is None
        assert view.right.currentWidget() is view.empty_state
        assert "doomed" not in [e.name for e in view.agent_list.visible_entries()]


def test_new_agent_dialog_shows_its_longest_message_whole(
    qtbot: QtBot, make_window: Window, dialogs: Any
) -> None:
    window = make_window()
    seen: dict[str, object] = {}

    def type_a_bad_name(dialog: Any) -> None:
        qtbot.keyClicks(dialog.name_field, "bad/name")
        label = dialog.problem
        seen["text"] = label.text()
        needed = label.heightForWidth(label.width())  # -1 when it cannot wrap: clipped
        seen["fits"] = needed > 0 and label.height() >= needed
        seen["inside"] = label.geometry().right() <= dialog.rect().right()

    dialogs.answer("Cancel", type_a_bad_name)
    window.agents_view.new_agent()
    assert seen["text"] == "Use letters, digits, spaces, '-', '_' or '.' (up to 64 characters)."
    assert seen["fits"] is True and seen["inside"] is True
