"""Colours, fonts and the style sheet, all derived from the active palette.

Baton uses Qt's Fusion style everywhere: it looks the same on Linux, macOS and Windows, follows
the system's light/dark colour scheme (Qt ≥ 6.5), and renders crisply under Xvfb where no
native theme exists. Nothing here hard-codes a background colour: every tint is a mix of two
palette roles, so the app stays readable in both palettes and in high-contrast themes.
"""

from __future__ import annotations

from string import Template

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from core.config.resources import builtin_dir

SEVERITY_HUES = {"error": 0, "warning": 38, "info": 212, "ok": 145}
"""Hues (degrees) for severity tints; lightness is chosen per palette by :func:`tint`."""

OVERRIDE_ACCENT = QColor.fromHslF(0.09, 0.8, 0.5)
"""The amber of "overrides ..." badges, in the list and in the editor header alike."""

STATUS_TEXT = {
    "running": (SEVERITY_HUES["info"], 0.7),
    "waiting": (SEVERITY_HUES["warning"], 0.85),
    "ok": (SEVERITY_HUES["ok"], 0.7),
    "error": (SEVERITY_HUES["error"], 0.7),
}
"""Hue and saturation of text that says how something went (a step's phase, a test's result)."""
TONE_PROPERTY = "textTone"
"""A widget's text tone (:func:`set_tone`): the style sheet colours it from the palette."""
TEXT_TONES = ("secondary", "link", *STATUS_TEXT)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def mix(first: QColor, second: QColor, amount: float) -> QColor:
    """``first`` moved ``amount`` (0..1) of the way towards ``second``."""
    amount = max(0.0, min(1.0, amount))
    return QColor.fromRgbF(
        first.redF() + (second.redF() - first.redF()) * amount,
        first.greenF() + (second.greenF() - first.greenF()) * amount,
        first.blueF() + (second.blueF() - first.blueF()) * amount,
        1.0,
    )


def foreground(palette: QPalette, hue: int, saturation: float = 0.65) -> QColor:
    """A readable text colour of ``hue`` on this palette's base (dark text on light, and back)."""
    lightness = 0.72 if is_dark(palette) else 0.36
    return QColor.fromHslF(hue / 360.0, saturation, lightness)


def tint(palette: QPalette, hue: int, strength: float = 0.14) -> QColor:
    """A soft background of ``hue``: the base colour with a little of the hue mixed in."""
    base = palette.color(QPalette.ColorRole.Base)
    return mix(base, QColor.fromHslF(hue / 360.0, 0.75, 0.5), strength)


def secondary_text(palette: QPalette) -> QColor:
    """Text for secondary lines (descriptions, paths): between text and background."""
    return mix(palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base), 0.42)


def tone_color(palette: QPalette, tone: str) -> QColor:
    """The text colour of ``tone`` (one of :data:`TEXT_TONES`) on this palette."""
    if tone == "link":
        return palette.color(QPalette.ColorRole.Link)
    if tone in STATUS_TEXT:
        hue, saturation = STATUS_TEXT[tone]
        return foreground(palette, hue, saturation)
    return secondary_text(palette)


def set_tone(widget: QWidget, tone: str | None) -> None:
    """Colour ``widget``'s text in ``tone`` (None: the palette's own text colour).

    A tone is a property the application style sheet paints (``*[textTone="error"]``), not a
    colour written into the widget's own style sheet: the sheet is rebuilt from the palette on a
    light ↔ dark switch, so the widget follows at once, and its own sheet keeps only sizes and
    weights (one parsed sheet fewer per label).
    """
    if widget.property(TONE_PROPERTY) != tone:
        widget.setProperty(TONE_PROPERTY, tone)
        repolish(widget)


def repolish(widget: QWidget) -> None:
    """Apply the style sheet again after a property its rules select on changed."""
    if widget.testAttribute(Qt.WidgetAttribute.WA_WState_Polished):  # else polished when shown
        style = widget.style()
        style.unpolish(widget)
        style.polish(widget)


