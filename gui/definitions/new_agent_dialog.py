"""The "New agent" dialog: a name, an optional description and where the file goes.

A name only has to be free in the chosen scope: a user agent named like a built-in one is
how a user overrides it.

The target path is shown live, so the user knows which file will be created before saying
yes; Create stays disabled while the name is unusable (the reason is shown under the field).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from core.definitions import agent_files
from gui.widgets import ElidedLabel, PlainLabel

Scope = Literal["user", "project"]


@dataclass(frozen=True)
class NewAgentRequest:
    name: str
    description: str
    scope: Scope
    path: Path


class NewAgentDialog(QDialog):
    def __init__(
        self,
        working_folder: Path,
        taken_names: Mapping[Scope, Iterable[str]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("NewAgentDialog")
        self.setWindowTitle("New agent")
        self.setMinimumWidth(460)
        self._taken = {scope: list(names) for scope, names in taken_names.items()}
        self._folders: dict[Scope, Path] = {
            "user": agent_files.user_agents_dir(),
            "project": agent_files.project_agents_dir(working_folder),
        }

        self.name_field = QLineEdit()
        self.name_field.setObjectName("NameField")
        self.name_field.setPlaceholderText("e.g. test-writer")
        self.description_field = QLineEdit()
        self.description_field.setObjectName("DescriptionField")
        self.description_field.setPlaceholderText("What this agent does, in one line")
        self.user_scope = QRadioButton("User — available in every project")
        self.project_scope = QRadioButton("Project — only in this project")
        self.user_scope.setChecked(True)
        scopes = QButtonGroup(self)
        scopes.addButton(self.user_scope)
        scopes.addButton(self.project_scope)
        self.problem = PlainLabel()
        self.problem.setObjectName("FieldProblem")
        self.problem.setWordWrap(True)
        # Always two lines tall (empty when fine): the longest message fits without clipping
        # and the dialog does not jump while typing.
        self.problem.setMinimumHeight(2 * self.problem.fontMetrics().lineSpacing())
        self.target = ElidedLabel()
        self.target.setObjectName("Secondary")

        scope_box = QVBoxLayout()
        scope_box.setSpacing(4)
        scope_box.addWidget(self.user_scope)
        scope_box.addWidget(self.project_scope)

        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.addRow("Name:", self.name_field)
        form.addRow("", self.problem)
        form.addRow("Description:", self.description_field)
        form.addRow("Save in:", scope_box)
        target_row = QHBoxLayout()
        target_row.addWidget(self.target)
        form.addRow("File:", target_row)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.create_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.create_button.setText("Create")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.addLayout(form)
        layout.addSpacing(6)
        layout.addWidget(self.buttons)

        self.name_field.textChanged.connect(self._update)
        self.user_scope.toggled.connect(self._update)
        self._update()

    def scope(self) -> Scope:
        return "project" if self.project_scope.isChecked() else "user"

    def target_path(self) -> Path:
        stem = agent_files.file_stem(self.name_field.text() or "agent")
        return agent_files.unique_path(self._folders[self.scope()], stem)

    def request(self) -> NewAgentRequest:
        return NewAgentRequest(
            name=self.name_field.text().strip(),
            description=self.description_field.text().strip(),
            scope=self.scope(),
            path=self.target_path(),
        )

    def _update(self) -> None:
        problem = agent_files.name_problem(
            self.name_field.text(), self._taken.get(self.scope(), [])
        )
        typed = bool(self.name_field.text())
        self.problem.setText(problem if typed and problem else "")
        self.create_button.setEnabled(problem is None)
        self.target.set_full_text(str(self.target_path()))


def ask_new_agent(
    parent: QWidget | None, working_folder: Path, taken_names: Mapping[Scope, Iterable[str]]
) -> NewAgentRequest | None:
    """Run the dialog; the request when the user pressed Create, else None."""
    dialog = NewAgentDialog(working_folder, taken_names, parent)
    try:
        if dialog.exec() == QDialog.DialogCode.Accepted:
            return dialog.request()
        return None
    finally:
        dialog.deleteLater()
