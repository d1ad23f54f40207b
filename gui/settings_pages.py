"""Settings pages other than providers: models, permissions, tools (pi, claude), limits, trust.

Every page follows the same small protocol, which :class:`gui.settings_dialog.SettingsDialog`
drives: ``load(settings)`` fills the widgets, ``contribute(data)`` writes the page's part of
the dict that is validated as :class:`core.settings.Settings`, ``extra_errors()`` adds the checks
pydantic cannot make (duplicates, a program that is not there), and ``show_errors(errors)``
marks the page's fields, returning messages it had no field for. ``changed`` fires on edits.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.settings import DEFAULT_POLICY, Limits, PolicyValue, Settings
from core.trust import TrustStore
from gui import icons
from gui.settings_fields import ErrorList, FieldErrors, sentence

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

    def add_models(self, models: list[str]) -> None:
        """Offer the models a connection test found, keeping what is typed."""
        text = self.model_combo.currentText()
        self.model_combo.blockSignals(True)
        self.model_combo.clear()
        self.model_combo.addItems(models)
        self.model_combo.setEditText(text or (models[0] if models else ""))
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
    "document.update": "document update — change a document",
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


# -- tools ------------------------------------------------------------------------------------


class ProgramField(QWidget):
    """A program path: a line edit, a file picker, and where PATH would find it."""

    edited = Signal()

    def __init__(self, program: str, which: Which, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.program = program
        self._which = which
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(f"{program} (found on PATH)")
        self.browse_button = QPushButton(icons.icon("folder"), "Browse…")
        self.browse_button.clicked.connect(self._browse)
        self.hint = QLabel()
        self.hint.setObjectName("Secondary")
        self.hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.browse_button)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addLayout(row)
        column.addWidget(self.hint)
        self.edit.textChanged.connect(self._changed)
        self._update_hint()

    def value(self) -> str | None:
        return self.edit.text().strip() or None

    def set_value(self, value: str | None) -> None:
        self.edit.setText(value or "")

    def problem(self) -> str | None:
        value = self.value()
        if value is None:
            return None
        path = Path(value).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return None
        if os.sep not in value and self._which(value):
            return None
        return f"No program at {value}."

    def _changed(self) -> None:
        self._update_hint()
        self.edited.emit()

    def _update_hint(self) -> None:
        found = self._which(self.program)
        if self.value():
            self.hint.setText(f"On PATH: {found}" if found else f"{self.program} is not on PATH.")
        else:
            self.hint.setText(
                f"Found on PATH: {found}"
                if found
                else f"{self.program} is not on PATH: give the full path to use it."
            )

    def _browse(self) -> None:
        start = str(Path(self.value() or "~").expanduser().parent)
        path, _ = QFileDialog.getOpenFileName(self, f"Choose the {self.program} program", start)
        if path:
            self.edit.setText(path)


class ToolsPage(Page):
    """Where the pi and Claude Code programs are."""

    def __init__(self, which: Which = shutil.which, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pi = ProgramField("pi", which)
        self.pi_pass_model = QCheckBox("Pass each agent's model to pi (--model)")
        self.claude = ProgramField("claude", which)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.errors.add_row(form, "pi program", self.pi)
        form.addRow("", self.pi_pass_model)
        self.errors.add_row(form, "Claude Code program", self.claude)
        note = QLabel(
            "Agents with backend: pi or backend: claude run through these programs, with their "
            "own logins and settings."
        )
        note.setWordWrap(True)
        note.setObjectName("Secondary")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addWidget(note)
        layout.addLayout(form)
        layout.addStretch(1)
        self.pi.edited.connect(self.changed)
        self.claude.edited.connect(self.changed)
        self.pi_pass_model.toggled.connect(lambda _c: self.changed.emit())

    def load(self, settings: Settings) -> None:
        self.pi.set_value(settings.pi_path)
        self.pi_pass_model.setChecked(settings.pi_pass_model)
        self.claude.set_value(settings.claude_path)

    def contribute(self, data: dict[str, Any]) -> None:
        data["pi_path"] = self.pi.value()
        data["pi_pass_model"] = self.pi_pass_model.isChecked()
        data["claude_path"] = self.claude.value()

    def extra_errors(self) -> ErrorList:
        errors: ErrorList = []
        for key, field in (("pi_path", self.pi), ("claude_path", self.claude)):
            problem = field.problem()
            if problem:
                errors.append(((key,), problem))
        return errors

    def field_for(self, loc: tuple[Any, ...]) -> QWidget | None:
        key = str(loc[0]) if loc else ""
        return {"pi_path": self.pi.edit, "claude_path": self.claude.edit}.get(key)


# -- limits -----------------------------------------------------------------------------------

LIMIT_LABELS: dict[str, tuple[str, str]] = {
    "max_turns": ("Turns per step", ""),
    "step_timeout_s": ("Step time limit", " s"),
    "bash_timeout_s": ("bash command time limit", " s"),
    "tool_output_chars": ("Tool output kept", " chars"),
    "document_max_chars": ("Document size limit", " chars"),
    "document_page_size": ("Documents per list page", ""),
    "document_read_tokens": ("Document read budget", " tokens"),
    "connect_timeout_s": ("Connect timeout", " s"),
    "silence_timeout_s": ("Silence timeout (no data)", " s"),
    "max_retries": ("Retries after 429 / 5xx", ""),
}


class LimitsPage(Page):
    """One spin box per :class:`core.settings.Limits` field; pydantic checks the ranges."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spins: dict[str, QSpinBox | QDoubleSpinBox] = {}
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        for name, info in Limits.model_fields.items():
            label, suffix = LIMIT_LABELS.get(name, (name, ""))
            spin: QSpinBox | QDoubleSpinBox
            if info.annotation is int:
                spin = QSpinBox()
                spin.setRange(0, 100_000_000)
                spin.setGroupSeparatorShown(True)
            else:
                spin = QDoubleSpinBox()
                spin.setRange(0, 1_000_000)
                spin.setDecimals(1)
            spin.setSuffix(suffix)
            spin.setMinimumWidth(170)
            if name == "step_timeout_s":
                spin.setSpecialValueText("No limit")
            spin.valueChanged.connect(lambda _v: self.changed.emit())
            self.spins[name] = spin
            self.errors.add_row(form, label, spin)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addLayout(form)
        layout.addStretch(1)

    def load(self, settings: Settings) -> None:
        for name, spin in self.spins.items():
            value = getattr(settings.limits, name)
            spin.setValue(0 if value is None else value)

    def contribute(self, data: dict[str, Any]) -> None:
        values: dict[str, Any] = {name: spin.value() for name, spin in self.spins.items()}
        if not values["step_timeout_s"]:
            values["step_timeout_s"] = None
        data["limits"] = values

    def field_for(self, loc: tuple[Any, ...]) -> QWidget | None:
        if len(loc) >= 2 and loc[0] == "limits":
            return self.spins.get(str(loc[1]))
        return None


