"""SVG icons from ``resources/icons``, tinted to the palette.

Monochrome icons are drawn with ``currentColor``; :func:`icon` fills it with the palette's text
colour (or one given), so the same files work on light and dark backgrounds. The palette's colour
is read when the icon is drawn, not when it is made: after a light ↔ dark switch every icon
already on screen (sidebar, buttons, menus) is drawn in the new text colour. Coloured icons
(severities, the app icon) carry their own colours and are used as they are. An icon renders
through QSvgRenderer at the size it is drawn at, when it is first drawn at that size
(:class:`_SvgIconEngine`): sharp at any size and screen, and start-up renders no size nobody
looks at (rendering eight sizes of every icon up front took a quarter of a second).
"""

from __future__ import annotations

from functools import cache

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QIconEngine, QImage, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from core.config.resources import builtin_dir
from gui.theme import mix


@cache
def _svg_source(name: str) -> str:
    return (builtin_dir("icons") / f"{name}.svg").read_text(encoding="utf-8")


def _render(svg: str, size: QSize) -> QPixmap:
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size.width(), size.height()))
    painter.end()
    return QPixmap.fromImage(image)


def _palette_colors() -> tuple[str, str]:
    """The application palette's text colour and its disabled variant, as names (worked out
    once per palette: this runs for every icon drawn)."""
    palette = QApplication.palette()
    key = palette.cacheKey()
    if _COLORS.get(key) is None:
        text = palette.color(QPalette.ColorRole.WindowText)
        disabled = mix(text, palette.color(QPalette.ColorRole.Window), 0.6)
        _COLORS.clear()
        _COLORS[key] = (text.name(), disabled.name())
    return _COLORS[key]


_COLORS: dict[int, tuple[str, str]] = {}


class _SvgIconEngine(QIconEngine):
    """Renders an SVG (and its disabled variant) at each size and colour the first time it is
    asked. ``color`` None: the application palette's text colour at the time of drawing."""

    def __init__(self, source: str, color: str | None) -> None:
        super().__init__()
        self._source, self._color = source, color
        self._pixmaps: dict[tuple[str, int, int], QPixmap] = {}

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        text, disabled = _palette_colors()
        color = disabled if mode == QIcon.Mode.Disabled else self._color or text
        key = (color, size.width(), size.height())
        found = self._pixmaps.get(key)
        if found is None:
            side = min(size.width(), size.height())  # icons are square: no stretching
            svg = self._source.replace("currentColor", color)
            found = self._pixmaps[key] = _render(svg, QSize(side, side))
        return found

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        size = QSize(round(rect.width() * ratio), round(rect.height() * ratio))
        painter.drawPixmap(rect, self.pixmap(size, mode, state))

    def clone(self) -> QIconEngine:
        return _SvgIconEngine(self._source, self._color)


@cache
def _icon(name: str, color: str | None) -> QIcon:
    engine = _SvgIconEngine(_svg_source(name), color)
    _ENGINES.append(engine)  # Python owns the engine: keep it as long as the cached icon
    return QIcon(engine)


_ENGINES: list[_SvgIconEngine] = []


def icon(name: str, color: QColor | None = None) -> QIcon:
    """The icon ``resources/icons/<name>.svg``; monochrome ones drawn in ``color``.

    ``color`` defaults to the application palette's text colour, whichever it is when drawn.
    """
    return _icon(name, color.name() if color is not None else None)


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
