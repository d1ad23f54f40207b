"""Settings ▸ Rules: the "always allow in this project" rules, listed, edited and deleted.

Rules live in Baton's config folder (:class:`core.safety.rule_store.RuleStore`), not in
``config.yaml``; like revoked trust, changes made here are written when the dialog saves and
dropped on Cancel. The window's project is listed even before it has rules, selected, so a
first rule can be typed and added at once; a project left with no rules is never written.
Each rule is parsed as it is typed (:meth:`core.safety.rules.Rule.parse`), so a rule that
would never match cannot be added. "Import from Claude Code" copies a project's
``.claude/settings.json`` ``permissions`` into the list, for the person to read before saving.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.config.settings import Settings
from core.safety.rule_store import RuleStore, project_of, read_claude_permissions
from core.safety.rules import RULE_KINDS, Rule, RuleError, RuleKind
from gui import theme
from gui.settings.settings_pages import MARGINS, Page
from gui.theme import icons
from gui.widgets import PlainLabel

_ROLE = Qt.ItemDataRole.UserRole
_EFFECT_HUES = {"allow": "ok", "ask": "warning", "deny": "error"}
NO_RULES = "no rules yet"
"""Shown beside a project listed without rules (the window's, or one just added)."""


def _no_rules() -> dict[str, list[str]]:
    return {kind: [] for kind in RULE_KINDS}


class RulesPage(Page):
    """One tree: project folders, their rules beneath (rule, effect); an editor row below."""

    def __init__(self, store: RuleStore | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store or RuleStore()
        self._rules: dict[str, dict[str, list[str]]] = {}
        self._loaded: set[str] = set()
        note = QLabel(
            "Rules use Claude Code's syntax — Bash(git diff:*), Edit(src/**), Read — and are "
            "checked deny → ask → allow. A command is allowed only when every command in it "
            "matches an allow rule, with no redirection or substitution. Agents cannot change "
            "these rules."
        )
        note.setWordWrap(True)
        note.setObjectName("Secondary")
        self.tree = QTreeWidget()
        self.tree.setObjectName("Rules")
        self.tree.setHeaderLabels(["Rule", "Effect"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.currentItemChanged.connect(self._selected)

        self.kind_combo = QComboBox()
        self.kind_combo.setObjectName("RuleKind")
        for kind in ("allow", "ask", "deny"):
            self.kind_combo.addItem(kind, kind)
        self.rule_edit = QLineEdit()
        self.rule_edit.setObjectName("RuleText")
        self.rule_edit.setFont(theme.monospace_font())
        self.rule_edit.setPlaceholderText("Bash(git diff:*)")
        self.rule_edit.textChanged.connect(self._check_text)
        self.rule_error = PlainLabel()
        self.rule_error.setObjectName("Secondary")
        self.add_button = QPushButton(icons.icon("add"), "Add")
        self.add_button.clicked.connect(self.add_rule)
        self.update_button = QPushButton("Update")
        self.update_button.clicked.connect(self.update_rule)
        self.delete_button = QPushButton(icons.icon("delete"), "Delete")
        self.delete_button.clicked.connect(self.delete_selected)
        self.project_button = QPushButton("Add project…")
        self.project_button.clicked.connect(self._choose_project)
        self.import_button = QPushButton("Import from Claude Code")
        self.import_button.setToolTip(
            "Copy the permissions of the selected project's .claude/settings.json"
        )
        self.import_button.clicked.connect(self.import_selected)

        editor = QHBoxLayout()
        editor.addWidget(self.kind_combo)
        editor.addWidget(self.rule_edit, 1)
        editor.addWidget(self.add_button)
        editor.addWidget(self.update_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.project_button)
        buttons.addWidget(self.import_button)
        buttons.addStretch(1)
        buttons.addWidget(self.delete_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addWidget(note)
        layout.addWidget(self.tree, 1)
        layout.addLayout(editor)
        layout.addWidget(self.rule_error)
        layout.addLayout(buttons)

    # -- page protocol ---------------------------------------------------------------------

    def load(self, settings: Settings) -> None:
        """Rules live in their own file, not in config.yaml; ``settings`` is not needed."""
        self._rules = {str(root): rules.texts() for root, rules in self.store.projects().items()}
        self._loaded = set(self._rules)
        self._rebuild()

    def contribute(self, data: dict[str, Any]) -> None:
        """Rules are not part of config.yaml."""

    def apply(self) -> None:
        """Write every project's rules (the dialog calls this when it saves). A project only
        listed, never given a rule, is skipped: opening Settings and saving writes nothing."""
        for folder in sorted(self._loaded | set(self._rules)):
            rules = self._rules.get(folder, {})
            if folder in self._loaded or any(rules.values()):
                self.store.set_project(Path(folder), rules)
        self._loaded = {folder for folder, rules in self._rules.items() if any(rules.values())}

    # -- public API ------------------------------------------------------------------------

    def rules_of(self, folder: str) -> dict[str, list[str]]:
        """The rules shown for ``folder`` (unsaved edits included)."""
        return self._rules.get(folder, _no_rules())

    def select_project(self, folder: Path) -> None:
        """Select the project a step in ``folder`` gets its rules from (the window's project,
        when the dialog opens), listed with no rules yet if it has none, so "Add" works at once
        instead of waiting for "Add project…"."""
        self._list_project(str(project_of(folder)))

    def add_project(self, folder: Path) -> None:
        self._list_project(str(folder.resolve()))

    def add_rule(self) -> None:
        folder = self._selected_project()
        rule = self._typed_rule()
        if folder is None or rule is None:
            return
        kind = self._kind()
        lists = self._rules[folder]
        if str(rule) not in lists[kind]:
            lists[kind].append(str(rule))
            self.changed.emit()
        self._rebuild(select=(folder, kind, str(rule)))

    def update_rule(self) -> None:
        selected = self._selected_rule()
        rule = self._typed_rule()
        if selected is None or rule is None:
            return
        folder, kind, old = selected
        self._rules[folder][kind].remove(old)
        new_kind = self._kind()
        if str(rule) not in self._rules[folder][new_kind]:
            self._rules[folder][new_kind].append(str(rule))
        self.changed.emit()
        self._rebuild(select=(folder, new_kind, str(rule)))

    def delete_selected(self) -> None:
        selected = self._selected_rule()
        if selected is not None:
            folder, kind, text = selected
            self._rules[folder][kind].remove(text)
        else:
            project = self._selected_project()
            if project is None:
                return
            self._rules.pop(project)
        self.changed.emit()
        self._rebuild()

    def import_selected(self) -> None:
        folder = self._selected_project()
        if folder is None:
            return
        try:
            found = read_claude_permissions(Path(folder))
        except RuleError as error:
            self._show_error(str(error))
            return
        lists = self._rules[folder]
        added = 0
        for kind in RULE_KINDS:
            for text in found[kind]:
                if text not in lists[kind]:
                    lists[kind].append(text)
                    added += 1
        self._show_error("" if added else "No new rules in .claude/settings.json.")
        if added:
            self.changed.emit()
        self._rebuild(select=(folder, None, None))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # Appearance switched light <-> dark
            self._recolor()

    # -- private ---------------------------------------------------------------------------

    def _list_project(self, key: str) -> None:
        """List ``key`` (in memory only: :meth:`apply` writes it once it has a rule), selected."""
        self._rules.setdefault(key, _no_rules())
        self._rebuild(select=(key, None, None))

    def _recolor(self) -> None:
        """Each rule's effect (deny, ask, allow) in the palette's colour of its severity; "no
        rules yet" as secondary text."""
        for index in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(index)
            if top is None:
                continue
            top.setForeground(1, theme.secondary_text(self.palette()))
            for row in range(top.childCount()):
                item = top.child(row)
                if item is not None:
                    hue = theme.SEVERITY_HUES[_EFFECT_HUES[item.text(1)]]
                    item.setForeground(1, theme.foreground(self.palette(), hue))

    def _rebuild(self, select: tuple[str, str | None, str | None] | None = None) -> None:
        self.tree.clear()
        chosen: QTreeWidgetItem | None = None
        for folder in sorted(self._rules):
            empty = not any(self._rules[folder].values())
            top = QTreeWidgetItem([folder, NO_RULES if empty else ""])
            top.setIcon(0, icons.icon("folder"))
            top.setData(0, _ROLE, (folder, None, None))
            self.tree.addTopLevelItem(top)
            if select == (folder, None, None):
                chosen = top
            for kind in RULE_KINDS:
                for text in self._rules[folder][kind]:
                    item = QTreeWidgetItem([text, kind])
                    item.setFont(0, theme.monospace_font())
                    item.setData(0, _ROLE, (folder, kind, text))
                    top.addChild(item)
                    if select == (folder, kind, text):
                        chosen = item
            top.setExpanded(True)
        self._recolor()
        if chosen is None and self.tree.topLevelItemCount():
            chosen = self.tree.topLevelItem(0)
        if chosen is not None:
            self.tree.setCurrentItem(chosen)
        self._enable()

    def _selected(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        data = self._data(current)
        if data is not None and data[1] is not None:
            self.kind_combo.setCurrentIndex(self.kind_combo.findData(data[1]))
            self.rule_edit.setText(data[2] or "")
        self._enable()

    def _data(self, item: QTreeWidgetItem | None) -> tuple[str, str | None, str | None] | None:
        if item is None:
            return None
        return cast(tuple[str, str | None, str | None], item.data(0, _ROLE))

    def _selected_project(self) -> str | None:
        data = self._data(self.tree.currentItem())
        return data[0] if data is not None else None

    def _selected_rule(self) -> tuple[str, RuleKind, str] | None:
        data = self._data(self.tree.currentItem())
        if data is None or data[1] is None or data[2] is None:
            return None
        return data[0], cast(RuleKind, data[1]), data[2]

    def _kind(self) -> RuleKind:
        return cast(RuleKind, self.kind_combo.currentData())

    def _typed_rule(self) -> Rule | None:
        try:
            return Rule.parse(self.rule_edit.text())
        except RuleError:
            return None

    def _check_text(self) -> None:
        text = self.rule_edit.text()
        try:
            Rule.parse(text)
            self._show_error("")
        except RuleError as error:
            self._show_error(str(error) if text.strip() else "")
        self._enable()

    def _show_error(self, text: str) -> None:
        self.rule_error.setText(text)
        self.rule_error.setVisible(bool(text))

    def _enable(self) -> None:
        valid = self._typed_rule() is not None
        has_project = self._selected_project() is not None
        self.add_button.setEnabled(valid and has_project)
        self.add_button.setToolTip(self._add_hint())
        self.update_button.setEnabled(valid and self._selected_rule() is not None)
        self.delete_button.setEnabled(has_project)
        self.import_button.setEnabled(has_project)

    def _add_hint(self) -> str:
        """What "Add" does, or why it cannot yet and what to do: a disabled button with no
        reason reads as broken (issue #34)."""
        project = self._selected_project()
        if project is None:
            return "Choose a project first: Add project…"
        if not self.rule_edit.text().strip():
            return "Type a rule first, such as Bash(git diff:*)"
        if self._typed_rule() is None:
            return "Correct the rule first (see the message below it)"
        return f"Add this rule to {project}"

    def _choose_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Project folder")
        if folder:
            self.add_project(Path(folder))
