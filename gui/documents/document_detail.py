"""The detail pane: one document rendered as Markdown, edited in place, saved safely.

Saving (the version check, conflicts) is :mod:`gui.documents.document_saving`. Here:

* **Never lose unsaved edits.** A change made elsewhere while editing only raises a banner
  (:meth:`DocumentDetail.document_changed_elsewhere`); the text being edited is left alone.
  While reading, the pane simply shows the new version, keeping the scroll position.
* **Errors are one sentence** (empty title, content over the limit), shown in a banner; the
  edits stay in the editor to be fixed.
* **Nothing is lost.** Every save, delete and restore keeps the version it replaces in the
  store's history; History (:mod:`gui.documents.document_history`) shows the versions with what each
  changed, and restores any of them.

The form itself is :mod:`gui.documents.document_editor`. Reads here run on the GUI thread (one
indexed
row, well under a millisecond at 100,000 documents; WAL readers never wait for a writer).
Writes can wait up to the store's busy timeout for another program, so they run on a worker
thread through :class:`gui.documents.document_writes.StoreWriter`, the pane disabled meanwhile and
the
window responsive; their answer still comes back in line for the conflict prompt.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.documents.store import (
    Document,
    DocumentError,
    DocumentNotFound,
    DocumentStore,
)
from gui.documents.document_editor import DocumentEditor
from gui.documents.document_header import DocumentHeader
from gui.documents.document_history import DocumentHistory
from gui.documents.document_prompts import DocumentPrompts, describe
from gui.documents.document_saving import save_edits
from gui.documents.document_writes import StoreWriter
from gui.run.markdown_view import MarkdownView
from gui.theme import secondary_text
from gui.widgets import Banner, EmptyState
from gui.widgets.prompts import UnsavedChoice

Mode = Literal["empty", "read", "edit", "new", "history"]


_EMPTY_HINT = "Pick a row to read it here, or press New to write a document by hand."


class DocumentDetail(QWidget):
    """See the module docstring. GUI thread only; signals are emitted on the GUI thread."""

    # -- signals -------------------------------------------------------------------------
    saved = Signal(object)
    """A :class:`Document` was created or updated from this pane (the stored record)."""
    deleted = Signal(int)
    """The document with this id was deleted from this pane."""
    openRunRequested = Signal(str, int, str)
    """The provenance link was clicked: show the run with this id."""
    dirtyChanged = Signal(bool)
    """The editor gained (True) or lost (False) unsaved edits."""

    def __init__(
        self,
        prompts: DocumentPrompts,
        store: DocumentStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("DocumentDetail")
        self.prompts = prompts
        self.store = store
        self._mode: Mode = "empty"
        self._document: Document | None = None
        """The stored record shown, or the one the edit started from."""
        self._dirty = False

        self.header = DocumentHeader()
        self.banner = Banner()
        self.viewer = MarkdownView()
        self.viewer.setObjectName("DocumentViewer")
        self.viewer.document().setDocumentMargin(16)

        self.editor = DocumentEditor()
        self.title_field, self.tags_field = self.editor.title_field, self.editor.tags_field
        self.type_combo, self.content_edit = self.editor.type_combo, self.editor.content_edit

        self.history = DocumentHistory()
        self.writer = StoreWriter(self)

        self.pages = QStackedWidget()
        self.pages.addWidget(self.viewer)
        self.pages.addWidget(self.editor)
        self.pages.addWidget(self.history)
        document_page = QWidget()
        document_layout = QVBoxLayout(document_page)
        document_layout.setContentsMargins(0, 0, 0, 0)
        document_layout.setSpacing(0)
        document_layout.addWidget(self.header)
        document_layout.addWidget(self.banner)
        document_layout.addWidget(self.pages, 1)

        self.empty_state = EmptyState(
            "nav-documents",
            "No document open",
            _EMPTY_HINT,
        )
        self.undo_delete_button = QPushButton("Undo delete")
        self.undo_delete_button.setToolTip("Bring the deleted document back, as it was")
        self.undo_delete_button.hide()
        self._deleted: Document | None = None
        empty_layout = self.empty_state.layout()
        assert isinstance(empty_layout, QVBoxLayout)
        empty_layout.insertWidget(
            empty_layout.count() - 1, self.undo_delete_button, 0, Qt.AlignmentFlag.AlignCenter
        )
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty_state)
        self.stack.addWidget(document_page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)

        self.header.edit_button.clicked.connect(self.start_edit)
        self.header.delete_button.clicked.connect(self.delete_current)
        self.header.history_button.clicked.connect(self.show_history)
        self.undo_delete_button.clicked.connect(self.undo_delete)
        self.history.restoreRequested.connect(self.restore_version)
        self.history.closeRequested.connect(self._close_history)
        self.writer.busyChanged.connect(self._on_busy)
        self.header.save_button.clicked.connect(self.save)
        self.header.cancel_button.clicked.connect(self.cancel_edit)
        self.header.openRunRequested.connect(self.openRunRequested)
        self.editor.edited.connect(self._on_edited)
        self.title_field.textChanged.connect(self._follow_typing)
        self.tags_field.textChanged.connect(self._follow_typing)
        self.editor.saveRequested.connect(self.save)

    # -- public API ----------------------------------------------------------------------

    def mode(self) -> Mode:
        return self._mode

    def current_id(self) -> int | None:
        return self._document.id if self._document is not None and self._mode != "new" else None

    def current(self) -> Document | None:
        return self._document

    def is_editing(self) -> bool:
        return self._mode in ("edit", "new")

    def is_dirty(self) -> bool:
        return self._dirty

    def show_document(self, document: Document) -> None:
        """Show ``document`` (with content) for reading; the caller has dealt with unsaved
        edits (:meth:`maybe_discard_changes`)."""
        self._document = document
        self._set_mode("read")
        self.banner.hide()
        self.header.show_document(document)
        self._render(document, keep_scroll=False)

    def clear(self, title: str = "No document open", hint: str = "") -> None:
        self._document = None
        self._deleted = None
        self.undo_delete_button.hide()
        self._set_mode("empty")
        self.banner.hide()
        self.empty_state.title.setText(title)
        self.empty_state.hint.setText(hint or _EMPTY_HINT)

    def start_edit(self) -> None:
        document = self._document
        if document is None or self._mode != "read":
            return
        self._fill_editor(document.title, document.type, document.tags, document.content or "")
        self._set_mode("edit")
        self.content_edit.setFocus()

    def start_new(self) -> None:
        """An empty editor for a document written by hand: a document unless changed, as
        ``baton docs add`` makes (a memory is what later runs recall as instructions, so
        making one is a choice, not a default)."""
        self._document = None
        self.banner.hide()
        self.header.show_new()
        self._fill_editor("", "document", [], "")
        self._set_mode("new")
        self.title_field.setFocus()

    def cancel_edit(self) -> None:
        """Drop the edits: back to reading the stored document (or to nothing, for New)."""
        if not self.is_editing():
            return
        self._set_dirty(False)
        if self._mode == "new" or self._document is None:
            self.clear()
            return
        self.show_document(self._fresh(self._document.id) or self._document)

    def save(self) -> bool:
        """Save the edits (create for New); True when stored. See the module docstring."""
        if not self.is_editing() or self.store is None:
            return False
        base = None if self._mode == "new" else self._document
        try:
            outcome = save_edits(self.store, self.writer, self.prompts, base, self.editor.values())
        except DocumentError as error:
            self.banner.show_message("error", str(error))
            return False
        shown = outcome.stored or outcome.theirs
        if shown is None:
            return False
        self._set_dirty(False)
        self.show_document(shown)
        self.saved.emit(shown)  # the table shows their version too, on "take theirs"
        return outcome.stored is not None

    def delete_current(self) -> bool:
        document = self._document
        if document is None or self.store is None or self._mode != "read":
            return False
        if not self.prompts.confirm_delete(document):
            return False
        store = self.store
        try:
            self.writer.run(lambda: store.delete(document.id))
        except DocumentNotFound:
            pass  # gone already: what was asked for
        except DocumentError as error:
            self.banner.show_message("error", str(error))
            return False
        self.clear(
            "Document deleted",
            f"The {describe(document)} was deleted; its history is kept.",
        )
        self._deleted = document
        self.undo_delete_button.show()
        self.deleted.emit(document.id)
        return True

    def undo_delete(self) -> bool:
        """Restore the document this pane just deleted (its last version), and show it."""
        document = self._deleted
        if document is None or self.store is None or self._mode != "empty":
            return False
        store = self.store
        try:
            restored = self.writer.run(lambda: store.restore(document.id, document.version))
        except DocumentError as error:
            self.empty_state.hint.setText(str(error))
            return False
        self.show_document(restored)
        self.saved.emit(restored)
        return True

    def show_history(self) -> None:
        """Every version of the open document, newest first, with what each changed."""
        document = self._document
        if document is None or self.store is None or self._mode != "read":
            return
        try:
            versions = self.store.history(document.id)
        except DocumentError as error:
            self.banner.show_message("error", str(error))
            return
        self.history.show_versions(versions)
        self._set_mode("history")
        self.history.versions_list.setFocus()

    def restore_version(self, version: int) -> bool:
        """Make ``version`` of the open document current again (a new version); True when
        stored. The person asked for it with a click: no further question."""
        document = self._document
        if document is None or self.store is None or self._mode != "history":
            return False
        store = self.store
        try:
            restored = self.writer.run(lambda: store.restore(document.id, version))
        except DocumentError as error:
            self.banner.show_message("error", str(error))
            return False
        self.show_document(restored)
        self.banner.show_message(
            "info", f"Restored version {version} as version {restored.version}."
        )
        self.saved.emit(restored)
        return True

    def shutdown(self) -> None:
        """End the write worker thread. Call before the window closes."""
        self.writer.shutdown()

    def maybe_discard_changes(self) -> bool:
        """True when the pane may show something else: no unsaved edits, or they were saved
        or discarded on purpose."""
        if not (self.is_editing() and self._dirty):
            return True
        title = self.title_field.text().strip() or "the new document"
        choice = self.prompts.unsaved_changes(title)
        if choice is UnsavedChoice.SAVE:
            return self.save()
        if choice is UnsavedChoice.DISCARD:
            self._set_dirty(False)
            return True
        return False

    def document_changed_elsewhere(self) -> None:
        """Someone (an agent, another window) wrote to the store: catch up without ever
        touching unsaved edits."""
        document = self._document
        if document is None or self._mode == "new" or self.store is None:
            return
        fresh = self._fresh(document.id)
        if fresh is not None and fresh.version == document.version:
            return
        if self._mode == "read":
            if fresh is None:
                self.clear("Document deleted", f"The {describe(document)} was deleted meanwhile.")
            else:
                self._document = fresh
                self.header.show_document(fresh)
                self._render(fresh, keep_scroll=True)
            return
        if fresh is None:
            self.banner.show_message(
                "warning",
                f"“{document.title}” was deleted while you were editing it. "
                "Saving keeps your text as a new document.",
            )
        else:
            who = fresh.provenance.agent or "someone else"
            self.banner.show_message(
                "warning",
                f"{who} changed this document while you were editing it (now version "
                f"{fresh.version}). Your edits are kept; saving asks which version to keep.",
                [("Take theirs", lambda: self._take_theirs(fresh.id))],
            )

    def refresh_colors(self) -> None:
        self.editor.refresh_colors()
        self.header.refresh_colors()

    # -- private -------------------------------------------------------------------------

    def _take_theirs(self, doc_id: int) -> None:
        fresh = self._fresh(doc_id)
        self._set_dirty(False)
        if fresh is None:
            self.clear("Document deleted", "It was deleted meanwhile.")
        else:
            self.show_document(fresh)

    def _fresh(self, doc_id: int) -> Document | None:
        if self.store is None:
            return None
        try:
            return self.store.get(doc_id, full=True)
        except DocumentNotFound:
            return None
        except DocumentError as error:
            self.banner.show_message("error", str(error))
            return None

    def _render(self, document: Document, *, keep_scroll: bool) -> None:
        bar = self.viewer.verticalScrollBar()
        position = bar.value()
        content = document.content or ""
        if content.strip():
            self.viewer.set_markdown(content)
        else:
            muted = secondary_text(self.palette()).name()
            self.viewer.setHtml(f"<p style='color:{muted}'><i>This document has no text.</i></p>")
        bar.setValue(position if keep_scroll else 0)

    def _fill_editor(self, title: str, doc_type: str, tags: list[str], content: str) -> None:
        limit = self.store.limits.document_max_chars if self.store is not None else 0
        self.editor.fill(title, doc_type, tags, content, limit)
        self._set_dirty(False)

    def _set_mode(self, mode: Mode) -> None:
        self._mode = mode
        self.stack.setCurrentIndex(0 if mode == "empty" else 1)
        self.pages.setCurrentIndex({"edit": 1, "new": 1, "history": 2}.get(mode, 0))
        self.header.set_editing(mode in ("edit", "new"))
        self.header.history_button.setEnabled(mode == "read")
        if mode in ("read", "empty", "history"):
            self._set_dirty(False)

    def _close_history(self) -> None:
        if self._mode == "history" and self._document is not None:
            self._set_mode("read")

    def _follow_typing(self) -> None:
        if self.is_editing():
            edited = self.editor.values()
            self.header.show_typed(edited.title, edited.tags)

    def _on_busy(self, busy: bool) -> None:
        """While a write runs, nothing here can start another (see StoreWriter)."""
        focused = self.focusWidget()
        self.setEnabled(not busy)
        self.header.save_button.setText("Saving…" if busy else "Save")
        if not busy and focused is not None:
            focused.setFocus()

    def _on_edited(self) -> None:
        if self.is_editing():
            self._set_dirty(True)

    def _set_dirty(self, dirty: bool) -> None:
        if dirty == self._dirty:
            return
        self._dirty = dirty
        self.header.set_dirty(dirty)
        self.dirtyChanged.emit(dirty)
