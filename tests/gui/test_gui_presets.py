"""The Presets view: sources, read-only built-ins, duplicate/new/delete, live validation
against the known agents, atomic save, watching the folders, and "Run…"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QWidget
from pytestqt.qtbot import QtBot

from core.definitions.agents import AgentCatalog, discover_agents
from core.definitions.preset_files import template, validate_preset_text, with_name
from core.definitions.presets import parse_preset_text
from gui.definitions.presets_view import PresetsView
from gui.window.main_window import MainWindow

Window = Callable[..., MainWindow]
CTRL = Qt.KeyboardModifier.ControlModifier
CUSTOM = "name: triage\ndescription: Sort the issues\nmode: parallel\nsteps:\n" + (
    "  - {agent: scout, task: 'look at $1'}\n  - {agent: reviewer, task: 'judge $1'}\n"
)


def _click_row(qtbot: QtBot, view: PresetsView, path: Path) -> None:
    presets = view.preset_list
    item = presets.item_for_path(str(path))
    assert item is not None, f"{path} is not listed"
    presets.scrollToItem(item)
    rect = presets.visualItemRect(item)
    qtbot.mouseClick(presets.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.editor.path() == path


def _builtin(view: PresetsView, name: str) -> Path:
    preset = view.catalog.get(name)
    assert preset is not None and preset.path is not None
    return Path(preset.path)


def _replace_text(qtbot: QtBot, view: PresetsView, text: str) -> None:
    """Select all and type ``text`` (one line: flow-style YAML needs no Return presses)."""
    edit = view.editor.text_edit
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_A, CTRL)
    qtbot.keyClicks(edit, text)
    view.editor.validate_now()


def test_lists_each_source_and_built_ins_are_read_only(
    qtbot: QtBot, make_window: Window, user_presets: Path, project: Path
) -> None:
    (user_presets / "triage.yaml").write_text(CUSTOM, encoding="utf-8")
    (project / ".baton" / "presets").mkdir(parents=True)
    (project / ".baton" / "presets" / "ship.yml").write_text(
        "name: ship\nmode: single\nsteps: [{agent: worker, task: ship it}]\n", encoding="utf-8"
    )
    (user_presets / "broken.yaml").write_text("name: [oops\n", encoding="utf-8")
    window = make_window()
    view = window.presets_view
    window.show_view("presets")
    assert view.preset_list.group_titles() == ["Project (1)", "User (2)", "Built-in (6)"]
    names = [entry.name for entry in view.preset_list.visible_entries()]
    assert names == ["ship", "broken", "triage", "best-of-3", "fan-in", "implement",
                     "implement-and-review", "review-loop", "scout-and-plan"]  # fmt: skip
    assert "broken.yaml" in view.diagnostics.row_texts()[0]

    implement = _builtin(view, "implement")
    _click_row(qtbot, view, implement)
    assert view.editor.is_read_only()
    assert view.readonly_banner.isVisible()
    assert view.header.graph.describe() == "scout → planner → worker"
    assert view.header.mode_badge.text() == "chain"
    assert view.header.arguments.text() == "Arguments: <what to build>"
    assert not view.header.save_button.isVisible()
    assert not view.header.delete_button.isEnabled()

    _click_row(qtbot, view, user_presets / "triage.yaml")
    assert not view.editor.is_read_only()
    assert view.header.graph.describe() == "scout + reviewer"
    view.preset_list.set_filter("judge")  # filters on name and description
    view.filter_field.setText("sort the")
    assert [e.name for e in view.preset_list.visible_entries()] == ["triage"]


def test_duplicating_a_built_in_gives_an_editable_copy_that_replaces_it(
    qtbot: QtBot, make_window: Window, user_presets: Path, dialogs: Any
) -> None:
    window = make_window()
    view = window.presets_view
    window.show_view("presets")
    implement = _builtin(view, "implement")
    _click_row(qtbot, view, implement)
    qtbot.mouseClick(view.readonly_banner.button("Duplicate"), Qt.MouseButton.LeftButton)

    copy = user_presets / "implement.yaml"
    assert copy.read_text(encoding="utf-8") == implement.read_text(encoding="utf-8")
    assert view.editor.path() == copy and not view.editor.is_read_only()
    assert view.header.override_badge.text() == "overrides built-in"
    assert view.catalog.get("implement").source == "user"  # type: ignore[union-attr]
    badges = {(e.name, e.source): e.badge for e in view.preset_list.visible_entries()}
    assert badges[("implement", "user")] == "overrides built-in"
    assert badges[("implement", "builtin")] == "replaced by user"

    # A second duplicate (of the user copy) needs a new name.
    qtbot.mouseClick(view.header.duplicate_button, Qt.MouseButton.LeftButton)
    second = user_presets / "implement-copy.yaml"
    assert parse_preset_text(second.read_text(encoding="utf-8")).name == "implement-copy"
    assert view.editor.path() == second

    # Edit and save it: atomically, no temporary files left behind.
    _replace_text(
        qtbot,
        view,
        "{name: implement-copy, mode: chain, steps: [{agent: scout, task: 'map $@'}, "
        "{agent: worker, task: 'do {previous}'}]}",
    )
    assert view.editor.problems() == []
    qtbot.keyClick(view.editor.text_edit, Qt.Key.Key_S, CTRL)
    assert not view.editor.is_dirty()
    assert parse_preset_text(second.read_text(encoding="utf-8")).steps[1].agent == "worker"
    assert sorted(p.name for p in user_presets.iterdir()) == [
        "implement-copy.yaml",
        "implement.yaml",
    ]
    assert view.header.graph.describe() == "scout → worker"
    assert dialogs.seen == []


def test_invalid_yaml_and_unknown_agents_are_shown_inline(
    qtbot: QtBot, make_window: Window, user_presets: Path, dialogs: Any
) -> None:
    path = user_presets / "triage.yaml"
    path.write_text(CUSTOM, encoding="utf-8")
    window = make_window()
    view = window.presets_view
    window.show_view("presets")
    _click_row(qtbot, view, path)

    _replace_text(qtbot, view, "{name: triage, steps: [")
    problem = view.editor.problem_banner
    assert problem.isVisible() and problem.kind() == "error"
    assert "Not valid YAML: did not find expected node content" in problem.message()

    _replace_text(
        qtbot,
        view,
        "{name: triage, mode: chain, steps: [{agent: scout, task: a}, {agent: ghost, task: b}]}",
    )
    assert problem.kind() == "warning"
    assert problem.message().startswith("Line 1: Step 2: unknown agent 'ghost' (available: ")
    assert view.header.graph.describe() == "scout + reviewer"  # the header shows the file

    _replace_text(qtbot, view, "{name: triage, mode: sideways, steps: []}")
    assert problem.kind() == "error"
    assert problem.message().startswith(
        "Mode: Input should be 'single', 'parallel', 'chain' or 'graph'"
    )
    dialogs.answer("Save anyway")
    qtbot.keyClick(view.editor.text_edit, Qt.Key.Key_S, CTRL)
    assert "sideways" in path.read_text(encoding="utf-8")
    qtbot.waitUntil(lambda: "triage.yaml" in " ".join(view.diagnostics.row_texts()))


def test_new_preset_run_and_delete(
    qtbot: QtBot, make_window: Window, user_presets: Path, dialogs: Any
) -> None:
    window = make_window()
    view = window.presets_view
    window.show_view("presets")

    def name_it(dialog: QWidget) -> None:
        assert isinstance(dialog, QInputDialog)
        dialog.setTextValue("Bug hunt")

    dialogs.answer("OK", name_it)
    qtbot.mouseClick(view.new_button, Qt.MouseButton.LeftButton)
    created = user_presets / "bug-hunt.yaml"
    assert created.is_file()
    assert view.editor.path() == created
    assert view.editor.problems() == []
    assert view.header.graph.describe() == "scout → planner"

    qtbot.mouseClick(view.header.run_button, Qt.MouseButton.LeftButton)
    dialog = window._launch_dialog
    assert dialog is not None and dialog.isVisible()
    preset = dialog.current_preset()
    assert preset is not None and preset.name == "Bug hunt"
    assert dialog.preset_chain.describe() == "scout → planner"
    dialog.close()

    dialogs.answer("Delete")
    qtbot.mouseClick(view.header.delete_button, Qt.MouseButton.LeftButton)
    assert not created.exists()
    assert view.editor.path() is None
    assert "Bug hunt" not in [e.name for e in view.preset_list.visible_entries()]


def test_files_written_elsewhere_show_up(
    qtbot: QtBot, make_window: Window, user_presets: Path
) -> None:
    window = make_window()
    view = window.presets_view
    (user_presets / "triage.yaml").write_text(CUSTOM, encoding="utf-8")
    qtbot.waitUntil(
        lambda: "triage" in [e.name for e in view.preset_list.visible_entries()], timeout=5000
    )
    _click_row(qtbot, view, user_presets / "triage.yaml")
    (user_presets / "triage.yaml").write_text(CUSTOM.replace("Sort", "Rank"), encoding="utf-8")
    qtbot.waitUntil(lambda: "Rank the issues" in view.editor.text(), timeout=5000)


def test_validation_rules_without_a_window() -> None:
    agents: AgentCatalog = discover_agents(Path.cwd(), "user")
    assert validate_preset_text(template("x"), agents) == []
    problems = validate_preset_text(
        "name: p\nmode: parallel\nsteps:\n  - agent: scout\n    task: 'use {previous}'\n", agents
    )
    assert [(p.line, p.severity) for p in problems] == [(4, "warning")]
    assert "{previous} has no value in a parallel run" in problems[0].message
    assert with_name("name: a\nmode: chain\n", "b: c") == 'name: "b: c"\nmode: chain\n'