# -- trusted projects -------------------------------------------------------------------------


class TrustPage(Page):
    """The projects whose own agents may run; revocations apply when the dialog saves."""

    def __init__(self, store: TrustStore | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store or TrustStore()
        self.revoked: list[str] = []
        self.tree = QTreeWidget()
        self.tree.setObjectName("TrustedProjects")
        self.tree.setHeaderLabels(["Project folder", "Trusted since"])
        self.tree.setRootIsDecorated(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.revoke_button = QPushButton(icons.icon("delete"), "Revoke")
        self.revoke_button.clicked.connect(self.revoke_selected)
        note = QLabel(
            "A project's own agents and presets run only in trusted folders; Baton asks again "
            "whenever those files change."
        )
        note.setWordWrap(True)
        note.setObjectName("Secondary")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.revoke_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addWidget(note)
        layout.addWidget(self.tree, 1)
        layout.addLayout(buttons)

    def load(self, settings: Settings) -> None:
        self.revoked = []
        self.tree.clear()
        for record in self.store.records():
            item = QTreeWidgetItem([record.folder, record.trusted_at.replace("T", " ")])
            item.setIcon(0, icons.icon("lock"))
            self.tree.addTopLevelItem(item)
        self.revoke_button.setEnabled(self.tree.topLevelItemCount() > 0)

    def contribute(self, data: dict[str, Any]) -> None:
        """Trust lives in its own file, not in config.yaml."""

    def revoke_selected(self) -> None:
        item = self.tree.currentItem()
        if item is None:
            return
        self.revoked.append(item.text(0))
        self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(item))
        self.revoke_button.setEnabled(self.tree.topLevelItemCount() > 0)
        self.changed.emit()

    def apply(self) -> None:
        for folder in self.revoked:
            self.store.revoke(folder)
        self.revoked = []
