"""Every question Baton asks the user, in one object.

Views never build message boxes themselves: they call a method here and get a plain answer
(an enum or a bool). That keeps the wording consistent and gives tests one seam: answer the
real dialog (each has an object name and labelled buttons) or replace a method.

All methods run modal dialogs (``exec()``), so they must be called from ordinary slots, never
from inside a running coroutine (see :mod:`gui.qt_asyncio`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

from gui.new_agent_dialog import NewAgentRequest, Scope, ask_new_agent
from gui.validators import Problem


class ConflictChoice(enum.Enum):
    OVERWRITE = "overwrite"
    RELOAD = "reload"
    CANCEL = "cancel"


class UnsavedChoice(enum.Enum):
    SAVE = "save"
    DISCARD = "discard"
    CANCEL = "cancel"


class Prompts:
    """Modal questions, parented to ``parent`` (the main window)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self._parent = parent

    def _box(
        self, name: str, icon: QMessageBox.Icon, title: str, text: str, informative: str = ""
    ) -> QMessageBox:
        box = QMessageBox(self._parent)
        box.setObjectName(name)
        box.setIcon(icon)
        box.setWindowTitle(title)
        box.setText(text)
        if informative:
            box.setInformativeText(informative)
        return box

    def resolve_conflict(self, path: Path, deleted: bool = False) -> ConflictChoice:
        """The file changed (or vanished) on disk since it was opened; what now?"""
        if deleted:
            box = self._box(
                "ConflictPrompt",
                QMessageBox.Icon.Warning,
                "File deleted on disk",
                f"“{path.name}” was deleted by another program since you opened it.",
                "Save recreates it with your text.",
            )
            overwrite = box.addButton("Save anyway", QMessageBox.ButtonRole.AcceptRole)
            reload = None
        else:
            box = self._box(
                "ConflictPrompt",
                QMessageBox.Icon.Warning,
                "File changed on disk",
                f"“{path.name}” was changed by another program since you opened it.",
                "Overwrite it with your version, or reload it and lose your edits?",
            )
            overwrite = box.addButton("Overwrite", QMessageBox.ButtonRole.DestructiveRole)
            reload = box.addButton("Reload from disk", QMessageBox.ButtonRole.ResetRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        clicked = box.clickedButton()
        if clicked is overwrite:
            return ConflictChoice.OVERWRITE
        if reload is not None and clicked is reload:
            return ConflictChoice.RELOAD
        return ConflictChoice.CANCEL

    def confirm_save_invalid(self, path: Path, problem: Problem) -> bool:
        """Saving text that will not load as a definition: allowed, but only on purpose."""
        box = self._box(
            "SaveInvalidPrompt",
            QMessageBox.Icon.Warning,
            "Save anyway?",
            f"“{path.name}” has an error and will not load until it is fixed.",
            f"{problem.describe()}\n\nSave it anyway and fix it later?",
        )
        save = box.addButton("Save anyway", QMessageBox.ButtonRole.AcceptRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return box.clickedButton() is save

    def unsaved_changes(self, title: str) -> UnsavedChoice:
        box = self._box(
            "UnsavedPrompt",
            QMessageBox.Icon.Question,
            "Unsaved changes",
            f"Save your changes to “{title}”?",
            "Your edits are lost if you don't save them.",
        )
        save = box.addButton(QMessageBox.StandardButton.Save)
        discard = box.addButton("Don't save", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save)
        box.setEscapeButton(cancel)
        box.exec()
        clicked = box.clickedButton()
        if clicked is save:
            return UnsavedChoice.SAVE
        if clicked is discard:
            return UnsavedChoice.DISCARD
        return UnsavedChoice.CANCEL

    def confirm_delete(self, name: str, path: Path) -> bool:
        box = self._box(
            "DeletePrompt",
            QMessageBox.Icon.Warning,
            "Delete agent",
            f"Delete the agent “{name}”?",
            f"The file {path} is moved to the trash.",
        )
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return box.clickedButton() is delete

    def new_agent(
        self, working_folder: Path, taken_names: Mapping[Scope, Iterable[str]]
    ) -> NewAgentRequest | None:
        """Ask for a new agent's name, description and scope (None: cancelled)."""
        return ask_new_agent(self._parent, working_folder, taken_names)

    def confirm_delete_permanently(self, path: Path) -> bool:
        """The trash is not available: deleting now cannot be undone."""
        box = self._box(
            "DeletePermanentlyPrompt",
            QMessageBox.Icon.Warning,
            "Delete permanently?",
            f"“{path.name}” cannot be moved to the trash.",
            "Delete it permanently? This cannot be undone.",
        )
        delete = box.addButton("Delete permanently", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return box.clickedButton() is delete

    def show_error(self, title: str, message: str) -> None:
        box = self._box("ErrorMessage", QMessageBox.Icon.Critical, title, message)
        box.addButton(QMessageBox.StandardButton.Ok)
        box.exec()
