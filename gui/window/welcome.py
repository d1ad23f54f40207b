"""When the first-run welcome strip shows above the views, and what closes it.

The strip itself is :class:`~gui.window.welcome_panel.WelcomePanel`; this module only decides
(after the first paint: it reads settings) and wires it into the window. The panel's module
imports settings (pydantic, yaml), so it is imported here only when needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QVBoxLayout, QWidget

if TYPE_CHECKING:
    from gui.window.welcome_panel import WelcomePanel

DISMISSED = "welcome/dismissed"


class WelcomeBanner:
    """The welcome strip of one window, made the first time it is shown."""

    def __init__(
        self,
        parent: QWidget,
        layout: QVBoxLayout,
        settings: QSettings,
        open_settings: Callable[[], object],
        configured: Callable[[], None],
    ) -> None:
        """``layout`` gets the strip on top; ``open_settings`` is its "Settings…" button;
        ``configured`` is called when it closes because a model was set up."""
        self._parent = parent
        self._layout = layout
        self._settings = settings
        self._open_settings = open_settings
        self._configured = configured
        self.panel: WelcomePanel | None = None

    def show_if_needed(self) -> None:
        """Show the strip unless a model is set up or the person said "Not now"."""
        if _needs_welcome() and not self._settings.value(DISMISSED, False, bool):
            self.show()

    def show(self) -> None:
        """The strip above the views (again, after "Not now", from Help ▸ Welcome)."""
        self._settings.remove(DISMISSED)
        if self.panel is None:
            from gui.window.welcome_panel import WelcomePanel

            self.panel = WelcomePanel(self._parent)
            self.panel.configured.connect(self.close)
            self.panel.openSettingsRequested.connect(self._open_settings)
            self.panel.dismissed.connect(lambda: self._settings.setValue(DISMISSED, True))
            self._layout.insertWidget(0, self.panel)
        self.panel.show()
        # Ollama is probed on the asyncio loop, which runs only once Qt's loop does.
        QTimer.singleShot(0, self.panel.start_detection)

    def settings_saved(self) -> None:
        """Settings were saved: a strip on screen closes if they now name a model."""
        if self.panel is not None and not _needs_welcome():
            self.close()

    def close(self, _choice: str = "") -> None:
        if self.panel is not None:
            self.panel.stop()
            self.panel.hide()
        self._configured()


def _needs_welcome() -> bool:
    from gui.window.welcome_panel import needs_welcome

    return needs_welcome()
