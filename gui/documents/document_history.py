"""A document's history in the detail pane: every version, who wrote it, what it changed, and
Restore.

Left, the versions newest first ("v3 · keeper, run 0502-1403 · 2 min ago", a deletion marked as
such); right, what the selected version changed since the one before, as a coloured diff
(:func:`core.documents.history.diff`, the same text ``baton docs history --diff`` prints).
Restore is offered for every version that is not the current text and not a deletion; the pane
(:mod:`gui.documents.document_detail`) does the restoring, which is itself a new version.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.documents.history import diff
from core.documents.store import DocumentVersion
from gui.documents.documents_table import relative_time
from gui.widgets.diff_view import DiffView


def describe_version(version: DocumentVersion) -> str:
    """One short line of the versions list (who in full is the item's tooltip)."""
    author = version.written_by
    who = "a person" if author.by_person else author.agent or "an agent"
    what = "deleted" if version.deleted else "current" if version.current else version.type
    return f"v{version.version} · {what} · {who} · {relative_time(version.written)}"


class DocumentHistory(QWidget):
    """See the module docstring. GUI thread only; signals are emitted on the GUI thread."""

    restoreRequested = Signal(int)
    """Restore was clicked for this version number."""
    closeRequested = Signal()
    """Back to the document."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DocumentHistory")
        self._versions: list[DocumentVersion] = []
        self.versions_list = QListWidget()
        self.versions_list.setObjectName("DocumentVersions")
        self.versions_list.setAccessibleName("Versions")
        self.diff_view = DiffView()
        self.diff_view.setAccessibleName("What this version changed")
        # Documents are prose: a paragraph is one line, which a code diff would leave unwrapped.
        self.diff_view.setLineWrapMode(DiffView.LineWrapMode.WidgetWidth)
        self.diff_view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.summary = QLabel()
        self.summary.setObjectName("Secondary")
        self.restore_button = QPushButton("Restore this version")
        self.restore_button.setToolTip(
            "Make this version's text current again (as a new version: nothing is lost)"
        )
        self.back_button = QPushButton("Back to the document")

        buttons = QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(self.back_button)
        buttons.addWidget(self.restore_button)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.versions_list)
        splitter.addWidget(self.diff_view)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 700])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.addLayout(buttons)
        layout.addWidget(splitter, 1)

        self.versions_list.currentRowChanged.connect(self._on_row_changed)
        self.restore_button.clicked.connect(self._restore)
        self.back_button.clicked.connect(self.closeRequested)

    # -- public API ----------------------------------------------------------------------

    def show_versions(self, versions: list[DocumentVersion]) -> None:
        """Fill the list (newest first) and select the newest version."""
        self._versions = list(reversed(versions))
        self.versions_list.clear()
        for version in self._versions:
            item = QListWidgetItem(describe_version(version))
            item.setToolTip(
                f"{version.title}\nwritten by {version.written_by.describe()}\n"
                f"on {version.written:%Y-%m-%d %H:%M} UTC"
            )
            self.versions_list.addItem(item)
        self.versions_list.setCurrentRow(0)
        self._on_row_changed(0)

    def selected(self) -> DocumentVersion | None:
        row = self.versions_list.currentRow()
        return self._versions[row] if 0 <= row < len(self._versions) else None

    def select_version(self, number: int) -> None:
        for row, version in enumerate(self._versions):
            if version.version == number:
                self.versions_list.setCurrentRow(row)

    # -- private -------------------------------------------------------------------------

    def _on_row_changed(self, row: int) -> None:
        if not 0 <= row < len(self._versions):
            self.diff_view.set_diff("")
            self.restore_button.setEnabled(False)
            return
        version = self._versions[row]
        before = self._versions[row + 1] if row + 1 < len(self._versions) else None
        self.diff_view.set_diff(diff(before, version))
        self.restore_button.setEnabled(not version.current and not version.deleted)
        self.summary.setText(
            f"Version {version.version} of {len(self._versions)}: what it changed"
            if before is not None
            else "Version 1: the first text"
        )

    def _restore(self) -> None:
        version = self.selected()
        if version is not None:
            self.restoreRequested.emit(version.version)
