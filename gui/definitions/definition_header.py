"""The part every definition header shares: name, badges, path and Duplicate / Delete / Save.

The agent header (:mod:`gui.definitions.agent_header`) and the preset header
(:mod:`gui.definitions.preset_header`)
differ only in their middle rows (model and tools; the drawn chain and arguments). The title
row, the path and the read-only rules for built-ins live here once, so the two views cannot
drift apart in how a built-in, an override or unsaved edits look.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gui.definitions.agent_rows import SOURCE_LABELS
from gui.theme import icons
from gui.widgets import Badge, ElidedLabel
from gui.widgets.compact import CollapsingToolButton

TITLE_KEPT = 110
"""Width (px) of a definition's name kept whole in a narrow header."""


class DefinitionHeader(QWidget):
    """The shared widgets; subclasses lay them out with :meth:`_lay_out` and fill the middle.

    ``noun`` ("agent", "preset") words the tooltips of the read-only actions.
    """

    def __init__(self, noun: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._noun = noun
        self.setObjectName("PaneHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        # A long name gives way (whole in the tooltip) after Duplicate and Delete drop their
        # labels: the header fits an 800 px window with the list beside it.
        self.title = ElidedLabel("", Qt.TextElideMode.ElideRight, prefer_full=True, keep=TITLE_KEPT)
        self.title.setObjectName("EditorTitle")
        self.source_badge = Badge()
        self.override_badge = Badge(tone="override")
        self.override_badge.hide()  # shown by _show_common() when there is something to say
        self.dirty_mark = QLabel("● unsaved")
        self.dirty_mark.setObjectName("Secondary")
        self.dirty_mark.hide()
        self.path_label = ElidedLabel()
        self.path_label.setObjectName("Secondary")
        self.save_button = QPushButton(icons.icon("save"), "Save")
        self.save_button.setToolTip("Save (Ctrl+S)")
        self.save_button.setDefault(False)
        self.duplicate_button = self._tool("duplicate", "Duplicate")
        self.delete_button = self._tool("delete", "Delete")

    def set_dirty(self, dirty: bool) -> None:
        self.dirty_mark.setVisible(dirty)

    # -- for subclasses ------------------------------------------------------------------

    def _lay_out(
        self, spacing: int, badges: list[QWidget], rows: list[QHBoxLayout | QWidget]
    ) -> None:
        """Title row (``badges`` after the source badge), then ``rows`` top to bottom.

        Widgets join the focus chain in the order they reach the layout, so Tab walks the
        title row's actions before anything in ``rows``.
        """
        title_row = QHBoxLayout()
        self._title_row = title_row
        title_row.setSpacing(8)
        for widget in (self.title, self.source_badge, *badges, self.override_badge):
            title_row.addWidget(widget)
        title_row.addWidget(self.dirty_mark)
        title_row.addStretch(1)
        title_row.addWidget(self.duplicate_button)
        title_row.addWidget(self.delete_button)
        title_row.addSpacing(4)
        title_row.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 10, 12, 10)
        layout.setSpacing(spacing)
        layout.addLayout(title_row)
        for row in rows:
            if isinstance(row, QWidget):
                layout.addWidget(row)
            else:
                layout.addLayout(row)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_title_row(event.size().width())

    def _fit_title_row(self, width: int) -> None:
        """Duplicate and Delete drop their labels when the title row, labels and all, does not
        fit; only then does a long name give way (whole in its tooltip)."""
        row = getattr(self, "_title_row", None)
        layout = self.layout()
        if row is None or layout is None:
            return
        buttons = (self.duplicate_button, self.delete_button)
        labels = sum(b.full_width() - b.sizeHint().width() for b in buttons if b.is_collapsed())
        margins = layout.contentsMargins()
        wanted = row.sizeHint().width() + labels + margins.left() + margins.right()
        for button in buttons:
            button.set_collapsed(width < wanted)

    def _show_common(self, name: str | None, path: str, source: str, override_text: str) -> None:
        """Title (the file name when ``name`` is None: it did not parse), badges, path, actions."""
        self.title.set_full_text(name if name is not None else Path(path).name)
        self.source_badge.setText(SOURCE_LABELS.get(source, source))
        self.override_badge.setText(override_text)
        self.override_badge.setVisible(bool(override_text))
        self.path_label.set_full_text(path)
        read_only = source == "builtin"
        self.save_button.setVisible(not read_only)
        self.delete_button.setEnabled(not read_only)
        self.delete_button.setToolTip(
            f"Built-in {self._noun}s cannot be deleted"
            if read_only
            else "Move this file to the trash"
        )
        self.duplicate_button.setToolTip(
            "Make an editable copy in your user folder"
            if read_only
            else f"Make a copy of this {self._noun} next to it"
        )
        self._fit_title_row(self.width())  # another name, other badges: another row width

    @staticmethod
    def _tool(icon_name: str, text: str) -> CollapsingToolButton:
        return CollapsingToolButton(icons.icon(icon_name), text)
