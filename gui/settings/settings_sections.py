"""The Settings dialog's sections as a list on the left and the chosen page beside it.

Eleven sections do not fit a tab bar at 800 px (the last tabs hid behind scroll arrows); a
list shows every name at once, reads top to bottom, and is walked with the arrow keys. It keeps
the few calls of :class:`~PySide6.QtWidgets.QTabWidget` that the dialog, its search
(:mod:`gui.settings.settings_search`) and the tests use — ``tabText``, ``setTabVisible``,
``setTabIcon``, ``setCurrentWidget``… — so code that knew the tabs reads the same.

Each page sits in a scroll area of its own: the longest (Limits, thirteen rows) would otherwise
make the dialog taller than an 800 × 600 screen.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QStackedWidget,
    QWidget,
)

LIST_WIDTH = 150
"""Wide enough for "Trusted projects" with its error mark; narrow enough for 800 px."""


class SettingsSections(QWidget):
    """A section list and a page stack that always agree; :attr:`currentChanged` gives the
    index of the page shown."""

    currentChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setObjectName("SettingsSections")
        self.list.setAccessibleName("Settings sections")
        self.list.setFixedWidth(LIST_WIDTH)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        # Error marks as tall as the text: a section gaining or losing one never moves a row.
        line = self.list.fontMetrics().height()
        self.list.setIconSize(QSize(line - 2, line - 2))
        self.stack = QStackedWidget()
        self._pages: list[QWidget] = []
        self.list.currentRowChanged.connect(self._row_changed)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.list)
        layout.addWidget(self.stack, 1)

    # -- the tab widget's calls ---------------------------------------------------------

    def addTab(self, page: QWidget, title: str) -> int:
        item = QListWidgetItem(title)
        self.list.addItem(item)
        scroll = QScrollArea()
        scroll.setObjectName("SettingsPageScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(page)
        self._pages.append(page)
        index = self.stack.addWidget(scroll)
        if self.list.currentRow() < 0:
            self.list.setCurrentRow(0)
        return index

    def count(self) -> int:
        return self.stack.count()

    def widget(self, index: int) -> QWidget | None:
        return self._pages[index] if 0 <= index < len(self._pages) else None

    def indexOf(self, page: QWidget) -> int:
        return self._pages.index(page) if page in self._pages else -1

    def tabText(self, index: int) -> str:
        item = self.list.item(index)
        return item.text() if item is not None else ""

    def setTabIcon(self, index: int, icon: QIcon) -> None:
        item = self.list.item(index)
        if item is not None:
            item.setIcon(icon)

    def tabIcon(self, index: int) -> QIcon:
        item = self.list.item(index)
        return item.icon() if item is not None else QIcon()

    def setTabVisible(self, index: int, visible: bool) -> None:
        item = self.list.item(index)
        if item is not None:
            item.setHidden(not visible)

    def isTabVisible(self, index: int) -> bool:
        item = self.list.item(index)
        return item is not None and not item.isHidden()

    def currentIndex(self) -> int:
        return self.stack.currentIndex()

    def setCurrentIndex(self, index: int) -> None:
        self.list.setCurrentRow(index)

    def currentWidget(self) -> QWidget | None:
        return self.widget(self.stack.currentIndex())

    def setCurrentWidget(self, page: QWidget) -> None:
        self.setCurrentIndex(self.indexOf(page))

    # -- private -------------------------------------------------------------------------

    def _row_changed(self, row: int) -> None:
        if 0 <= row < self.stack.count():
            self.stack.setCurrentIndex(row)
            self.currentChanged.emit(row)
