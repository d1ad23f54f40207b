"""Settings ▸ Rules: list, add, edit, delete and import rules, written only when saved."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem
from pytestqt.qtbot import QtBot

from core.safety.rule_store import RuleStore
from gui.settings.settings_dialog import SettingsDialog


@pytest.fixture
def dialog(qtbot: QtBot) -> Iterator[SettingsDialog]:
    shown = SettingsDialog()
    qtbot.addWidget(shown)
    shown.show()
    shown.tabs.setCurrentWidget(shown.rules)
    yield shown
    shown.providers.shutdown()


def _click(qtbot: QtBot, button: object) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _type(qtbot: QtBot, dialog: SettingsDialog, text: str) -> None:
    dialog.rules.rule_edit.clear()
    qtbot.keyClicks(dialog.rules.rule_edit, text)


def _shown(dialog: SettingsDialog) -> list[tuple[str, str]]:
    tree = dialog.rules.tree
    rows = []
    for index in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(index)
        assert top is not None
        rows.append((top.text(0), ""))
        rows += [(rule.text(0), rule.text(1)) for rule in _children(top)]
    return rows


def _children(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    children = [item.child(index) for index in range(item.childCount())]
    assert None not in children
    return [child for child in children if child is not None]


def _rule(tree: QTreeWidget, index: int) -> QTreeWidgetItem:
    """The ``index``-th rule under the first project."""
    project = tree.topLevelItem(0)
    assert project is not None
    return _children(project)[index]


def test_rules_are_listed_per_project(qtbot: QtBot, tmp_path: Path) -> None:
    RuleStore().add(tmp_path, "allow", "Bash(git diff:*)")
    RuleStore().add(tmp_path, "deny", "Read(./.env)")
    shown = SettingsDialog()
    qtbot.addWidget(shown)
    assert _shown(shown) == [
        (str(tmp_path), ""),
        ("Read(./.env)", "deny"),
        ("Bash(git diff:*)", "allow"),
    ]
    shown.providers.shutdown()


def test_add_edit_and_delete_are_saved_only_with_the_dialog(
    qtbot: QtBot, dialog: SettingsDialog, tmp_path: Path
) -> None:
    page = dialog.rules
    page.add_project(tmp_path)
    _type(qtbot, dialog, "Bash(")
    assert not page.add_button.isEnabled() and "not a rule" in page.rule_error.text()
    _type(qtbot, dialog, "Bash(npm test)")
    _click(qtbot, page.add_button)
    _type(qtbot, dialog, "Edit(src/**)")
    page.kind_combo.setCurrentIndex(page.kind_combo.findData("ask"))
    _click(qtbot, page.add_button)
    assert RuleStore().projects() == {}  # nothing written before Save

    first_rule = _rule(page.tree, 1)
    assert first_rule.text(0) == "Bash(npm test)"
    page.tree.setCurrentItem(first_rule)
    assert page.rule_edit.text() == "Bash(npm test)"
    _type(qtbot, dialog, "Bash(npm run lint)")
    _click(qtbot, page.update_button)
    page.tree.setCurrentItem(_rule(page.tree, 0))
    _click(qtbot, page.delete_button)
    assert _shown(dialog) == [(str(tmp_path.resolve()), ""), ("Bash(npm run lint)", "allow")]

    assert dialog.save()
    saved = RuleStore().for_project(tmp_path.resolve()).texts()
    assert saved == {"deny": [], "ask": [], "allow": ["Bash(npm run lint)"]}


def test_cancel_drops_a_deleted_rule(qtbot: QtBot, tmp_path: Path) -> None:
    RuleStore().add(tmp_path, "allow", "Read")
    shown = SettingsDialog()
    qtbot.addWidget(shown)
    shown.rules.tree.setCurrentItem(_rule(shown.rules.tree, 0))
    _click(qtbot, shown.rules.delete_button)
    _click(qtbot, shown.cancel_button)
    assert RuleStore().for_project(tmp_path).texts()["allow"] == ["Read"]
    shown.providers.shutdown()


def test_import_from_claude_code_settings(
    qtbot: QtBot, dialog: SettingsDialog, tmp_path: Path
) -> None:
    (tmp_path / ".claude").mkdir()
    permissions = {"permissions": {"allow": ["Bash(make:*)"], "deny": ["Bash(curl:*)"]}}
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(permissions))
    dialog.rules.add_project(tmp_path)
    _click(qtbot, dialog.rules.import_button)
    assert ("Bash(curl:*)", "deny") in _shown(dialog) and ("Bash(make:*)", "allow") in _shown(
        dialog
    )
    assert dialog.save()
    assert RuleStore().for_project(tmp_path.resolve()).texts()["deny"] == ["Bash(curl:*)"]


def test_add_says_why_it_is_disabled_and_a_project_only_listed_is_not_written(
    qtbot: QtBot, dialog: SettingsDialog, tmp_path: Path
) -> None:
    page = dialog.rules
    _type(qtbot, dialog, "Read")
    assert not page.add_button.isEnabled() and "Add project…" in page.add_button.toolTip()
    page.select_project(tmp_path)  # what the window does when it opens Settings
    assert _shown(dialog) == [(str(tmp_path.resolve()), "")]
    assert page.add_button.isEnabled() and str(tmp_path.resolve()) in page.add_button.toolTip()
    _type(qtbot, dialog, "Bash(")
    assert not page.add_button.isEnabled() and "Correct the rule" in page.add_button.toolTip()
    assert dialog.save()
    assert not RuleStore().path.exists()  # saving an empty project writes no rules file
