"""The questions the document browser asks: conflicts, deletes, unsaved edits.

Same contract as :mod:`gui.prompts` (every dialog has an object name and labelled buttons, so
tests answer the real dialog as a person would), kept beside the browser because the wording
is about documents and agents, not files. Modal (``exec()``): call from ordinary slots only.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from core.documents import Document, DocumentSummary
from gui.documents_table import TYPE_LABELS, absolute_time, run_text
from gui.prompts import ConflictChoice, Prompts, UnsavedChoice

KEEP_MINE = "Keep mine (overwrite)"
TAKE_THEIRS = "Take theirs (reload)"


def describe(document: DocumentSummary) -> str:
    """``memory #12 “Login flow”``, how prompts name a document."""
    return (
        f"{TYPE_LABELS.get(document.type, document.type).lower()} #{document.id} “{document.title}”"
    )


class DocumentPrompts:
    """Modal questions parented to ``parent``; :attr:`prompts` asks the shared ones."""

    def __init__(self, parent: QWidget | None, prompts: Prompts | None = None) -> None:
        self._parent = parent
        self.prompts = prompts or Prompts(parent)

    def _box(
        self, name: str, icon: QMessageBox.Icon, title: str, text: str, info: str
    ) -> QMessageBox:
        box = QMessageBox(self._parent)
        box.setObjectName(name)
        box.setIcon(icon)
        box.setWindowTitle(title)
        box.setText(text)
        box.setInformativeText(info)
        return box

    def resolve_conflict(self, theirs: Document) -> ConflictChoice:
        """The document was saved by someone else (an agent) while it was being edited."""
        who = "a person" if theirs.provenance.by_person else run_text(theirs.provenance)
        box = self._box(
            "DocumentConflictPrompt",
            QMessageBox.Icon.Warning,
            "Document changed meanwhile",
            f"“{theirs.title}” was changed while you were editing it.",
            f"It is now at version {theirs.version} (last written {absolute_time(theirs.updated)};"
            f" made by {who}).\n\nKeep your version and overwrite theirs, or take theirs and "
            "lose your edits?",
        )
        keep = box.addButton(KEEP_MINE, QMessageBox.ButtonRole.DestructiveRole)
        take = box.addButton(TAKE_THEIRS, QMessageBox.ButtonRole.ResetRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        box.exec()
        clicked = box.clickedButton()
        if clicked is keep:
            return ConflictChoice.OVERWRITE
        if clicked is take:
            return ConflictChoice.RELOAD
        return ConflictChoice.CANCEL

    def confirm_delete(self, document: DocumentSummary) -> bool:
        box = self._box(
            "DeleteDocumentPrompt",
            QMessageBox.Icon.Warning,
            "Delete document",
            f"Delete “{document.title}”?",
            f"The {describe(document)} is removed for good; agents will no longer find it.",
        )
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return box.clickedButton() is delete

    def save_as_new(self, title: str) -> bool:
        """The document being edited was deleted meanwhile: keep the text as a new one?"""
        box = self._box(
            "DocumentDeletedPrompt",
            QMessageBox.Icon.Warning,
            "Document deleted meanwhile",
            f"“{title}” was deleted while you were editing it.",
            "Save your text as a new document?",
        )
        save = box.addButton("Save as new", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save)
        box.exec()
        return box.clickedButton() is save

    def unsaved_changes(self, title: str) -> UnsavedChoice:
        return self.prompts.unsaved_changes(title)

    def show_error(self, title: str, message: str) -> None:
        self.prompts.show_error(title, message)
