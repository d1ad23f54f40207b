"""Marking search matches in the text widgets under a widget: "this is what you searched for".

A search result names a step and a passage; after the run view has scrolled there, every
``QTextEdit`` / ``QPlainTextEdit`` under the step's pane (the Markdown answer, a tool call's
arguments and output) gets its matches marked as extra selections — a warm tint that does not
touch the text, the person's own selection or the document — and the first one is scrolled to.
Patterns are the core's (:attr:`core.run_search.SearchResult.patterns`, Python ``re``), applied
to each document's plain text, whose positions are the document's cursor positions.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from gui import theme

MATCH_HUE = theme.SEVERITY_HUES["warning"]


def highlight_matches(root: QWidget, patterns: tuple[str, ...]) -> int:
    """Mark every match of ``patterns`` in the text widgets under ``root`` (replacing earlier
    marks); returns how many were marked. The first marked widget scrolls to its first match."""
    if not patterns:
        return 0
    finder = re.compile("|".join(sorted(patterns, key=len, reverse=True)), re.IGNORECASE)
    fmt = QTextCharFormat()
    fmt.setBackground(theme.tint(root.palette(), MATCH_HUE, 0.45))
    total = 0
    for editor in _editors(root):
        document = editor.document()
        marks: list[QTextEdit.ExtraSelection] = []
        for match in finder.finditer(document.toPlainText()):
            if match.end() == match.start():
                continue
            cursor = QTextCursor(document)
            cursor.setPosition(match.start())
            cursor.setPosition(match.end(), QTextCursor.MoveMode.KeepAnchor)
            mark = QTextEdit.ExtraSelection()
            mark.cursor = cursor
            mark.format = fmt
            marks.append(mark)
        editor.setExtraSelections(marks)
        if marks and not total:
            first = QTextCursor(marks[0].cursor)
            first.clearSelection()
            editor.setTextCursor(first)
            editor.ensureCursorVisible()
        total += len(marks)
    return total


def marked_texts(root: QWidget) -> list[str]:
    """The text of every mark under ``root`` (what a person sees highlighted; for tests)."""
    return [mark.cursor.selectedText() for e in _editors(root) for mark in e.extraSelections()]


def _editors(root: QWidget) -> list[QTextEdit | QPlainTextEdit]:
    return [*root.findChildren(QTextEdit), *root.findChildren(QPlainTextEdit)]
