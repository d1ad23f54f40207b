"""The agents list: sources, override marks, problems, filtering and live refresh from disk."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

import core.definitions.agents
from core.definitions.agents import AgentDefinition
from gui.window.main_window import MainWindow

Window = Callable[..., MainWindow]
MAIN = threading.main_thread()


def _rows(window: MainWindow) -> dict[str, tuple[str, str, bool]]:
    """name@source -> (badge, description, shadowed) as the list shows them."""
    return {
        f"{e.name}@{e.source}": (e.badge, e.description, e.shadowed)
        for e in window.agents_view.agent_list.visible_entries()
    }


def test_list_groups_agents_by_source_with_override_marks(
    make_window: Window, project: Path, user_agents: Path, write_agent: Callable[..., Path]
) -> None:
    write_agent(user_agents, "scout", "My own scout")  # overrides the built-in
    write_agent(user_agents, "helper", "Helps")
    write_agent(project / ".claude" / "agents", "helper", "Project helper")  # overrides user
    write_agent(project / ".claude" / "agents", "tester", "Runs tests")

    window = make_window()
    rows = _rows(window)

    assert window.agents_view.agent_list.group_titles() == [
        "Project (2)",
        "User (1)",  # helper is shadowed by the project one: listed greyed, not counted
        "Built-in (3)",
    ]
    assert rows["helper@project"] == ("overrides user", "Project helper", False)
    assert rows["tester@project"] == ("", "Runs tests", False)
    assert rows["scout@user"] == ("overrides built-in", "My own scout", False)
    assert rows["planner@builtin"][0] == ""
    assert {"planner@builtin", "worker@builtin", "reviewer@builtin"} <= rows.keys()
    # What was overridden is still listed, greyed, so the user can open it.
    assert rows["scout@builtin"][0] == "shadowed by user"
    assert rows["scout@builtin"][2] is True
    assert rows["helper@user"] == ("shadowed by project", "Helps", True)


def test_tooltip_summarises_model_and_tools(
    make_window: Window, project: Path, write_agent: Callable[..., Path]
) -> None:
    path = write_agent(
        project / ".claude" / "agents", "tester", tools="Read, Bash", model="qwen2.5-coder:7b"
    )
    window = make_window()
    item = window.agents_view.agent_list.item_for_path(str(path))
    assert item is not None
    tooltip = item.toolTip(0)
    assert "qwen2.5-coder:7b" in tooltip
    assert "Read, Bash" in tooltip


def test_broken_file_shows_a_diagnostic_and_the_rest_load(
    qtbot: QtBot, make_window: Window, project: Path, write_agent: Callable[..., Path]
) -> None:
    folder = project / ".claude" / "agents"
    write_agent(folder, "good", "Works fine")
    broken = folder / "broken.md"
    broken.write_text("---\nname: broken\ntools: [read\n---\nbody\n", encoding="utf-8")

    window = make_window()
    panel = window.agents_view.diagnostics

    assert "good@project" in _rows(window)
    assert "broken@project" not in _rows(window)
    assert panel.toggle.text() == "Problems — 1 error"
    [row] = panel.row_texts()
    assert row.startswith("broken.md:")
    assert "frontmatter is not valid YAML" in row

    # Double-clicking the problem opens the broken file so the user can fix it.
    item = panel.tree.topLevelItem(0)
    assert item is not None
    rect = panel.tree.visualItemRect(item)
    # A real double-click is press, release, then a double-click event.
    qtbot.mouseClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(panel.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    editor = window.agents_view.editor
    assert editor.path() == broken
    assert "tools: [read" in editor.text()
    assert not editor.is_read_only()
    assert editor.problem_banner.isVisible()
    assert window.agents_view.header.title.text() == "broken.md"


def test_problems_panel_folds_and_says_when_all_is_well(
    qtbot: QtBot, make_window: Window, project: Path
) -> None:
    (project / ".claude" / "agents" / "notes.md").write_text("# notes\n", encoding="utf-8")
    window = make_window()
    panel = window.agents_view.diagnostics
    assert panel.toggle.text() == "Problems — 1 note"
    assert panel.tree.isVisible()

    qtbot.mouseClick(panel.toggle, Qt.MouseButton.LeftButton)
    assert not panel.tree.isVisible()

    (project / ".claude" / "agents" / "notes.md").unlink()
    qtbot.waitUntil(lambda: panel.toggle.text() == "No problems")


def test_watcher_picks_up_files_created_changed_and_removed_elsewhere(
    qtbot: QtBot,
    make_window: Window,
    project: Path,
    user_agents: Path,
    write_agent: Callable[..., Path],
    click_agent: Callable[[MainWindow, Path], None],
) -> None:
    kept = write_agent(project / ".claude" / "agents", "kept", "Stays selected")
    window = make_window()
    click_agent(window, kept)
    assert window.agents_view.agent_list.current_path() == str(kept)

    # Another program creates a user agent...
    write_agent(user_agents, "newcomer", "Arrived from outside")
    qtbot.waitUntil(lambda: "newcomer@user" in _rows(window))
    # ...edits one in place...
    write_agent(user_agents, "newcomer", "Edited elsewhere")
    qtbot.waitUntil(
        lambda: _rows(window).get("newcomer@user", ("", "", False))[1] == "Edited elsewhere"
    )
    # ...and removes it.
    (user_agents / "newcomer.md").unlink()
    qtbot.waitUntil(lambda: "newcomer@user" not in _rows(window))

    assert window.agents_view.agent_list.current_path() == str(kept)
    assert window.agents_view.editor.path() == kept


def test_watcher_notices_an_agent_folder_that_did_not_exist(
    qtbot: QtBot, make_window: Window, tmp_path: Path, write_agent: Callable[..., Path]
) -> None:
    plain = tmp_path / "plain-folder"
    plain.mkdir()
    window = make_window(plain)
    assert "Project" not in " ".join(window.agents_view.agent_list.group_titles())

    (plain / ".pi").mkdir()
    qtbot.waitUntil(
        lambda: any(str(plain / ".pi") == p for p in window.agents_view.watcher.watched())
    )
    write_agent(plain / ".pi" / "agents", "late", "Created with its folder")
    qtbot.waitUntil(lambda: "late@project" in _rows(window))


def test_filter_and_keyboard_navigation_skip_group_headers(
    qtbot: QtBot,
    make_window: Window,
    project: Path,
    write_agent: Callable[..., Path],
    click_agent: Callable[[MainWindow, Path], None],
) -> None:
    tester = write_agent(project / ".claude" / "agents", "tester", "Runs tests")
    window = make_window()
    agent_list = window.agents_view.agent_list
    click_agent(window, tester)

    qtbot.keyClick(agent_list, Qt.Key.Key_Down)  # over the "User"/"Built-in" header
    entry = agent_list.current_entry()
    assert entry is not None and entry.source == "builtin"
    assert window.agents_view.editor.path() == Path(agent_list.current_path() or "")
    qtbot.keyClick(agent_list, Qt.Key.Key_Up)
    assert agent_list.current_path() == str(tester)

    qtbot.keyClicks(window.agents_view.filter_field, "RUNS TE")  # description, any case
    assert [e.name for e in agent_list.visible_entries()] == ["tester"]
    window.agents_view.filter_field.clear()
    assert len(agent_list.visible_entries()) == 5  # tester + the four built-ins


def test_a_change_on_disk_re_parses_only_that_file_off_the_gui_thread(
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    make_window: Window,
    project: Path,
    write_agent: Callable[..., Path],
) -> None:
    folder = project / ".claude" / "agents"
    files = [write_agent(folder, f"agent{n}", f"Agent number {n}") for n in range(6)]
    for file in files:  # written long ago, as a person's agent files are
        stat = file.stat()
        os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns - 3_600 * 10**9))
    window = make_window()
    assert "agent4@project" in _rows(window)
    parses: list[tuple[str, bool]] = []
    parse = core.definitions.agents.parse_agent_text

    def recording(text: str, **kwargs: Any) -> AgentDefinition:
        parses.append((Path(kwargs["path"]).name, threading.current_thread() is MAIN))
        return parse(text, **kwargs)

    monkeypatch.setattr(core.definitions.agents, "parse_agent_text", recording)
    write_agent(folder, "agent4", "Edited in another editor")
    qtbot.waitUntil(lambda: _rows(window)["agent4@project"][1] == "Edited in another editor")

    assert parses  # the change was read...
    assert {name for name, _ in parses} == {"agent4.md"}  # ...and nothing else was
    assert not any(on_gui_thread for _, on_gui_thread in parses)
