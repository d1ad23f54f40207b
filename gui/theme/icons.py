"""SVG icons from ``resources/icons``, tinted to the palette.

Monochrome icons are drawn with ``currentColor``; :func:`icon` fills it with the palette's text
colour (or one given), so the same files work on light and dark backgrounds. Coloured icons
(severities, the app icon) carry their own colours and are used as they are. Rendering goes
through QSvgRenderer at several sizes, so icons stay sharp on high-DPI screens.
"""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from core.resources import builtin_dir
from gui.theme import mix

_SIZES = (16, 20, 24, 32, 48, 64, 128, 256)


@cache
def _svg_source(name: str) -> str:
    return (builtin_dir("icons") / f"{name}.svg").read_text(encoding="utf-8")


def _render(svg: str, size: int) -> QPixmap:
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return QPixmap.fromImage(image)


@cache
def _icon(name: str, color: str, disabled_color: str) -> QIcon:
    source = _svg_source(name)
    result = QIcon()
    for size in _SIZES:
        result.addPixmap(_render(source.replace("currentColor", color), size))
        if "currentColor" in source:
            disabled = _render(source.replace("currentColor", disabled_color), size)
            result.addPixmap(disabled, QIcon.Mode.Disabled)
    return result


def icon(name: str, color: QColor | None = None) -> QIcon:
    """The icon ``resources/icons/<name>.svg``; monochrome ones drawn in ``color``.

    ``color`` defaults to the application palette's text colour.
    """
    palette = QApplication.palette()
    text = palette.color(QPalette.ColorRole.WindowText)
    chosen = color or text
    disabled = mix(text, palette.color(QPalette.ColorRole.Window), 0.6)
    return _icon(name, chosen.name(), disabled.name())


def pixmap(name: str, size: int, color: QColor | None = None) -> QPixmap:
    """One rendered size of :func:`icon`, for labels (device-pixel-ratio aware)."""
    screen = QApplication.primaryScreen()
    ratio = screen.devicePixelRatio() if screen is not None else 1.0
    result = icon(name, color).pixmap(size, size)
    if ratio != 1.0:
        result = icon(name, color).pixmap(int(size * ratio), int(size * ratio))
        result.setDevicePixelRatio(ratio)
    return result


def app_icon() -> QIcon:
    return icon("baton")
