"""The in-place editor of a document: title, type, tags and the Markdown text.

A plain form; what saving means (versions, conflicts) is :mod:`gui.documents.document_detail`'s job.
Ctrl+S typed in any field asks to save (:attr:`DocumentEditor.saveRequested`): the window's
File ▸ Save owns the same key, so the editor claims it through ``ShortcutOverride`` while a
field has the focus, instead of adding a second shortcut (which Qt would find ambiguous and
fire neither).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from gui.definitions.code_edit import CodeEdit
from gui.definitions.highlighters import DefinitionHighlighter
from gui.documents.documents_table import TYPE_LABELS
from gui.theme import set_tone

_TAG_SEPARATORS = re.compile(r"[,，、;；\n]")


def parse_tags(text: str) -> list[str]:
    """Comma-separated tags (Chinese commas too); blanks dropped, the store cleans the rest."""
    return [tag.strip() for tag in _TAG_SEPARATORS.split(text) if tag.strip()]


@dataclass(frozen=True)
class EditedDocument:
    title: str
    type: str
    tags: list[str]
    content: str


class DocumentEditor(QWidget):
    """See the module docstring. GUI thread only; signals are emitted on the GUI thread."""

    edited = Signal()
    """A person changed a field (not emitted by :meth:`fill`)."""
    saveRequested = Signal()
    """Ctrl+S was pressed in one of the fields."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._loading = False
        self._limit = 0
        self.title_field = QLineEdit()
        self.title_field.setPlaceholderText("A short title agents and people can search for")
        self.type_combo = QComboBox()
        for value, label in TYPE_LABELS.items():
            self.type_combo.addItem(label, value)
        self.tags_field = QLineEdit()
        self.tags_field.setPlaceholderText("Comma-separated, e.g. login, backend")
        self.content_edit = CodeEdit()
        self.content_edit.setPlaceholderText("Markdown text")
        self._highlighter = DefinitionHighlighter(
            self.content_edit.document(), self.palette(), "markdown"
        )
        self.counter = QLabel()
        self.counter.setObjectName("Secondary")
        self.counter.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.counter.setContentsMargins(0, 2, 12, 2)

        form = QFormLayout()
        form.setContentsMargins(16, 10, 16, 6)
        form.setHorizontalSpacing(10)
        form.setVerticalSpacing(6)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow("Title", self.title_field)
        form.addRow("Type", self.type_combo)
        form.addRow("Tags", self.tags_field)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(form)
        layout.addWidget(self.content_edit, 1)
        layout.addWidget(self.counter)

        for field in (self.title_field, self.tags_field):
            field.textChanged.connect(self._on_edited)
        self.type_combo.currentIndexChanged.connect(self._on_edited)
        self.content_edit.textChanged.connect(self._on_edited)
        for widget in (self.title_field, self.tags_field, self.type_combo, self.content_edit):
            widget.installEventFilter(self)

    # -- public API ----------------------------------------------------------------------

    def fill(self, title: str, doc_type: str, tags: list[str], content: str, limit: int) -> None:
        """Show these values (``limit``: the content's maximum length, 0 for none)."""
        self._loading = True
        try:
            self._limit = limit
            self.title_field.setText(title)
            self.type_combo.setCurrentIndex(max(0, self.type_combo.findData(doc_type)))
            self.tags_field.setText(", ".join(tags))
            self.content_edit.setPlainText(content)
        finally:
            self._loading = False
        self._update_counter()

    def values(self) -> EditedDocument:
        return EditedDocument(
            title=self.title_field.text(),
            type=str(self.type_combo.currentData()),
            tags=parse_tags(self.tags_field.text()),
            content=self.content_edit.toPlainText(),
        )

    def refresh_colors(self) -> None:
        self._highlighter.set_palette(self.palette())
        self.content_edit.refresh_colors()
        self._update_counter()

    # -- Qt overrides --------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if (
            kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress)
            and isinstance(event, QKeyEvent)
            and event.matches(QKeySequence.StandardKey.Save)
        ):
            event.accept()
            if kind == QEvent.Type.KeyPress:
                self.saveRequested.emit()
            return True
        return super().eventFilter(watched, event)

    # -- private -------------------------------------------------------------------------

    def _on_edited(self, *_args: object) -> None:
        if self._loading:
            return
        self._update_counter()
        self.edited.emit()

    def _update_counter(self) -> None:
        length = len(self.content_edit.toPlainText())
        limit = self._limit
        self.counter.setText(f"{length:,} / {limit:,} characters" if limit else f"{length:,}")
        over = bool(limit) and length > limit
        set_tone(self.counter, "error" if over else None)
        self.counter.setStyleSheet("font-weight: 600;" if over else "")
