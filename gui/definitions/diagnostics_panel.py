"""The collapsible "Problems" panel under the agents list.

It lists ``catalog.diagnostics``: severity icon, ``file:line`` and the message. Double-clicking
(or Enter on) a row asks to open that file in the editor — including files that failed to
parse, because the editor is where the user fixes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QSizePolicy,
    QStyledItemDelegate,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui.theme import icons, mix, secondary_text
from gui.widgets.plain_text import plain_tip
from gui.widgets.row_state import row_state

if TYPE_CHECKING:  # neither the agent model (pydantic) nor QStyle is on the start-up path
    from PySide6.QtWidgets import QStyleOptionViewItem

    from core.definitions.agents import Diagnostic

_ORDER = {"error": 0, "warning": 1, "info": 2}
ROLE_DIAGNOSTIC = Qt.ItemDataRole.UserRole + 1
ROLE_LOCATION = Qt.ItemDataRole.UserRole + 2


class DiagnosticsPanel(QWidget):
    """A header button that folds the list open and shut, and the list itself."""

    openRequested = Signal(str, int)
    """Open this path at this line (0 when unknown). GUI thread."""
    expandedChanged = Signal(bool)

    MAX_ROWS = 4

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
        self.chevron = QToolButton()
        self.chevron.setObjectName("SectionChevron")
        self.chevron.setAutoRaise(True)
        self.chevron.setIconSize(QSize(14, 14))
        self.chevron.setToolTip(self.toggle.toolTip())
        self.chevron.clicked.connect(self.toggle.toggle)
        header = QWidget()
        header.setObjectName("SectionHeader")
        header.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        header_layout = QHBoxLayout(header)
        header_layout.setContentsMargins(0, 0, 6, 0)
        header_layout.setSpacing(0)
        header_layout.addWidget(self.toggle, 1)
        header_layout.addWidget(self.chevron)

        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        self._layout.addWidget(header)
        self._tree: QTreeWidget | None = None
        self._diagnostics: list[Diagnostic] = []
        self.set_diagnostics([])

    # -- public API ----------------------------------------------------------------------

    @property
    def tree(self) -> QTreeWidget:
        """The list of problems, built with the first problem (or when asked for): most
        folders have none, and the window's first picture (before any file is read) needs
        only the header."""
        if self._tree is None:
            tree = QTreeWidget()
            tree.setObjectName("DiagnosticsList")
            tree.setColumnCount(1)
            tree.setHeaderHidden(True)
            tree.setRootIsDecorated(False)
            tree.setIndentation(0)
            tree.setUniformRowHeights(True)
            tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
            tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            tree.setItemDelegate(_DiagnosticDelegate(tree))
            tree.itemActivated.connect(self._on_activated)
            tree.itemDoubleClicked.connect(self._on_activated)
            self._layout.addWidget(tree)
            tree.setVisible(self.toggle.isChecked() and bool(self._diagnostics))
            self._tree = tree
        return self._tree

    def set_diagnostics(self, diagnostics: list[Diagnostic]) -> None:
        self._diagnostics = sorted(
            diagnostics, key=lambda d: (_ORDER[d.severity], Path(d.path).name, d.line or 0)
        )
        self._update_title()
        if self._tree is None and not self._diagnostics:
            return
        tree = self.tree
        tree.clear()
        for diagnostic in self._diagnostics:
            location = Path(diagnostic.path).name + (
                f":{diagnostic.line}" if diagnostic.line else ""
            )
            item = QTreeWidgetItem([f"{location}  {diagnostic.message}"])
            item.setData(0, ROLE_DIAGNOSTIC, diagnostic)
            item.setData(0, ROLE_LOCATION, location)
            tip = f"{diagnostic.path}{f':{diagnostic.line}' if diagnostic.line else ''}\n"
            tip += f"{diagnostic.message}\n\nDouble-click to open the file."
            item.setToolTip(0, plain_tip(tip))
            tree.addTopLevelItem(item)
        # As tall as its rows (up to MAX_ROWS, then it scrolls): the agents list keeps the rest.
        rows = min(len(self._diagnostics), self.MAX_ROWS)
        row_height = _DiagnosticDelegate.row_height(tree.font())
        tree.setFixedHeight(rows * row_height + 2 * tree.frameWidth() + 6)
        tree.setVisible(self.toggle.isChecked() and bool(self._diagnostics))

    def diagnostics(self) -> list[Diagnostic]:
        return list(self._diagnostics)

    def is_expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        self.toggle.setChecked(expanded)

    def row_texts(self) -> list[str]:
        """``"file:line  message"`` per row, as shown (for tests and accessibility)."""
        tree = self._tree
        if tree is None:
            return []
        items = (tree.topLevelItem(i) for i in range(tree.topLevelItemCount()))
        return [item.text(0) for item in items if item is not None]

    # -- private -------------------------------------------------------------------------

    def _update_title(self) -> None:
        counts = {key: 0 for key in _ORDER}
        for diagnostic in self._diagnostics:
            counts[diagnostic.severity] += 1
        self._update_chevron()
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
        if self._tree is not None:
            self._tree.setVisible(checked and bool(self._diagnostics))
        self._update_chevron()
        self.expandedChanged.emit(checked)

    def _update_chevron(self) -> None:
        self.chevron.setVisible(bool(self._diagnostics))
        expanded = self.toggle.isChecked()
        self.chevron.setIcon(icons.icon("chevron-down" if expanded else "chevron-right"))

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        from core.definitions.agents import Diagnostic  # loaded by then: rows are diagnostics

        diagnostic = item.data(0, ROLE_DIAGNOSTIC)
        if isinstance(diagnostic, Diagnostic):
            self.openRequested.emit(diagnostic.path, diagnostic.line or 0)


class _DiagnosticDelegate(QStyledItemDelegate):
    """Two lines per problem: severity icon and ``file:line`` in bold, the message below."""

    @staticmethod
    def row_height(font: QFont) -> int:
        return 2 * QFontMetrics(font).height() + 12

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        return QSize(100, self.row_height(option.font))

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        from core.definitions.agents import Diagnostic  # loaded by then: rows are diagnostics

        diagnostic = index.data(ROLE_DIAGNOSTIC)
        if not isinstance(diagnostic, Diagnostic):
            return
        painter.save()
        palette = option.palette
        rect = option.rect
        state = row_state(option)
        if state == "selected":
            painter.fillRect(
                rect,
                mix(
                    palette.color(QPalette.ColorRole.Base),
                    palette.color(QPalette.ColorRole.Highlight),
                    0.18,
                ),
            )
        elif state == "hovered":
            painter.fillRect(
                rect,
                mix(
                    palette.color(QPalette.ColorRole.Base),
                    palette.color(QPalette.ColorRole.Text),
                    0.05,
                ),
            )
        metrics = QFontMetrics(option.font)
        line = metrics.height()
        top = rect.top() + 6
        painter.drawPixmap(
            rect.left() + 10, top + (line - 16) // 2, icons.pixmap(diagnostic.severity, 16)
        )
        left = rect.left() + 34
        width = rect.right() - left - 8
        bold = QFont(option.font)
        bold.setWeight(QFont.Weight.DemiBold)
        painter.setFont(bold)
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        location = str(index.data(ROLE_LOCATION))
        painter.drawText(
            QRect(left, top, width, line),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            QFontMetrics(bold).elidedText(location, Qt.TextElideMode.ElideMiddle, width),
        )
        painter.setFont(option.font)
        painter.setPen(secondary_text(palette))
        painter.drawText(
            QRect(left, top + line, width, line),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            metrics.elidedText(diagnostic.message, Qt.TextElideMode.ElideRight, width),
        )
        painter.restore()
