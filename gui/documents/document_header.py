"""The strip above an open document: what it is, who wrote it, when, and what can be done.

Title, type badge, tags, "written by <agent> · step <n> · run <id>" with the run id as a link
(clicking it asks the window to show that run), created/updated times, and the actions: Edit and
Delete while reading, Cancel and Save while editing.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.documents.store import DocumentSummary
from gui.documents.documents_table import TYPE_LABELS, absolute_time, relative_time, short_run_id
from gui.theme import icons, set_tone
from gui.widgets import Badge, ElidedLabel

MAX_TAG_BADGES = 8


class DocumentHeader(QWidget):
    """See the module docstring. Signals are emitted on the GUI thread."""

    openRunRequested = Signal(str, int, str)
    """(run id, 0-based step or -1, tool call id or ""): the provenance link was clicked."""
    """The run link was clicked: show the run with this id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PaneHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._run_id = ""

        self.title = ElidedLabel(mode=Qt.TextElideMode.ElideRight)
        self.title.setObjectName("EditorTitle")
        self.type_badge = Badge()
        self.dirty_mark = QLabel("● unsaved")
        self.dirty_mark.setObjectName("Secondary")
        self.dirty_mark.hide()
        self.edit_button = self._tool("edit", "Edit", "Edit the title, tags and text in place")
        self.delete_button = self._tool("delete", "Delete", "Delete this document")
        self.history_button = self._tool(
            "history", "History", "Every version of this document, who wrote it, and Restore"
        )
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Discard your edits")
        self.save_button = QPushButton(icons.icon("save"), "Save")
        self.save_button.setToolTip("Save (Ctrl+S)")

        title_row = QHBoxLayout()
        title_row.setSpacing(8)
        title_row.addWidget(self.title, 1)
        title_row.addWidget(self.dirty_mark)
        title_row.addSpacing(8)
        title_row.addWidget(self.edit_button)
        title_row.addWidget(self.history_button)
        title_row.addWidget(self.delete_button)
        title_row.addWidget(self.cancel_button)
        title_row.addWidget(self.save_button)

        self.tags_row = QHBoxLayout()
        self.tags_row.setSpacing(4)
        self.tags_row.addWidget(self.type_badge)
        self.tags_row.addSpacing(8)
        self._tag_badges: list[Badge] = []
        self.no_tags = QLabel("No tags")
        self.no_tags.setObjectName("Secondary")
        self.tags_row.addWidget(self.no_tags)
        self.tags_row.addStretch(1)

        self.written_by = QLabel()
        self.written_by.setObjectName("Secondary")
        self.run_link = QPushButton()
        self.run_link.setObjectName("RunLink")
        self.run_link.setCursor(Qt.CursorShape.PointingHandCursor)
        self.run_link.setFlat(True)
        self.run_link.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.run_link.clicked.connect(self._open_run)
        self._style_link()
        who_icon = QLabel()
        who_icon.setPixmap(icons.pixmap("model", 14))
        provenance_row = QHBoxLayout()
        provenance_row.setSpacing(6)
        provenance_row.addWidget(who_icon)
        provenance_row.addWidget(self.written_by)
        provenance_row.addWidget(self.run_link)
        provenance_row.addStretch(1)

        self.times = ElidedLabel(mode=Qt.TextElideMode.ElideRight)
        self.times.setObjectName("Secondary")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 10, 12, 10)
        layout.setSpacing(5)
        layout.addLayout(title_row)
        layout.addLayout(self.tags_row)
        layout.addLayout(provenance_row)
        layout.addWidget(self.times)
        self.set_editing(False)

    # -- public API ----------------------------------------------------------------------

    def show_document(self, document: DocumentSummary) -> None:
        self.title.set_full_text(document.title)
        self.type_badge.setText(TYPE_LABELS.get(document.type, document.type))
        self.type_badge.setProperty("tone", "override" if document.type == "memory" else "")
        self.type_badge.style().unpolish(self.type_badge)
        self.type_badge.style().polish(self.type_badge)
        self._set_tags(document.tags)
        provenance = document.provenance
        self._run_id = provenance.run_id
        self._step = provenance.step if provenance.step is not None else -1
        self._call_id = provenance.call_id or ""
        if provenance.by_person:
            self.written_by.setText("Written by hand")
        else:
            parts = [f"Written by {provenance.agent or 'an agent'}"]
            if provenance.step is not None:
                parts.append(f"step {provenance.step + 1}")
            if provenance.run_id:
                parts.append("run")
            self.written_by.setText(" · ".join(parts))
        tooltip = f"Tool call {provenance.call_id}" if provenance.call_id else ""
        self.written_by.setToolTip(tooltip)
        self.run_link.setVisible(bool(provenance.run_id))
        self.run_link.setText(short_run_id(provenance.run_id))
        self.run_link.setToolTip(f"Show run {provenance.run_id}")
        self.times.set_full_text(
            f"Updated {relative_time(document.updated)}   ·   created "
            f"{absolute_time(document.created)[:16]}   ·   version {document.version}   ·   "
            f"{document.chars:,} characters   ·   #{document.id}"
        )
        self.times.setToolTip(
            f"Updated {absolute_time(document.updated)}\nCreated {absolute_time(document.created)}"
        )

    def show_new(self) -> None:
        """The header of a document being written by hand (not stored yet)."""
        self.title.set_full_text("New document")
        self.type_badge.setText("Not saved yet")
        self.type_badge.setProperty("tone", "")
        self._set_tags([])
        self.written_by.setText("Written by hand")
        self.run_link.hide()
        self._run_id = ""
        self.times.set_full_text("Give it a title and some text, then Save (Ctrl+S).")

    def show_typed(self, title: str, tags: list[str]) -> None:
        """Follow the editor while a person types: the title and tag chips as they will be."""
        self.title.set_full_text(title or "New document")
        self._set_tags(tags)

    def set_editing(self, editing: bool) -> None:
        self.edit_button.setVisible(not editing)
        self.history_button.setVisible(not editing)
        self.delete_button.setVisible(not editing)
        self.cancel_button.setVisible(editing)
        self.save_button.setVisible(editing)
        if not editing:
            self.dirty_mark.hide()

    def set_dirty(self, dirty: bool) -> None:
        self.dirty_mark.setVisible(dirty)

    def tag_texts(self) -> list[str]:
        return [badge.text() for badge in self._tag_badges if badge.isVisible()]

    def refresh_colors(self) -> None:
        self._style_link()

    # -- private -------------------------------------------------------------------------

    def _tool(self, icon_name: str, text: str, tooltip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setIcon(icons.icon(icon_name))
        button.setIconSize(QSize(16, 16))
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.setAutoRaise(True)
        button.setToolTip(tooltip)
        return button

    def _set_tags(self, tags: list[str]) -> None:
        shown = tags[:MAX_TAG_BADGES]
        if len(tags) > MAX_TAG_BADGES:
            shown.append(f"+{len(tags) - MAX_TAG_BADGES}")
        while len(self._tag_badges) < len(shown):
            badge = Badge()
            # After the type badge and its spacing, before "No tags".
            self.tags_row.insertWidget(2 + len(self._tag_badges), badge)
            self._tag_badges.append(badge)
        for number, badge in enumerate(self._tag_badges):
            badge.setVisible(number < len(shown))
            if number < len(shown):
                badge.setText(shown[number])
                badge.setToolTip(", ".join(tags) if number == MAX_TAG_BADGES else "")
        self.no_tags.setVisible(not tags)

    def _open_run(self) -> None:
        if self._run_id:
            self.openRunRequested.emit(self._run_id, self._step, self._call_id)

    def _style_link(self) -> None:
        self.run_link.setStyleSheet(
            "QPushButton#RunLink { border: none; padding: 0px;"
            " text-decoration: underline; background: transparent; }"
        )
        set_tone(self.run_link, "link")
