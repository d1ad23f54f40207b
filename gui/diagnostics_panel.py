"""The collapsible "Problems" panel under the agents list.

It lists ``catalog.diagnostics``: severity icon, ``file:line`` and the message. Double-clicking
(or Enter on) a row asks to open that file in the editor — including files that failed to
parse, because the editor is where the user fixes them.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QSizePolicy,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.agents import Diagnostic
from gui import icons

_ORDER = {"error": 0, "warning": 1, "info": 2}
ROLE_DIAGNOSTIC = Qt.ItemDataRole.UserRole + 1


class DiagnosticsPanel(QWidget):
    """A header button that folds the list open and shut, and the list itself."""

    openRequested = Signal(str, int)
    """Open this path at this line (0 when unknown). GUI thread."""
    expandedChanged = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.toggle = QToolButton()
        self.toggle.setObjectName("SectionToggle")
        self.toggle.setCheckable(True)
        self.toggle.setChecked(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setIconSize(QSize(14, 14))
        self.toggle.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.toggle.setToolTip("Show or hide the problems found in agent files")
        self.toggle.toggled.connect(self._on_toggled)

        self.tree = QTreeWidget()
        self.tree.setObjectName("DiagnosticsList")
        self.tree.setColumnCount(2)
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(False)
        self.tree.setIndentation(0)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemActivated.connect(self._on_activated)
        self.tree.itemDoubleClicked.connect(self._on_activated)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.tree)
        self._diagnostics: list[Diagnostic] = []
        self.set_diagnostics([])

    # -- public API ----------------------------------------------------------------------

    def set_diagnostics(self, diagnostics: list[Diagnostic]) -> None:
        self._diagnostics = sorted(
            diagnostics, key=lambda d: (_ORDER[d.severity], Path(d.path).name, d.line or 0)
        )
        self.tree.clear()
        for diagnostic in self._diagnostics:
            location = Path(diagnostic.path).name + (
                f":{diagnostic.line}" if diagnostic.line else ""
            )
            item = QTreeWidgetItem([location, diagnostic.message])
            item.setIcon(0, icons.icon(diagnostic.severity))
            item.setData(0, ROLE_DIAGNOSTIC, diagnostic)
            tip = f"{diagnostic.path}{f':{diagnostic.line}' if diagnostic.line else ''}\n"
            tip += f"{diagnostic.message}\n\nDouble-click to open the file."
            item.setToolTip(0, tip)
            item.setToolTip(1, tip)
            self.tree.addTopLevelItem(item)
        self._update_title()
        self.tree.setVisible(self.toggle.isChecked() and bool(self._diagnostics))

    def diagnostics(self) -> list[Diagnostic]:
        return list(self._diagnostics)

    def is_expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        self.toggle.setChecked(expanded)

    def row_texts(self) -> list[str]:
        """``"file:line  message"`` per row, as shown (for tests and accessibility)."""
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [f"{item.text(0)}  {item.text(1)}" for item in items if item is not None]

    # -- private -------------------------------------------------------------------------

    def _update_title(self) -> None:
        counts = {key: 0 for key in _ORDER}
        for diagnostic in self._diagnostics:
            counts[diagnostic.severity] += 1
        if not self._diagnostics:
            self.toggle.setText("No problems")
            self.toggle.setIcon(icons.icon("ok"))
            self.toggle.setEnabled(False)
            return
        self.toggle.setEnabled(True)
        parts = [
            f"{counts[key]} {label if counts[key] == 1 else label + 's'}"
            for key, label in (("error", "error"), ("warning", "warning"), ("info", "note"))
            if counts[key]
        ]
        self.toggle.setText("Problems — " + ", ".join(parts))
        worst = next(key for key in _ORDER if counts[key])
        self.toggle.setIcon(icons.icon(worst))

    def _on_toggled(self, checked: bool) -> None:
        self.tree.setVisible(checked and bool(self._diagnostics))
        self.expandedChanged.emit(checked)

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        diagnostic = item.data(0, ROLE_DIAGNOSTIC)
        if isinstance(diagnostic, Diagnostic):
            self.openRequested.emit(diagnostic.path, diagnostic.line or 0)
