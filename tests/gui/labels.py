"""How a label shows its text: as written, or as HTML (for tests of hostile text)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QWidget


def renders_as_html(label: QLabel) -> bool:
    """Qt's own rule: rich text, or the automatic format on a text that looks like HTML."""
    if label.textFormat() == Qt.TextFormat.RichText:
        return True
    automatic = label.textFormat() == Qt.TextFormat.AutoText
    return automatic and GuiQt.mightBeRichText(label.text())


def labels_with(root: QWidget, marker: str) -> list[QLabel]:
    """The labels under ``root`` whose text contains ``marker``."""
    return [label for label in root.findChildren(QLabel) if marker in label.text()]


def tip_shows(tip: str) -> str:
    """The text a tooltip shows: rendered as Qt's tooltip renders it (as HTML when it looks
    like HTML), read back as plain text."""
    if not GuiQt.mightBeRichText(tip):
        return tip
    document = QTextDocument()
    document.setHtml(tip)
    return document.toPlainText()
