"""Can a window be shown here? Asked before Qt is imported, because Qt aborts the process
(SIGABRT, core dump) when its platform plugin finds no display — a traceback-free one-line
explanation and exit status 2 serve the user better."""

from __future__ import annotations

import os
import sys


def display_problem() -> str | None:
    """None when a window can open; otherwise one line saying why not and what to do."""
    if not sys.platform.startswith("linux"):
        return None  # macOS and Windows always have a window server in a user session.
    if os.environ.get("QT_QPA_PLATFORM"):
        return None  # The user chose a platform (offscreen, vnc, wayland, ...): trust it.
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return (
        "no display available (DISPLAY and WAYLAND_DISPLAY are unset); "
        "use 'baton run ...' for headless runs, or set QT_QPA_PLATFORM=offscreen"
    )
