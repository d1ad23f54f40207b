"""A unified diff, coloured: added lines green, removed lines red, headers muted.

The approval dialog shows what an ``edit`` or ``write`` call would change
(:func:`core.tools.diffs.preview_diff`) and what a ``document`` update would do to a stored
text. Colours come from the palette through :mod:`gui.theme` (a tint of the base colour for
the line background, a readable hue for the text), so the view reads well in light and dark
schemes; it re-colours itself when the palette changes.

Line backgrounds are block formats, which ``QPlainTextEdit`` paints across the full width, so
a changed line is a band, not a highlight that stops where the text ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gui import theme

LineKind = Literal["added", "removed", "hunk", "header", "note", "context"]

_HUE_ADDED = theme.SEVERITY_HUES["ok"]
_HUE_REMOVED = theme.SEVERITY_HUES["error"]
_HUE_HUNK = theme.SEVERITY_HUES["info"]


def line_kind(line: str) -> LineKind:
    """What a line of a unified diff is, by its first characters."""
    if line.startswith(("--- ", "+++ ")):
        return "header"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "added"
    if line.startswith("-"):
        return "removed"
    if line.startswith(("\\", "[", "(")):
        return "note"  # "\ No newline at end of file", "[diff cut …]", "(no preview: …)"
    return "context"


@dataclass(frozen=True)
class DiffColors:
    """The colours of each line kind on one palette (background None: the base colour)."""

    foreground: dict[LineKind, QColor]
    background: dict[LineKind, QColor | None]

    @classmethod
    def for_palette(cls, palette: QPalette) -> DiffColors:
        dark = theme.is_dark(palette)
        text = palette.color(QPalette.ColorRole.Text)
        muted = theme.secondary_text(palette)
        return cls(
            foreground={
                "added": theme.foreground(palette, _HUE_ADDED),
                "removed": theme.foreground(palette, _HUE_REMOVED),
                "hunk": theme.foreground(palette, _HUE_HUNK, 0.45),
                "header": muted,
                "note": muted,
                "context": text,
            },
            background={
                "added": theme.tint(palette, _HUE_ADDED, 0.24 if dark else 0.13),
                "removed": theme.tint(palette, _HUE_REMOVED, 0.24 if dark else 0.11),
                "hunk": theme.tint(palette, _HUE_HUNK, 0.12 if dark else 0.06),
                "header": None,
                "note": None,
                "context": None,
            },
        )


class DiffView(QPlainTextEdit):
    """Read-only, selectable, monospace view of one unified diff."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DiffView")
        self.setReadOnly(True)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setWordWrapMode(QTextOption.WrapMode.NoWrap)
        self.setFont(theme.monospace_font())
        self._diff = ""

    # -- public API ----------------------------------------------------------------------

    def set_diff(self, diff: str) -> None:
        """Show ``diff`` (a unified diff, or a one-line note such as "(no change: …)")."""
        self._diff = diff
        self._render()

    def diff(self) -> str:
        return self._diff

    def line_kinds(self) -> list[LineKind]:
        """The kind of every shown line, top to bottom (tests and accessibility)."""
        return [line_kind(line) for line in self._lines()]

    def colors(self) -> DiffColors:
        return DiffColors.for_palette(self.palette())

    # -- Qt overrides --------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._render()

    # -- private -------------------------------------------------------------------------

    def _lines(self) -> list[str]:
        return self._diff.rstrip("\n").split("\n") if self._diff else []

    def _render(self) -> None:
        colors = self.colors()
        self.clear()
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        for number, line in enumerate(self._lines()):
            kind = line_kind(line)
            block = QTextBlockFormat()
            background = colors.background[kind]
            if background is not None:
                block.setBackground(background)
            chars = QTextCharFormat()
            chars.setForeground(colors.foreground[kind])
            if kind in ("header", "hunk"):
                chars.setFontWeight(QFont.Weight.DemiBold)
            if number == 0:
                cursor.setBlockFormat(block)
                cursor.setCharFormat(chars)
            else:
                cursor.insertBlock(block, chars)
            cursor.insertText(line, chars)
        cursor.endEditBlock()
        self.moveCursor(QTextCursor.MoveOperation.Start)
