"""Marking search matches in the text widgets under a widget: "this is what you searched for".

A search result names a step and a passage; after the run view has scrolled there, every
``QTextEdit`` / ``QPlainTextEdit`` under the step's pane (the Markdown answer, a tool call's
arguments and output) gets its matches marked as layout formats — bold on a warm tint, which
does not touch the text, the person's own selection or the document — and the first one is
scrolled to. Patterns are the core's (:attr:`core.history.run_search.SearchResult.patterns`, Python
``re``), applied to each document's plain text, whose positions are the document's cursor
positions.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QRect
from PySide6.QtGui import (
    QFont,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextLayout,
)
from PySide6.QtWidgets import QPlainTextEdit, QScrollArea, QTextEdit, QWidget

from gui import theme

MATCH_HUE = theme.SEVERITY_HUES["warning"]


class _Marks(QSyntaxHighlighter):
    """Marks a pattern's matches in each block as layout formats: real bold (extra selections
    only paint, so bold there would not be laid out), and the document itself untouched."""

    def __init__(self, document: QTextDocument, finder: re.Pattern[str], fmt: QTextCharFormat):
        super().__init__(document)
        self.finder = finder
        self.fmt = fmt

    def highlightBlock(self, text: str) -> None:
        for match in self.finder.finditer(text):
            if match.end() > match.start():
                self.setFormat(match.start(), match.end() - match.start(), self.fmt)


def match_finder(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One expression for every pattern, the longest tried first, case ignored."""
    return re.compile("|".join(sorted(patterns, key=len, reverse=True)), re.IGNORECASE)


def highlight_matches(root: QWidget, patterns: tuple[str, ...]) -> int:
    """Mark every match of ``patterns`` in the text widgets under ``root`` (replacing earlier
    marks); returns how many were marked. The first marked widget scrolls to its first match."""
    if not patterns:
        return 0
    finder = match_finder(patterns)
    fmt = QTextCharFormat()
    fmt.setBackground(theme.tint(root.palette(), MATCH_HUE, 0.45))
    fmt.setFontWeight(QFont.Weight.Bold)  # as in the search results; not by colour alone
    total = 0
    for editor in _editors(root):
        document = editor.document()
        marks = document.findChild(_Marks)
        if marks is None:
            marks = _Marks(document, finder, fmt)
        else:
            marks.finder, marks.fmt = finder, fmt
        marks.rehighlight()
        found = [m for m in finder.finditer(document.toPlainText()) if m.end() > m.start()]
        if found and not total:
            first = QTextCursor(document)
            first.setPosition(found[0].start())
            editor.setTextCursor(first)
            editor.ensureCursorVisible()
            _reveal_in_scroll_area(editor, editor.cursorRect(first))
        total += len(found)
    return total


def _reveal_in_scroll_area(editor: QTextEdit | QPlainTextEdit, cursor: QRect) -> None:
    """Scroll the area holding ``editor`` to its ``cursor``: an editor as tall as its text (a
    Markdown answer in the run view) has nothing to scroll itself, so a match deep in a long
    answer would stay out of sight — and a long answer's segments out of sight are parked,
    their marks with them."""
    area = editor.parentWidget()
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    content = area.widget() if area is not None else None
    if area is None or content is None or not content.isAncestorOf(editor):
        return
    center = editor.viewport().mapTo(content, cursor.center())
    area.ensureVisible(center.x(), center.y(), 0, area.viewport().height() // 3)


def _ranges(root: QWidget) -> list[tuple[str, QTextLayout.FormatRange]]:
    """Every mark under ``root``: its text and its format range."""
    found: list[tuple[str, QTextLayout.FormatRange]] = []
    for editor in _editors(root):
        if editor.document().findChild(_Marks) is None:
            continue
        block = editor.document().begin()
        while block.isValid():
            for mark in block.layout().formats():
                found.append((block.text()[mark.start : mark.start + mark.length], mark))
            block = block.next()
    return found


def marked_texts(root: QWidget) -> list[str]:
    """The text of every mark under ``root`` (what a person sees highlighted; for tests)."""
    return [text for text, _mark in _ranges(root)]


def marked_weights(root: QWidget) -> list[int]:
    """The font weight of every mark under ``root`` (for tests)."""
    return [mark.format.fontWeight() for _text, mark in _ranges(root)]


def _editors(root: QWidget) -> list[QTextEdit | QPlainTextEdit]:
    return [*root.findChildren(QTextEdit), *root.findChildren(QPlainTextEdit)]
