"""The Inbox view: one row per thing waiting for the person, oldest first.

A row says what waits and where (``Approval needed — implement "add a flag", step 2``) and
why, in the kind's colour. Opening a row (double-click, Enter, Open) shows the run on that
step and brings its question back (the approval or budget dialog); a failed step can be
dismissed. Reaching the view from the sidebar or its shortcut puts the keyboard in the list,
so Enter right after opens the selected row. The rows are rebuilt from
:class:`gui.inbox.inbox_model.InboxModel` whenever it changes: a handful of items, never
thousands.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.run.attention import Attention
from gui.inbox.inbox_model import InboxModel
from gui.theme import icons
from gui.widgets.plain_text import plain_tip

_ICONS = {"approval": "lock", "budget": "warning", "gate": "info", "failed": "error"}


class InboxView(QWidget):
    """See the module docstring. GUI thread only."""

    def __init__(self, model: InboxModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("InboxView")
        self.model = model
        title = QLabel("Waiting for you")
        title.setStyleSheet("font-weight: 600; font-size: 16px;")
        self.count = QLabel()
        self.count.setObjectName("Secondary")
        self.list = QListWidget()
        self.list.setObjectName("InboxList")
        self.list.setWordWrap(True)
        self.setFocusProxy(self.list)  # reaching the view (sidebar, Ctrl+N) lands in the list
        self.list.itemActivated.connect(lambda _item: self.open_current())
        self.list.itemDoubleClicked.connect(lambda _item: self.open_current())
        self.list.currentRowChanged.connect(lambda _row: self._update_buttons())
        self.empty = QLabel(
            "Nothing waits for you. Approvals, budget questions, gates and failed steps "
            "of your runs appear here."
        )
        self.empty.setObjectName("Secondary")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.open_button = QPushButton("Open")
        self.open_button.clicked.connect(self.open_current)
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.setToolTip("Take this failed step off the list")
        self.dismiss_button.clicked.connect(self._dismiss_current)
        top = QHBoxLayout()
        top.addWidget(title)
        top.addWidget(self.count)
        top.addStretch(1)
        top.addWidget(self.dismiss_button)
        top.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 14)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty, 1)
        model.changed.connect(lambda _count: self.refresh())
        self.refresh()

    # -- public API ----------------------------------------------------------------------

    def keys(self) -> list[str]:
        return [
            self.list.item(row).data(Qt.ItemDataRole.UserRole) for row in range(self.list.count())
        ]

    def texts(self) -> list[str]:
        return [self.list.item(row).text() for row in range(self.list.count())]

    def refresh(self) -> None:
        current = self.list.currentItem()
        kept = current.data(Qt.ItemDataRole.UserRole) if current is not None else None
        self.list.clear()
        for attention in self.model.items:
            self.list.addItem(_row(attention))
        keys = self.keys()
        self.list.setCurrentRow(keys.index(kept) if kept in keys else 0)
        waiting = len(keys)
        self.count.setText(f"{waiting} item{'s' if waiting != 1 else ''}" if waiting else "")
        self.list.setVisible(bool(waiting))
        self.empty.setVisible(not waiting)
        self._update_buttons()

    def open_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.model.open(item.data(Qt.ItemDataRole.UserRole))

    # -- private -------------------------------------------------------------------------

    def _dismiss_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.model.dismiss(item.data(Qt.ItemDataRole.UserRole))

    def _update_buttons(self) -> None:
        item = self.list.currentItem()
        self.open_button.setEnabled(item is not None)
        self.dismiss_button.setEnabled(
            item is not None and str(item.data(Qt.ItemDataRole.UserRole)).startswith("failed:")
        )


def _row(attention: Attention) -> QListWidgetItem:
    item = QListWidgetItem(
        icons.icon(_ICONS[attention.kind]), f"{attention.headline()}\n{attention.why}"
    )
    item.setData(Qt.ItemDataRole.UserRole, attention.key)
    item.setToolTip(plain_tip(attention.why))
    return item
