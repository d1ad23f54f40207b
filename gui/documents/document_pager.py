"""The strip below the documents table: "21–40 of 153 documents", Previous and Next.

The buttons show only when there is more than one page, so a short list has no dead controls.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from core.documents.store import Page, SearchHit


class DocumentPager(QWidget):
    """See the module docstring. Signals are emitted on the GUI thread."""

    pageRequested = Signal(int)
    """Show this page (1-based)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._page = 1
        self.label = QLabel()
        self.label.setObjectName("Secondary")
        self.prev_button = QPushButton("‹ Previous")
        self.next_button = QPushButton("Next ›")
        self.prev_button.setToolTip("Previous page")
        self.next_button.setToolTip("Next page")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 8, 8)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.prev_button)
        layout.addWidget(self.next_button)
        self.prev_button.clicked.connect(lambda: self.pageRequested.emit(self._page - 1))
        self.next_button.clicked.connect(lambda: self.pageRequested.emit(self._page + 1))

    def show_page(self, page: Page[SearchHit], noun: str) -> None:
        """Describe ``page``; ``noun`` is what is counted ("document", "result")."""
        self._page = page.page
        if page.total:
            first = (page.page - 1) * page.page_size + 1
            last = first + len(page.items) - 1
            plural = "s" if page.total != 1 else ""
            self.label.setText(f"{first:,}–{last:,} of {page.total_text} {noun}{plural}")
        else:
            self.label.setText("")
        several = page.total > page.page_size or page.page > 1
        self.prev_button.setVisible(several)
        self.next_button.setVisible(several)
        self.prev_button.setEnabled(page.page > 1)
        self.next_button.setEnabled(page.page < page.pages)

    def clear(self) -> None:
        self.label.setText("")
        self.prev_button.hide()
        self.next_button.hide()
