"""Settings pages for models and permissions, and the protocol every settings page follows.

Every page follows the same small protocol, which
:class:`gui.settings.settings_dialog.SettingsDialog`
drives: ``load(settings)`` fills the widgets, ``contribute(data)`` writes the page's part of
the dict that is validated as :class:`core.config.settings.Settings`, ``extra_errors()`` adds the
checks
pydantic cannot make (duplicates, a program that is not there), and ``show_errors(errors)``
marks the page's fields, returning messages it had no field for. ``changed`` fires on edits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.config.settings import DEFAULT_POLICY, PolicyValue, Settings
from gui.settings.settings_fields import ErrorList, FieldErrors, sentence
from gui.theme import icons

Which = Callable[[str], str | None]


MARGINS = (16, 14, 16, 8)
"""Around every page's content (the tab widget runs in document mode, without a frame)."""


class Page(QWidget):
    """Base of the pages: the ``changed`` signal and an error marker."""

    changed = Signal()
    """Any edit (GUI thread): the dialog validates again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.errors = FieldErrors()

    def load(self, settings: Settings) -> None:
        raise NotImplementedError

    def contribute(self, data: dict[str, Any]) -> None:
        raise NotImplementedError

    def extra_errors(self) -> ErrorList:
        return []

    def field_for(self, loc: tuple[Any, ...]) -> QWidget | None:
        return None

    def show_errors(self, errors: ErrorList) -> list[str]:
        self.errors.clear()
        unplaced = []
        for loc, message in errors:
            field = self.field_for(loc)
            if field is not None:
                self.errors.mark(field, sentence(message))
            elif loc and self.owns(loc):
                unplaced.append(sentence(message))
        return unplaced

    def owns(self, loc: tuple[Any, ...]) -> bool:
        return False


# -- models -----------------------------------------------------------------------------------

BACKENDS: list[tuple[str, str | None]] = [
    ("Automatic: a provider, else pi, else Claude Code", None),
    ("Baton's own agent loop (OpenAI-compatible provider)", "openai"),
    ("pi", "pi"),
    ("Claude Code", "claude"),
]


class ModelsPage(Page):
    """Default provider, model and backend; model aliases."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._provider_names: list[str] = []
        self.provider_combo = QComboBox()
        self.model_combo = QComboBox()
        self.model_combo.setEditable(True)
        self.model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        line = self.model_combo.lineEdit()
        if line is not None:
            line.setPlaceholderText("e.g. qwen3:8b (Test connection lists what the server has)")
        self.backend_combo = QComboBox()
        for label, value in BACKENDS:
            self.backend_combo.addItem(label, value)
        self.aliases = QTableWidget(0, 2)
        self.aliases.setObjectName("ModelAliases")
        self.aliases.setHorizontalHeaderLabels(["Name in agent files", "Name the provider uses"])
        self.aliases.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.aliases.verticalHeader().hide()
        self.add_alias_button = QPushButton(icons.icon("add"), "Add alias")
        self.remove_alias_button = QPushButton(icons.icon("delete"), "Remove")
        self.add_alias_button.clicked.connect(self.add_alias)
        self.remove_alias_button.clicked.connect(self._remove_alias)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.errors.add_row(form, "Default provider", self.provider_combo)
        self.errors.add_row(form, "Default model", self.model_combo)
        self.errors.add_row(form, "Default backend", self.backend_combo)
        alias_note = QLabel(
            "Aliases let an agent file's model (e.g. claude-sonnet-4-5) run as what your "
            "provider calls it."
        )
        alias_note.setWordWrap(True)
        alias_note.setObjectName("Secondary")
        alias_buttons = QHBoxLayout()
        alias_buttons.addWidget(self.add_alias_button)
        alias_buttons.addWidget(self.remove_alias_button)
        alias_buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addLayout(form)
        layout.addSpacing(8)
        layout.addWidget(QLabel("<b>Model aliases</b>"))
        layout.addWidget(alias_note)
        layout.addWidget(self.aliases, 1)
        layout.addWidget(self.errors.label_for(self.aliases))
        layout.addLayout(alias_buttons)

        self.provider_combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.model_combo.currentTextChanged.connect(lambda _t: self.changed.emit())
        self.backend_combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.aliases.itemChanged.connect(lambda _item: self.changed.emit())

    def load(self, settings: Settings) -> None:
        self._set_providers([p.name for p in settings.providers], settings.default_provider)
        self.model_combo.clear()
        self.model_combo.setEditText(settings.default_model or "")
        index = max(0, self.backend_combo.findData(settings.default_backend))
        self.backend_combo.setCurrentIndex(index if settings.default_backend else 0)
        self.aliases.setRowCount(0)
        for alias, target in settings.model_aliases.items():
            self.add_alias(alias, target)

    def set_provider_names(self, names: list[str]) -> None:
        """Follow the providers page (names added, renamed or removed)."""
        current = self.provider_combo.currentData()
        self._set_providers(names, current)

    def add_models(self, models: list[str], *, choose_first: bool = True) -> None:
        """Offer the models a provider lists, keeping what is typed. With nothing typed, the
        only model is chosen; the first of several only when the person asked (a test)."""
        text = self.model_combo.currentText()
        self.model_combo.blockSignals(True)
        self.model_combo.clear()
        self.model_combo.addItems(models)
        choose = bool(models) and (choose_first or len(models) == 1)
        self.model_combo.setEditText(text or (models[0] if choose else ""))
        self.model_combo.blockSignals(False)
        self.changed.emit()

    def add_alias(self, alias: str = "", target: str = "") -> None:
        row = self.aliases.rowCount()
        self.aliases.blockSignals(True)
        self.aliases.insertRow(row)
        self.aliases.setItem(row, 0, QTableWidgetItem(alias))
        self.aliases.setItem(row, 1, QTableWidgetItem(target))
        self.aliases.blockSignals(False)
        if not alias:
            self.aliases.setCurrentCell(row, 0)
        self.changed.emit()

    def contribute(self, data: dict[str, Any]) -> None:
        data["default_provider"] = self.provider_combo.currentData()
        data["default_model"] = self.model_combo.currentText().strip() or None
        data["default_backend"] = self.backend_combo.currentData()
        data["model_aliases"] = {alias: target for alias, target in self._alias_rows() if alias}

    def extra_errors(self) -> ErrorList:
        errors: ErrorList = []
        chosen = self.provider_combo.currentData()
        if chosen is not None and chosen not in self._provider_names:
            errors.append((("default_provider",), "No provider has this name."))
        seen: set[str] = set()
        for row, (alias, target) in enumerate(self._alias_rows()):
            if bool(alias) != bool(target):
                errors.append(
                    (("model_aliases", row), f"Row {row + 1} needs both names (or neither).")
                )
            elif alias in seen:
                errors.append((("model_aliases", row), f"'{alias}' is listed twice."))
            seen.add(alias)
        return errors

    def field_for(self, loc: tuple[Any, ...]) -> QWidget | None:
        return {
            "default_provider": self.provider_combo,
            "default_model": self.model_combo,
            "default_backend": self.backend_combo,
            "model_aliases": self.aliases,
        }.get(str(loc[0]) if loc else "")

    def _alias_rows(self) -> list[tuple[str, str]]:
        rows = []
        for row in range(self.aliases.rowCount()):
            cells = [self.aliases.item(row, column) for column in (0, 1)]
            alias, target = (cell.text().strip() if cell is not None else "" for cell in cells)
            rows.append((alias, target))
        return rows

    def _remove_alias(self) -> None:
        row = self.aliases.currentRow()
        if row >= 0:
            self.aliases.removeRow(row)
            self.changed.emit()

    def _set_providers(self, names: list[str], current: str | None) -> None:
        self.provider_combo.blockSignals(True)
        self.provider_combo.clear()
        self.provider_combo.addItem("The first provider in the list", None)
        for name in names:
            self.provider_combo.addItem(name, name)
        if current is not None and current not in names:
            self.provider_combo.addItem(f"{current} (no such provider)", current)
        self.provider_combo.setCurrentIndex(max(0, self.provider_combo.findData(current)))
        self.provider_combo.blockSignals(False)
        self._provider_names = names


