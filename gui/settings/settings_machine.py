"""Settings pages for the machine: the pi and Claude Code programs, limits, trusted projects.

Same page protocol as :mod:`gui.settings.settings_pages` (``load``, ``contribute``,
``extra_errors``,
``show_errors``, ``changed``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.config.program_locations import locate_program, usual_folders
from core.config.settings import Limits, Settings
from core.safety.sandbox import sandbox_status
from core.safety.trust import TrustStore
from gui.settings.settings_fields import ErrorList
from gui.settings.settings_pages import MARGINS, Page, Which
from gui.theme import icons
from gui.widgets import PlainLabel

# -- tools ------------------------------------------------------------------------------------


class ProgramField(QWidget):
    """A program path: a line edit, a file picker, and where PATH would find it."""

    edited = Signal()

    def __init__(self, program: str, which: Which, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.program = program
        self._which = which
        self.edit = QLineEdit()
        self.edit.setPlaceholderText(f"{program} (found automatically)")
        self.browse_button = QPushButton(icons.icon("folder"), "Browse…")
        self.browse_button.clicked.connect(self._browse)
        self.hint = PlainLabel()
        self.hint.setObjectName("Secondary")
        self.hint.setWordWrap(True)  # a long path wraps rather than widen the dialog
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
        if self.value():
            found = self._which(self.program)
            self.hint.setText(f"On PATH: {found}" if found else f"{self.program} is not on PATH.")
            return
        # The usual install folders count too (a desktop start lacks the profile's PATH),
        # unless a test replaced the lookup.
        located = locate_program(
            self.program,
            which=self._which,
            folders=usual_folders if self._which is shutil.which else None,
        )
        if located is None:
            self.hint.setText(
                f"{self.program} is not on PATH or in the usual install folders: "
                "give the full path to use it."
            )
            return
        where = {
            "path": "on PATH",
            "login shell": "on your login shell's PATH",
            "usual folder": "in a usual install folder",
        }.get(located.where, "")
        self.hint.setText(f"Found {where}: {located.path}")

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
        self.sandbox = QCheckBox("Run bash in a sandbox")
        self.network = QCheckBox("Allow network access inside the sandbox")
        self.sandbox_state = QLabel()
        self.sandbox_state.setObjectName("Secondary")
        self.sandbox_state.setWordWrap(True)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.errors.add_row(form, "pi program", self.pi)
        form.addRow("", self.pi_pass_model)
        self.errors.add_row(form, "Claude Code program", self.claude)
        form.addRow("bash", self.sandbox)
        form.addRow("", self.network)
        form.addRow("", self.sandbox_state)
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
        self.sandbox.toggled.connect(self._sandbox_toggled)
        self.network.toggled.connect(lambda _c: self.changed.emit())

    def load(self, settings: Settings) -> None:
        self.pi.set_value(settings.pi_path)
        self.pi_pass_model.setChecked(settings.pi_pass_model)
        self.claude.set_value(settings.claude_path)
        self.sandbox.setChecked(settings.sandbox.enabled)
        self.network.setChecked(settings.sandbox.network)
        self._show_sandbox_state()

    def contribute(self, data: dict[str, Any]) -> None:
        data["pi_path"] = self.pi.value()
        data["pi_pass_model"] = self.pi_pass_model.isChecked()
        data["claude_path"] = self.claude.value()
        data["sandbox"] = {
            "enabled": self.sandbox.isChecked(),
            "network": self.network.isChecked(),
        }

    def _sandbox_toggled(self, _checked: bool) -> None:
        self._show_sandbox_state()
        self.changed.emit()

    def _show_sandbox_state(self) -> None:
        self.network.setEnabled(self.sandbox.isChecked())
        status = sandbox_status(self.sandbox.isChecked())
        self.sandbox_state.setText(
            "Sandboxed bash writes only in the working folder and a private temp folder, cannot "
            "see Baton's own folders, and nothing it starts outlives it.\n"
            f"Here, bash is {status.describe()}."
        )

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
    "max_tool_calls_per_turn": ("Tool calls run per answer", ""),
    "max_answer_bytes": ("Largest model answer", " bytes"),
    "step_timeout_s": ("Step time limit", " s"),
    "bash_timeout_s": ("bash command time limit", " s"),
    "tool_output_chars": ("Tool output kept", " chars"),
    "document_max_chars": ("Document size limit", " chars"),
    "document_page_size": ("Documents per list page", ""),
    "document_read_tokens": ("Document read budget", " tokens"),
    "connect_timeout_s": ("Connect timeout", " s"),
    "silence_timeout_s": ("Silence timeout (no data)", " s"),
    "max_retries": ("Retries after 429 / 5xx", ""),
    "handoff_chars": ("Answer handed to the next step", " chars"),
}


class LimitsPage(Page):
    """One spin box per :class:`core.config.settings.Limits` field; pydantic checks the ranges."""

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
