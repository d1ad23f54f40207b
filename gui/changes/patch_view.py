"""One file's patch drawn as text: unified, or as the old and new side next to each other;
added and removed lines as coloured bands (the approval dialog's colours,
:class:`gui.widgets.diff_view.DiffColors`), code coloured by Pygments, line numbers in a
margin of the text.

Large patches are paged (:data:`PAGE_LINES` rows a page): a generated file with 50,000
changed lines shows its first page at once instead of freezing the window.
"""

from __future__ import annotations

from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QFont, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from core.workspace.patch_lines import PatchLine, Row
from gui import theme
from gui.widgets.diff_view import DiffColors, LineKind

PAGE_LINES = 400
"""Rows per page: a page renders in tens of milliseconds, with highlighting."""

Side = list[PatchLine | None]


@lru_cache(maxsize=64)
def _lexer(path: str) -> Lexer | None:
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def token_runs(path: str, texts: list[str]) -> list[list[tuple[int, int, _TokenType]]]:
    """Per line: (start, length, token type) of the code, lexed as one text so strings and
    comments spanning lines keep their colour."""
    lexer = _lexer(path)
    runs: list[list[tuple[int, int, _TokenType]]] = [[] for _ in texts]
    if lexer is None or not texts:
        return runs
    line = column = 0
    for kind, value in lexer.get_tokens("\n".join(texts)):
        for index, piece in enumerate(value.split("\n")):
            if index:
                line += 1
                column = 0
            if piece and line < len(runs):
                runs[line].append((column, len(piece), kind))
            column += len(piece)
    return runs


def _token_color(style_name: str, kind: _TokenType) -> QColor | None:
    style = get_style_by_name(style_name)
    while kind not in style.styles and kind.parent is not None:
        kind = kind.parent
    color = style.style_for_token(kind).get("color")
    return QColor(f"#{color}") if color else None


class PatchText(QPlainTextEdit):
    """Read-only text of patch rows with line numbers; one side of a side-by-side view, or
    the whole unified view."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(theme.monospace_font())
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.kinds: list[LineKind] = []
        """The kind of each shown line (tests, accessibility)."""
        self._shown: tuple[str, Side, bool] | None = None

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._shown is not None:
            path, lines, unified = self._shown  # drawn again in the new theme's colours
            self.show_lines(path, lines, unified=unified)

    def show_lines(self, path: str, lines: Side, *, unified: bool) -> None:
        """Draw ``lines`` (None: the blank beside a change on the other side)."""
        self._shown = (path, lines, unified)
        colors = DiffColors.for_palette(self.palette())
        style = "github-dark" if theme.is_dark(self.palette()) else "default"
        code = [line.text if line is not None and line.kind != "hunk" else "" for line in lines]
        runs = token_runs(path, code)
        self.clear()
        self.kinds = []
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        for number, (line, tokens) in enumerate(zip(lines, runs, strict=True)):
            kind: LineKind = _kind(line)
            self.kinds.append(kind)
            block = QTextBlockFormat()
            background = colors.background[kind]
            if background is not None:
                block.setBackground(background)
            plain = QTextCharFormat()
            plain.setForeground(colors.foreground["context" if kind != "hunk" else "hunk"])
            if number:
                cursor.insertBlock(block, plain)
            else:
                cursor.setBlockFormat(block)
            gutter = QTextCharFormat()
            gutter.setForeground(theme.secondary_text(self.palette()))
            cursor.insertText(_gutter(line, unified), gutter)
            if line is None:
                continue
            if kind in ("hunk", "note"):
                bold = QTextCharFormat(plain)
                bold.setFontWeight(QFont.Weight.DemiBold)
                bold.setForeground(colors.foreground[kind])
                cursor.insertText(line.text, bold)
                continue
            position = 0
            for start, length, token in tokens:
                if start > position:
                    cursor.insertText(line.text[position:start], plain)
                chars = QTextCharFormat(plain)
                color = _token_color(style, token)
                if color is not None:
                    chars.setForeground(color)
                cursor.insertText(line.text[start : start + length], chars)
                position = start + length
            cursor.insertText(line.text[position:], plain)
        cursor.endEditBlock()
        self.moveCursor(QTextCursor.MoveOperation.Start)


def _kind(line: PatchLine | None) -> LineKind:
    if line is None:
        return "note"
    return line.kind


def _gutter(line: PatchLine | None, unified: bool) -> str:
    if line is None or line.kind in ("hunk", "note"):
        return " " * (12 if unified else 6)
    marker = {"added": "+", "removed": "-"}.get(line.kind, " ")
    old = str(line.old) if line.old is not None else ""
    new = str(line.new) if line.new is not None else ""
    if unified:
        return f"{old:>5} {new:>5}{marker}"
    return f"{(new or old):>5}{marker}"


def split_rows(rows: list[Row]) -> tuple[Side, Side]:
    """The old side and the new side of side-by-side rows (hunk headers on both)."""
    return [row[0] for row in rows], [row[1] for row in rows]