# -- permissions ------------------------------------------------------------------------------

POLICY_LABELS = {
    "read": "read — read files",
    "grep": "grep — search file contents",
    "find": "find — find files by name",
    "ls": "ls — list folders",
    "bash": "bash — run shell commands",
    "edit": "edit — change part of a file",
    "write": "write — create or overwrite a file",
    "document": "document — create, read and list documents",
    "document.update": "document update — change a document this run created",
    "document.update_other": "document update — change anyone else's document",
    "document.retype": "document retype — turn a document into a memory or back",
    "document.delete": "document delete — remove a document",
}
CHOICES: tuple[PolicyValue, ...] = ("allow", "ask", "deny")


class PermissionsPage(Page):
    """allow / ask / deny per tool, with the defaults shown and a reset."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combos: dict[str, QComboBox] = {}
        self._extra: dict[str, PolicyValue] = {}
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(6)
        for row, key in enumerate(DEFAULT_POLICY):
            combo = QComboBox()
            combo.addItems(CHOICES)
            combo.currentTextChanged.connect(lambda _t: self._refresh())
            self.combos[key] = combo
            default = QLabel(f"default: {DEFAULT_POLICY[key]}")
            default.setObjectName("Secondary")
            grid.addWidget(QLabel(POLICY_LABELS.get(key, key)), row, 0)
            grid.addWidget(combo, row, 1)
            grid.addWidget(default, row, 2)
        grid.setColumnStretch(3, 1)
        self.reset_button = QPushButton(icons.icon("reload"), "Reset to defaults")
        self.reset_button.clicked.connect(self.reset)
        note = QLabel(
            "“ask” pauses the step and shows the approval dialog; “deny” refuses without asking "
            "(the agent is told why)."
        )
        note.setWordWrap(True)
        note.setObjectName("Secondary")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addWidget(note)
        layout.addLayout(grid)
        buttons = QHBoxLayout()
        buttons.addWidget(self.reset_button)
        buttons.addStretch(1)
        layout.addSpacing(6)
        layout.addLayout(buttons)
        layout.addStretch(1)

    def load(self, settings: Settings) -> None:
        policy = settings.effective_policy()
        self._extra = {k: v for k, v in settings.policy.items() if k not in DEFAULT_POLICY}
        for key, combo in self.combos.items():
            combo.setCurrentText(policy[key])

    def reset(self) -> None:
        for key, combo in self.combos.items():
            combo.setCurrentText(DEFAULT_POLICY[key])

    def contribute(self, data: dict[str, Any]) -> None:
        overrides = {
            key: combo.currentText()
            for key, combo in self.combos.items()
            if combo.currentText() != DEFAULT_POLICY[key]
        }
        data["policy"] = {**overrides, **self._extra}

    def _refresh(self) -> None:
        for key, combo in self.combos.items():
            font = combo.font()
            font.setBold(combo.currentText() != DEFAULT_POLICY[key])
            combo.setFont(font)
        self.changed.emit()
