"""The filter bar above the documents table: search box, type switch, tag filter, New.

Typing is debounced (:data:`SEARCH_DELAY_MS`): one query per pause, not one per key, so a
fast typist never queues a search per character. Changing the type or the tag applies at once.
Everything the bar knows is read through :meth:`DocumentFilters.query`.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from gui.theme import icons

SEARCH_DELAY_MS = 200
ONE_ROW_WIDTH = 760
"""At least this wide, the bar is one row; narrower, the search box sits above the rest."""
TYPE_CHOICES: tuple[tuple[str, str | None, str], ...] = (
    ("All", None, "Show memories and documents"),
    ("Memory", "memory", "Show memories only: what agents remember between runs"),
    ("Document", "document", "Show documents only: deliverables agents produced"),
)
ALL_TAGS = "All tags"


@dataclass(frozen=True)
class DocumentQuery:
    """What to show: the search text (blank: newest first), type, tag, page (1-based)."""

    text: str = ""
    type: str | None = None
    tag: str | None = None
    page: int = 1

    @property
    def searching(self) -> bool:
        return bool(self.text.strip())

    @property
    def filtered(self) -> bool:
        return self.searching or self.type is not None or self.tag is not None


class DocumentFilters(QWidget):
    """See the module docstring. Signals are emitted on the GUI thread."""

    changed = Signal()
    """The query changed (after the typing pause for the search box)."""
    newRequested = Signal()
    """The New button was clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DocumentFilters")
        self.search_field = QLineEdit()
        self.search_field.setObjectName("FilterField")
        self.search_field.setPlaceholderText("Search titles, text and tags — any language")
        self.search_field.setClearButtonEnabled(True)
        self.search_field.addAction(icons.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.search_field.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

        self.type_buttons = QButtonGroup(self)
        self.type_buttons.setExclusive(True)
        type_row = QHBoxLayout()
        type_row.setSpacing(0)
        for number, (label, _type, tip) in enumerate(TYPE_CHOICES):
            button = QToolButton()
            button.setText(label)
            button.setCheckable(True)
            button.setObjectName("TypeButton")
            button.setToolTip(tip)
            button.setChecked(number == 0)
            self.type_buttons.addButton(button, number)
            type_row.addWidget(button)

        self.tag_combo = QComboBox()
        self.tag_combo.setObjectName("TagFilter")
        self.tag_combo.setToolTip("Show only documents with this tag")
        self.tag_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.tag_combo.setMinimumContentsLength(8)
        self.tag_combo.addItem(ALL_TAGS, None)

        self.new_button = QPushButton(icons.icon("add"), "New")
        self.new_button.setToolTip("Write a memory or document by hand")

        # One row when there is room; two (search above the switches) when the pane is narrow.
        filter_row = QHBoxLayout()
        filter_row.setSpacing(8)
        filter_row.addLayout(type_row)
        filter_row.addStretch(1)
        filter_row.addWidget(self.tag_combo)
        filter_row.addWidget(self.new_button)
        self._layout = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._layout.setContentsMargins(8, 8, 8, 6)
        self._layout.setSpacing(8)
        self._layout.addWidget(self.search_field, 3)
        self._layout.addLayout(filter_row, 2)
        self.setStyleSheet(
            "QToolButton#TypeButton { padding: 4px 10px; }"
            "QToolButton#TypeButton:checked { font-weight: 600; }"
        )

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DELAY_MS)
        self._timer.timeout.connect(self.changed)
        self.search_field.textChanged.connect(lambda _text: self._timer.start())
        self.search_field.returnPressed.connect(self._apply_now)
        self.type_buttons.idClicked.connect(lambda _id: self._apply_now())
        self.tag_combo.activated.connect(lambda _index: self._apply_now())
        self.new_button.clicked.connect(self.newRequested)

        find = QAction(self)
        find.setShortcut(QKeySequence.StandardKey.Find)
        find.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.triggered.connect(self.focus_search)
        self.addAction(find)

    # -- public API ----------------------------------------------------------------------

    def query(self, page: int = 1) -> DocumentQuery:
        checked = max(0, self.type_buttons.checkedId())
        return DocumentQuery(
            text=self.search_field.text(),
            type=TYPE_CHOICES[checked][1],
            tag=self.tag_combo.currentData(),
            page=page,
        )

    def type_button(self, label: str) -> QToolButton:
        """The type switch's button labelled ``label`` (All, Memory, Document)."""
        for button in self.type_buttons.buttons():
            if button.text() == label and isinstance(button, QToolButton):
                return button
        raise KeyError(label)

    def search_pending(self) -> bool:
        """Typed text not searched for yet (the pause has not passed)."""
        return self._timer.isActive()

    def focus_search(self) -> None:
        self.search_field.setFocus()
        self.search_field.selectAll()

    def set_tags(self, tags: list[tuple[str, int]]) -> None:
        """Offer ``(tag, uses)`` pairs; the chosen tag stays chosen (even if now unused, so
        the filter never changes under a person's hands)."""
        chosen = self.tag_combo.currentData()
        offered = [(tag, uses) for tag, uses in tags]
        if chosen is not None and all(tag.casefold() != chosen.casefold() for tag, _ in offered):
            offered.append((chosen, 0))
        current = [
            (self.tag_combo.itemData(i), self.tag_combo.itemText(i))
            for i in range(1, self.tag_combo.count())
        ]
        wanted = [(tag, f"{tag}  ({uses})" if uses else tag) for tag, uses in offered]
        if current == wanted:
            return
        self.tag_combo.blockSignals(True)
        try:
            self.tag_combo.clear()
            self.tag_combo.addItem(ALL_TAGS, None)
            for tag, text in wanted:
                self.tag_combo.addItem(text, tag)
            index = self.tag_combo.findData(chosen) if chosen is not None else 0
            self.tag_combo.setCurrentIndex(max(0, index))
        finally:
            self.tag_combo.blockSignals(False)

    def tags(self) -> list[str]:
        return [self.tag_combo.itemData(i) for i in range(1, self.tag_combo.count())]

    # -- Qt overrides --------------------------------------------------------------------

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        wide = event.size().width() >= ONE_ROW_WIDTH
        direction = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if self._layout.direction() != direction:
            self._layout.setDirection(direction)
            self._layout.setSpacing(8 if wide else 6)

    # -- private -------------------------------------------------------------------------

    def _apply_now(self) -> None:
        self._timer.stop()
        self.changed.emit()
