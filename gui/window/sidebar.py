"""The navigation sidebar: Agents · Presets · Runs · Documents · Batches.

A plain list widget, so arrow keys, Home/End and type-ahead work out of the box; the window
adds Ctrl+1..5. Each row shows an icon and a label; the style sheet gives the selected row
a tinted pill.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core import __version__
from gui.theme import icons


class Sidebar(QWidget):
    currentChanged = Signal(int)
    """The selected row (view index) changed. GUI thread."""
    picked = Signal(int)
    """A row was clicked or Enter pressed on it: the person means to work in that view, so the
    window moves the keyboard into it (arrow keys only browse and leave it here)."""

    WIDTH = 184

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setFixedWidth(self.WIDTH)

        logo = QLabel()
        logo.setPixmap(icons.pixmap("baton", 28))
        title = QLabel("Baton")
        title.setObjectName("SidebarTitle")
        brand = QHBoxLayout()
        brand.setContentsMargins(16, 16, 12, 14)
        brand.setSpacing(9)
        brand.addWidget(logo)
        brand.addWidget(title)
        brand.addStretch(1)

        self.list = QListWidget()
        self.list.setObjectName("SidebarList")
        self.list.setIconSize(QSize(20, 20))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setSpacing(1)
        self.list.currentRowChanged.connect(self.currentChanged)
        self.list.itemClicked.connect(lambda item: self.picked.emit(self.list.row(item)))
        self.list.itemActivated.connect(lambda item: self.picked.emit(self.list.row(item)))

        footer = QLabel(f"Version {__version__}")
        footer.setObjectName("SidebarFooter")
        footer.setContentsMargins(18, 0, 0, 12)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(brand)
        layout.addWidget(self.list, 1)
        layout.addWidget(footer)

    def add_entry(self, label: str, icon_name: str, tooltip: str = "") -> None:
        item = QListWidgetItem(icons.icon(icon_name), label)
        item.setSizeHint(QSize(0, 38))
        item.setToolTip(tooltip or label)
        self.list.addItem(item)

    def set_count(self, index: int, count: int) -> None:
        """Show ``count`` after row ``index``'s label (``Inbox (3)``); 0 shows none."""
        self.set_note(index, str(count) if count else "")

    def set_note(self, index: int, note: str) -> None:
        """Show ``note`` after row ``index``'s label (``Runs (1 running)``); "" shows none."""
        item = self.list.item(index)
        label = item.text().split(" (")[0]
        item.setText(f"{label} ({note})" if note else label)

    def current(self) -> int:
        return self.list.currentRow()

    def set_current(self, index: int) -> None:
        self.list.setCurrentRow(index)

    def labels(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]
