"""Light, dark or the system's colours: the person's choice of colour scheme, applied live.

The choice is a window preference, so it lives in QSettings (architecture: "File formats":
window state goes in QSettings), not in ``config.yaml``. ``system`` follows the desktop's
light/dark setting (Qt ≥ 6.5 reports it); ``light`` and ``dark`` set a Fusion palette of their
own, so the choice also holds where the platform reports nothing (Xvfb, some desktops). Every
colour Baton paints is derived from the palette (:mod:`gui.theme`), so switching the palette is
switching the theme: widgets that listen for palette changes restyle themselves.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from gui.theme import apply_theme

Scheme = Literal["system", "light", "dark"]
SCHEMES: dict[Scheme, str] = {
    "system": "Same as the system",
    "light": "Light",
    "dark": "Dark",
}
"""The choices, with the words the Settings dialog shows for them."""
SETTINGS_KEY = "appearance/theme"


def saved_scheme(settings: QSettings) -> Scheme:
    """The scheme chosen last time; ``system`` when none was (or the value is unknown)."""
    value = settings.value(SETTINGS_KEY, "system")
    for scheme in SCHEMES:
        if value == scheme:
            return scheme
    return "system"


def save_scheme(settings: QSettings, scheme: Scheme) -> None:
    settings.setValue(SETTINGS_KEY, scheme)
    settings.sync()


def dark_palette() -> QPalette:
    """Fusion's roles in dark greys with a blue accent: readable text, visible disabled text."""
    palette = QPalette()
    window, base, text = QColor(45, 45, 48), QColor(30, 30, 32), QColor(230, 230, 230)
    disabled = QColor(130, 130, 130)
    roles = {
        QPalette.ColorRole.Window: window,
        QPalette.ColorRole.WindowText: text,
        QPalette.ColorRole.Base: base,
        QPalette.ColorRole.AlternateBase: QColor(40, 40, 43),
        QPalette.ColorRole.ToolTipBase: QColor(55, 55, 58),
        QPalette.ColorRole.ToolTipText: text,
        QPalette.ColorRole.PlaceholderText: QColor(150, 150, 150),
        QPalette.ColorRole.Text: text,
        QPalette.ColorRole.Button: QColor(55, 55, 58),
        QPalette.ColorRole.ButtonText: text,
        QPalette.ColorRole.BrightText: QColor(255, 90, 90),
        QPalette.ColorRole.Link: QColor(110, 170, 255),
        QPalette.ColorRole.LinkVisited: QColor(170, 140, 255),
        QPalette.ColorRole.Highlight: QColor(53, 122, 220),
        QPalette.ColorRole.HighlightedText: QColor(255, 255, 255),
        QPalette.ColorRole.Light: QColor(75, 75, 78),
        QPalette.ColorRole.Midlight: QColor(62, 62, 65),
        QPalette.ColorRole.Mid: QColor(40, 40, 42),
        QPalette.ColorRole.Dark: QColor(25, 25, 27),
        QPalette.ColorRole.Shadow: QColor(0, 0, 0),
    }
    for role, color in roles.items():
        palette.setColor(role, color)
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return palette


def apply_scheme(app: QApplication, scheme: Scheme) -> None:
    """Colour the whole application in ``scheme`` now, and its style sheet with it."""
    hints = QGuiApplication.styleHints()
    wanted = {
        "system": Qt.ColorScheme.Unknown,
        "light": Qt.ColorScheme.Light,
        "dark": Qt.ColorScheme.Dark,
    }[scheme]
    hints.setColorScheme(wanted)
    style = app.style()
    if scheme == "dark":
        app.setPalette(dark_palette())
    elif scheme == "light":
        app.setPalette(style.standardPalette() if style is not None else QPalette())
    else:
        app.setPalette(QPalette())  # no roles set: the platform's own palette again
    apply_theme(app)