SEMIBOLD = 600
"""The weight of headings and emphasis (``font-weight: 600`` in the style sheet)."""
NORMAL = 400


def set_font(widget: QWidget, *, weight: int | None = None, pixel_size: int | None = None) -> None:
    """Set ``widget``'s text weight and size (pixels) through its font, the rest inherited.

    Not a style sheet of the widget's own (``font-weight: 600``): under the application's
    sheet, every widget with a sheet of its own has it parsed and matched when polished —
    ten labels built and painted took 1.6–2.1 ms more that way than with a font (measured
    side by side), and a run view makes a few such labels for every step and item.
    """
    font = widget.font()
    if weight is not None:
        font.setWeight(QFont.Weight(weight))
    if pixel_size is not None:
        font.setPixelSize(pixel_size)
    widget.setFont(font)


def monospace_font(point_size_delta: int = 0) -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    if point_size_delta and font.pointSize() > 0:
        font.setPointSize(font.pointSize() + point_size_delta)
    return font


def stylesheet(palette: QPalette) -> str:
    """The application style sheet with its ``$tokens`` filled from ``palette``."""
    window = palette.color(QPalette.ColorRole.Window)
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    highlight = palette.color(QPalette.ColorRole.Highlight)
    dark = is_dark(palette)
    tokens = {
        "window": window.name(),
        "base": base.name(),
        "text": text.name(),
        "secondary": secondary_text(palette).name(),
        "highlight": highlight.name(),
        "highlighted_text": palette.color(QPalette.ColorRole.HighlightedText).name(),
        "sidebar": mix(window, text, 0.06 if dark else 0.035).name(),
        "sidebar_hover": mix(window, text, 0.12 if dark else 0.08).name(),
        "sidebar_selected": mix(window, highlight, 0.30 if dark else 0.16).name(),
        "sidebar_selected_text": (highlight.lighter(160) if dark else highlight.darker(135)).name(),
        "border": mix(window, text, 0.20 if dark else 0.16).name(),
        "header": mix(base, window, 0.6).name(),
        "badge_bg": mix(base, highlight, 0.22 if dark else 0.12).name(),
        "badge_text": (highlight.lighter(150) if dark else highlight.darker(130)).name(),
        "override_bg": mix(base, OVERRIDE_ACCENT, 0.25 if dark else 0.16).name(),
        "override_text": (
            OVERRIDE_ACCENT.lighter(150) if dark else OVERRIDE_ACCENT.darker(150)
        ).name(),
        "error_text": foreground(palette, SEVERITY_HUES["error"], 0.7).name(),
        "error_bg": tint(palette, SEVERITY_HUES["error"], 0.22 if dark else 0.10).name(),
        "error_border": tint(palette, SEVERITY_HUES["error"], 0.55).name(),
        "warning_bg": tint(palette, SEVERITY_HUES["warning"], 0.22 if dark else 0.13).name(),
        "warning_border": tint(palette, SEVERITY_HUES["warning"], 0.55).name(),
        "info_bg": tint(palette, SEVERITY_HUES["info"], 0.22 if dark else 0.10).name(),
        "info_border": tint(palette, SEVERITY_HUES["info"], 0.5).name(),
        "search_hit": mix(base, highlight, 0.3).name(),
        "scroll_handle": mix(base, text, 0.30 if dark else 0.24).name(),
        "scroll_handle_hover": mix(base, text, 0.45 if dark else 0.40).name(),
        "scroll_handle_pressed": mix(base, text, 0.58 if dark else 0.52).name(),
        **{f"tone_{tone}": tone_color(palette, tone).name() for tone in TEXT_TONES},
    }
    source = (builtin_dir("styles") / "app.qss").read_text(encoding="utf-8")
    return Template(source).safe_substitute(tokens)


def apply_theme(app: QApplication) -> None:
    """Baton's style sheet, in the application's palette's colours."""
    app.setStyleSheet(stylesheet(app.palette()))
