"""SVG icons from ``resources/icons``, tinted to the palette.

Monochrome icons are drawn with ``currentColor``; :func:`icon` fills it with the palette's text
colour (or one given), so the same files work on light and dark backgrounds. Coloured icons
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


class _SvgIconEngine(QIconEngine):
    """Renders an SVG (and its disabled variant) at each size the first time it is asked."""

    def __init__(self, normal: str, disabled: str) -> None:
        super().__init__()
        self._normal, self._disabled = normal, disabled
        self._pixmaps: dict[tuple[bool, int, int], QPixmap] = {}

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        disabled = mode == QIcon.Mode.Disabled
        key = (disabled, size.width(), size.height())
        found = self._pixmaps.get(key)
        if found is None:
            side = min(size.width(), size.height())  # icons are square: no stretching
            svg = self._disabled if disabled else self._normal
            found = self._pixmaps[key] = _render(svg, QSize(side, side))
        return found

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        ratio = painter.device().devicePixelRatioF() if painter.device() is not None else 1.0
        size = QSize(round(rect.width() * ratio), round(rect.height() * ratio))
        painter.drawPixmap(rect, self.pixmap(size, mode, state))

    def clone(self) -> QIconEngine:
        return _SvgIconEngine(self._normal, self._disabled)


@cache
def _icon(name: str, color: str, disabled_color: str) -> QIcon:
    source = _svg_source(name)
    engine = _SvgIconEngine(
        source.replace("currentColor", color), source.replace("currentColor", disabled_color)
    )
    _ENGINES.append(engine)  # Python owns the engine: keep it as long as the cached icon
    return QIcon(engine)


_ENGINES: list[_SvgIconEngine] = []


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
