"""The window's status bar: the active provider and model on the left, the working folder on
the right.

The model is read from settings (pydantic, yaml) only when :meth:`WindowStatus.update` is
called — after the first paint — so building the bar costs the first picture nothing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QStatusBar

from gui.theme import icons
from gui.widgets import PlainLabel


def model_status() -> tuple[str, str]:
    """(short text, tooltip) describing the active provider and model from settings."""
    from core.config.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as error:
        return "Settings problem: config.yaml could not be read", str(error)
    provider = settings.provider()
    model = settings.default_model
    if provider is None and model is None:
        return "No model configured", "Set a provider and default_model in config.yaml."
    where = f"{provider.name} · {provider.base_url}" if provider else "no provider"
    return f"{where} · {model or 'no default model'}", "Active provider and default model"


class WindowStatus:
    """The labels the window puts in its status bar, and how they are kept current."""

    def __init__(self, bar: QStatusBar, folder: Path) -> None:
        self.model_icon = QLabel()
        self.model_icon.setPixmap(icons.pixmap("model", 14))
        self.model_label = PlainLabel()
        self.model_label.setObjectName("ModelStatus")
        self.folder_label = PlainLabel()
        self.folder_label.setObjectName("FolderStatus")
        bar.setSizeGripEnabled(True)
        bar.addWidget(self.model_icon)
        bar.addWidget(self.model_label, 1)
        bar.addPermanentWidget(self.folder_label)
        self.show_folder(folder)

    def update(self, folder: Path) -> None:
        """Read the settings again (they may have been edited) and show them with ``folder``."""
        text, tooltip = model_status()
        self.model_label.setText(text)
        self.model_label.setToolTip(tooltip)
        self.show_folder(folder)

    def show_folder(self, folder: Path) -> None:
        home = Path.home()
        if folder == home or folder == Path(folder.anchor):
            # A desktop start with no project yet: say so rather than pass the home folder off
            # as one.
            self.folder_label.setText("No project: File ▸ Open Folder…")
            self.folder_label.setToolTip(f"Working in {folder}")
            return
        shown = f"~/{folder.relative_to(home)}" if folder.is_relative_to(home) else str(folder)
        self.folder_label.setText(f"Working folder: {shown}")
        self.folder_label.setToolTip(str(folder))
