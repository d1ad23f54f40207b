"""What the screenshot scripts share: a throwaway home (Baton's config and data folders under
it and one Ollama provider configured, so a picture never shows or changes the real user's
runs), the wait before a picture and the capture of the screen."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:  # Baton is imported after scratch_home() has set its folders
    from gui.window.main_window import MainWindow


def scratch_home(name: str) -> Path:
    """Empty ``<tmp>/<name>``, point HOME and Baton's folders into it, and return it. Call
    before anything of Baton's is imported: the folders are read from the environment."""
    scratch = Path(tempfile.gettempdir()) / name
    shutil.rmtree(scratch, ignore_errors=True)
    for variable, sub in (("HOME", "home"), ("BATON_CONFIG_DIR", "home/.config/baton"),
                          ("BATON_DATA_DIR", "home/.local/share/baton")):  # fmt: skip
        os.environ[variable] = str(scratch / sub)
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    (scratch / "home/.config/baton/config.yaml").write_text(
        "providers:\n  - name: ollama\n    base_url: http://127.0.0.1:11434/v1\n"
        "default_model: qwen2.5-coder:7b\n",
        encoding="utf-8",
    )
    return scratch


def open_window(folder: Path, view: str, width: int, height: int) -> MainWindow:
    """Baton's main window on ``view``, ``width`` × ``height`` at the screen's corner, with
    its window settings kept in ``folder`` (never the user's)."""
    from PySide6.QtCore import QSettings

    from gui.window.main_window import MainWindow

    settings = QSettings(str(folder / "gui.ini"), QSettings.Format.IniFormat)
    window = MainWindow(folder, settings)
    window.setGeometry(0, 0, width, height)
    window.show()
    window.show_view(view)
    return window


def settle(milliseconds: int = 300, until: Callable[[], bool] | None = None) -> None:
    """Let layouts, fonts, charts and queued work finish before a picture: the event loop
    runs until ``until()`` holds (5 s at most), then ``milliseconds`` more."""
    for _ in range(50):
        if until is None or until():
            break
        _spin(100)
    _spin(milliseconds)


def _spin(milliseconds: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(milliseconds, loop.quit)
    loop.exec()


def save_screen(window: QWidget, output: Path) -> None:
    """The whole screen with ImageMagick's ``import`` on an X display (the window as the
    desktop draws it, shadows and all), else the window's own grab."""
    output.parent.mkdir(parents=True, exist_ok=True)
    if shutil.which("import") and os.environ.get("DISPLAY"):
        subprocess.run(["import", "-window", "root", str(output)], check=True)
    else:
        window.grab().save(str(output))
    print(output)
