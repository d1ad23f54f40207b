"""Which lines of a text view a person has selected: what a review comment is about (the
review dialog, the diff viewer)."""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit


def selected_lines(editor: QPlainTextEdit) -> tuple[int, int]:
    """First and last selected line of ``editor``, from 1 (the cursor's line when nothing
    is selected)."""
    cursor = editor.textCursor()
    document = editor.document()
    first = document.findBlock(cursor.selectionStart()).blockNumber() + 1
    end = cursor.selectionEnd()
    last = document.findBlock(end).blockNumber() + 1
    if cursor.hasSelection() and last > first and document.findBlock(end).position() == end:
        last -= 1  # a selection ending at a line's start does not take that line in
    return first, last
