"""The questions the document browser asks: conflicts, deletes, unsaved edits.

Same contract as :mod:`gui.widgets.prompts` (every dialog has an object name and labelled buttons,
so
tests answer the real dialog as a person would), kept beside the browser because the wording
is about documents and agents, not files. Modal (``exec()``): call from ordinary slots only.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from core.documents.store import Document, DocumentSummary
from gui.documents.documents_table import TYPE_LABELS, absolute_time, run_text
from gui.widgets.prompts import ANY, ConflictChoice, Prompts, UnsavedChoice, ask

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

    def resolve_conflict(self, theirs: Document) -> ConflictChoice:
        """The document was saved by someone else (an agent) while it was being edited."""
        who = "a person" if theirs.provenance.by_person else run_text(theirs.provenance)
        answer = ask(
            self._parent,
            "DocumentConflictPrompt",
            QMessageBox.Icon.Warning,
            "Document changed meanwhile",
            f"“{theirs.title}” was changed while you were editing it.",
            f"It is now at version {theirs.version} (last written {absolute_time(theirs.updated)};"
            f" made by {who}).\n\nKeep your version and overwrite theirs, or take theirs and "
            "lose your edits?",
            [
                (ConflictChoice.OVERWRITE, KEEP_MINE, QMessageBox.ButtonRole.DestructiveRole),
                (ConflictChoice.RELOAD, TAKE_THEIRS, QMessageBox.ButtonRole.ResetRole),
                (ConflictChoice.CANCEL, QMessageBox.StandardButton.Cancel, ANY),
            ],
            default=ConflictChoice.CANCEL,
            escape=ConflictChoice.CANCEL,
        )
        return answer or ConflictChoice.CANCEL

    def confirm_delete(self, document: DocumentSummary) -> bool:
        return self.prompts.confirm(
            "DeleteDocumentPrompt",
            "Delete document",
            f"Delete “{document.title}”?",
            f"Agents will no longer find the {describe(document)}. Its history is kept: "
            "Undo delete, or baton docs restore, brings it back.",
            "Delete",
            QMessageBox.ButtonRole.DestructiveRole,
        )

    def save_as_new(self, title: str) -> bool:
        """The document being edited was deleted meanwhile: keep the text as a new one?"""
        answer = ask(
            self._parent,
            "DocumentDeletedPrompt",
            QMessageBox.Icon.Warning,
            "Document deleted meanwhile",
            f"“{title}” was deleted while you were editing it.",
            "Save your text as a new document?",
            [
                (True, "Save as new", QMessageBox.ButtonRole.AcceptRole),
                (False, QMessageBox.StandardButton.Cancel, ANY),
            ],
            default=True,
        )
        return bool(answer)

    def unsaved_changes(self, title: str) -> UnsavedChoice:
        return self.prompts.unsaved_changes(title)

    def show_error(self, title: str, message: str) -> None:
        self.prompts.show_error(title, message)
