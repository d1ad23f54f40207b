"""Every question Baton asks the user, in one object.

Views never build message boxes themselves: they call a method here and get a plain answer
(an enum or a bool). That keeps the wording consistent and gives tests one seam: answer the
real dialog (each has an object name and labelled buttons) or replace a method.

All methods run modal dialogs (``exec()``), so they must be called from ordinary slots, never
from inside a running coroutine (see :mod:`gui.qt_asyncio`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:  # what a save is checked against is not needed to open the window
    from core.definitions.checks import Problem

K = TypeVar("K")
Label = str | QMessageBox.StandardButton
Choice = tuple[K, Label, QMessageBox.ButtonRole]
"""``(answer, button label or standard button, role)``; the role is ignored for standard
buttons, which bring their own."""

ANY = QMessageBox.ButtonRole.AcceptRole


def ask(
    parent: QWidget | None,
    name: str,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    informative: str,
    choices: Sequence[Choice[K]],
    *,
    default: K,
    escape: K | None = None,
) -> K | None:
    """Show one modal question and return the answer of the button clicked (None when the
    box was closed another way). The single place message boxes are built, so every question
    has an object name and labelled buttons that tests (and people) can find."""
    box = QMessageBox(parent)
    box.setObjectName(name)
    box.setIcon(icon)
    box.setWindowTitle(title)
    box.setText(text)
    if informative:
        box.setInformativeText(informative)
    buttons = {}
    for answer, label, role in choices:
        button = (
            box.addButton(label)
            if isinstance(label, QMessageBox.StandardButton)
            else (box.addButton(label, role))
        )
        buttons[answer] = button
        if answer == default:
            box.setDefaultButton(button)
        if escape is not None and answer == escape:
            box.setEscapeButton(button)
    box.exec()
    clicked = box.clickedButton()
    return next((answer for answer, button in buttons.items() if button is clicked), None)


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

    def resolve_conflict(self, path: Path, deleted: bool = False) -> ConflictChoice:
        """The file changed (or vanished) on disk since it was opened; what now?"""
        cancel: Choice[ConflictChoice] = (
            ConflictChoice.CANCEL,
            QMessageBox.StandardButton.Cancel,
            ANY,
        )
        if deleted:
            answer = ask(
                self._parent,
                "ConflictPrompt",
                QMessageBox.Icon.Warning,
                "File deleted on disk",
                f"“{path.name}” was deleted by another program since you opened it.",
                "Save recreates it with your text.",
                [
                    (ConflictChoice.OVERWRITE, "Save anyway", QMessageBox.ButtonRole.AcceptRole),
                    cancel,
                ],
                default=ConflictChoice.CANCEL,
            )
        else:
            answer = ask(
                self._parent,
                "ConflictPrompt",
                QMessageBox.Icon.Warning,
                "File changed on disk",
                f"“{path.name}” was changed by another program since you opened it.",
                "Overwrite it with your version, or reload it and lose your edits?",
                [
                    (ConflictChoice.OVERWRITE, "Overwrite", QMessageBox.ButtonRole.DestructiveRole),
                    (ConflictChoice.RELOAD, "Reload from disk", QMessageBox.ButtonRole.ResetRole),
                    cancel,
                ],
                default=ConflictChoice.CANCEL,
            )
        return answer or ConflictChoice.CANCEL

    def confirm_save_invalid(self, path: Path, problem: Problem) -> bool:
        """Saving text that will not load as a definition: allowed, but only on purpose."""
        return self.confirm(
            "SaveInvalidPrompt",
            "Save anyway?",
            f"“{path.name}” has an error and will not load until it is fixed.",
            f"{problem.describe()}\n\nSave it anyway and fix it later?",
            "Save anyway",
            QMessageBox.ButtonRole.AcceptRole,
        )

    def unsaved_changes(self, title: str) -> UnsavedChoice:
        answer = ask(
            self._parent,
            "UnsavedPrompt",
            QMessageBox.Icon.Question,
            "Unsaved changes",
            f"Save your changes to “{title}”?",
            "Your edits are lost if you don't save them.",
            [
                (UnsavedChoice.SAVE, QMessageBox.StandardButton.Save, ANY),
                (UnsavedChoice.DISCARD, "Don't save", QMessageBox.ButtonRole.DestructiveRole),
                (UnsavedChoice.CANCEL, QMessageBox.StandardButton.Cancel, ANY),
            ],
            default=UnsavedChoice.SAVE,
            escape=UnsavedChoice.CANCEL,
        )
        return answer or UnsavedChoice.CANCEL

    def confirm_delete(self, name: str, path: Path, noun: str = "agent") -> bool:
        return self.confirm(
            "DeletePrompt",
            f"Delete {noun}",
            f"Delete the {noun} “{name}”?",
            f"The file {path} is moved to the trash.",
            "Delete",
            QMessageBox.ButtonRole.DestructiveRole,
        )

    def confirm_delete_permanently(self, path: Path) -> bool:
        """The trash is not available: deleting now cannot be undone."""
        return self.confirm(
            "DeletePermanentlyPrompt",
            "Delete permanently?",
            f"“{path.name}” cannot be moved to the trash.",
            "Delete it permanently? This cannot be undone.",
            "Delete permanently",
            QMessageBox.ButtonRole.DestructiveRole,
        )

    def confirm(
        self,
        name: str,
        title: str,
        text: str,
        informative: str,
        action: str,
        role: QMessageBox.ButtonRole,
    ) -> bool:
        """A yes/no question whose safe answer (Cancel) is the default."""
        answer = ask(
            self._parent,
            name,
            QMessageBox.Icon.Warning,
            title,
            text,
            informative,
            [(True, action, role), (False, QMessageBox.StandardButton.Cancel, ANY)],
            default=False,
        )
        return bool(answer)

    def show_error(self, title: str, message: str) -> None:
        ask(
            self._parent,
            "ErrorMessage",
            QMessageBox.Icon.Critical,
            title,
            message,
            "",
            [(None, QMessageBox.StandardButton.Ok, ANY)],
            default=None,
        )
