"""Where a double-clicked Baton says what went wrong: a log file in the data folder.

An app started from a desktop menu has no terminal, so its stderr goes nowhere anyone looks.
Warnings and errors (start-up problems, uncaught errors in slots, the login shell's failure)
also go to ``<data folder>/logs/baton.log`` (rotated, so it never grows without bound), a
start-up error is shown in a dialog that names the file, and Help ▸ Open Log Folder opens it.
"""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from types import TracebackType

LOG_NAME = "baton.log"
MAX_BYTES = 1_000_000
BACKUPS = 3

log = logging.getLogger("baton")


def log_folder() -> Path:
    """``<data folder>/logs``, created."""
    from core.config.paths import data_dir

    folder = data_dir() / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def log_file() -> Path:
    return log_folder() / LOG_NAME


def start_logging() -> Path | None:
    """Send Baton's log records to the log file (once per process); its path, or None when
    the data folder cannot be written (the app runs anyway)."""
    from logging.handlers import RotatingFileHandler  # not needed before the first paint

    try:
        path = log_file()
        if any(isinstance(h, RotatingFileHandler) for h in log.handlers):
            return path
        handler = RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, delay=True)
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return path


def log_exception(
    context: str,
    kind: type[BaseException],
    error: BaseException,
    tb: TracebackType | None,
) -> None:
    start_logging()
    text = "".join(traceback.format_exception(kind, error, tb))
    log.error("%s\n%s", context, text.rstrip())


def show_startup_error(error: BaseException) -> None:
    """A dialog saying Baton could not start, and where the details are."""
    from PySide6.QtWidgets import QApplication, QMessageBox

    if QApplication.instance() is None:
        return
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    box = QMessageBox(
        QMessageBox.Icon.Critical,
        "Baton could not start",
        f"Baton could not start: {message}",
    )
    box.setInformativeText(f"The details are in {log_file()}.")
    box.exec()
