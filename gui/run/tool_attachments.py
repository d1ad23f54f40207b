"""What a tool's result holds beyond text, in its open row: an MCP tool's images as pictures,
its structured content and resources as text.

The model reads the result text, where each image is only named (``[image: image/png, 69
bytes]``); a person sees the picture. Pictures are decoded once per call and scaled down to
:data:`MAX_SIDE` pixels; one too large to have been kept (see
:data:`core.tools.mcp_tool.ATTACHMENT_BYTES`) is named instead.
"""

from __future__ import annotations

import base64
import binascii

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from core.model.events import ToolAttachment
from gui.run.tool_output import MonospaceBox
from gui.theme import SEMIBOLD, set_font, set_tone
from gui.widgets import PlainLabel

MAX_SIDE = 240
"""Longest side of a picture in the row, in pixels."""


class ToolAttachments(QWidget):
    """Pictures in a row, then structured content and resources. GUI thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._shown: tuple[ToolAttachment, ...] = ()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self.pictures: list[QLabel] = []
        self.texts: list[MonospaceBox] = []
        self.hide()

    def update_from(self, attachments: list[ToolAttachment], result: str = "") -> None:
        """Show ``attachments`` (cheap when they are the ones shown); text that only repeats
        ``result`` (structured content that was the whole answer) is not shown twice."""
        attachments = [
            a
            for a in attachments
            if a.kind not in ("structured", "resource") or a.text.strip() != result.strip()
        ]
        if tuple(attachments) == self._shown:
            return
        self._shown = tuple(attachments)
        while (item := self._layout.takeAt(0)) is not None:
            widget = item.widget()
            if widget is not None:
                widget.deleteLater()
            inner = item.layout()
            if inner is not None:
                while (child := inner.takeAt(0)) is not None:
                    picture = child.widget()
                    if picture is not None:
                        picture.deleteLater()
        self.pictures, self.texts = [], []
        row = QHBoxLayout()
        row.setAlignment(Qt.AlignmentFlag.AlignLeft)
        for attachment in attachments:
            if attachment.kind in ("image", "audio"):
                row.addWidget(self._picture(attachment))
        if row.count():
            self._layout.addLayout(row)
        for attachment in attachments:
            if attachment.kind in ("structured", "resource") and attachment.text:
                title = "Structured content" if attachment.kind == "structured" else "Resource"
                label = PlainLabel(f"{title} {attachment.uri}".strip())
                set_font(label, weight=SEMIBOLD, pixel_size=11)
                set_tone(label, "secondary")
                box = MonospaceBox(max_lines=10)
                box.append_text(attachment.text)
                self._layout.addWidget(label)
                self._layout.addWidget(box)
                self.texts.append(box)
        self.setVisible(bool(attachments))

    def _picture(self, attachment: ToolAttachment) -> QLabel:
        label = QLabel()
        label.setObjectName("ToolPicture")
        pixmap = QPixmap()
        try:
            data = base64.b64decode(attachment.data, validate=False)
        except (binascii.Error, ValueError):
            data = b""
        if attachment.kind == "image" and data and pixmap.loadFromData(data):
            if max(pixmap.width(), pixmap.height()) > MAX_SIDE:
                pixmap = pixmap.scaled(
                    MAX_SIDE,
                    MAX_SIDE,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            label.setPixmap(pixmap)
            label.setToolTip(f"{attachment.mime_type}, {attachment.size:,} bytes")
        else:
            label.setText(f"[{attachment.kind}: {attachment.mime_type}, {attachment.size:,} bytes]")
        self.pictures.append(label)
        return label
