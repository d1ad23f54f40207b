"""The ``baton`` entry point: the command line of :mod:`core.cli`, plus the window.

The entry point lives on the GUI side so that the dependency runs one way only, GUI → core:
:func:`main` hands :func:`core.cli.main` a :class:`Window` whose methods import Qt lazily,
inside this package. A headless command (``baton run``, ``baton agents`` …) therefore never
imports Qt, and the core never imports the GUI — not even through ``importlib``.

Nothing at module level here imports Qt: before Qt is loaded we check that a window can be
shown at all, because Qt aborts the process (SIGABRT, core dump) when its platform plugin finds
no display — a traceback-free one-line explanation and exit status 2 serve the user better.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.model.events import Event
from gui.system_libraries import missing_libraries_problem

EXIT_USAGE = 2


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


def _refuse(prefix: str) -> int | None:
    """Exit status 2 with one explanation when Qt could not show a window here (no display,
    or system libraries missing), None when it can."""
    problem = display_problem() or missing_libraries_problem()
    if problem is None:
        return None
    print(f"{prefix}: {problem}", file=sys.stderr)
    # Started from a menu, nobody sees stderr, and no dialog can be shown: the log keeps it.
    from gui.app_log import log, start_logging

    if start_logging() is not None:
        log.error("%s: %s", prefix, problem)
    return EXIT_USAGE


class Window:
    """:class:`core.cli.WindowHooks` for the real window; each method imports what it needs."""

    def open_window(self, argv: list[str]) -> int:
        refused = _refuse("baton")
        if refused is not None:
            return refused
        from gui.app import run_app

        return run_app(argv)

    def open_project(self, folder: Path) -> int:
        """``baton PATH``: the window on that project."""
        refused = _refuse("baton")
        if refused is not None:
            return refused
        from gui.app import run_app

        return run_app([], project=folder)

    def open_run(self, path: Path, events: list[Event], screenshot: Path | None) -> int:
        if screenshot is not None and display_problem() is not None:
            os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a picture needs no screen
        refused = _refuse("baton open")
        if refused is not None:
            return refused
        from gui.open_run import open_run_window

        return open_run_window(path, events, screenshot)

    def self_test(self) -> int:
        from gui.self_test import run_self_test

        return run_self_test()


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments:
        # A double-click: straight to the window, without building the command line's
        # parser (it imports every sub-command: ~150 ms of start-up).
        return Window().open_window([])
    opened = open_with(arguments)
    if opened is not None:
        return opened
    from core.cli import main as cli_main

    return cli_main(arguments, window=Window())


def open_with(arguments: list[str]) -> int | None:
    """``baton PATH`` (what a desktop's "Open with Baton" runs, ``Exec=baton %F``): a folder
    opens the window on that project, a file opens like ``baton open FILE``. None when the
    first argument is a sub-command or an option (those win over a file of the same name)
    or a word naming nothing on disk (the command line then explains)."""
    first = arguments[0]
    if first.startswith("-") or first in COMMANDS:
        return None
    path = Path(first).expanduser()
    if path.is_dir():
        return Window().open_project(path)
    if path.is_file():
        from core.cli import main as cli_main

        return cli_main(["open", str(path)], window=Window())
    if os.sep in first:  # clearly meant as a path: say so, not "invalid choice" of a command
        print(f"baton: {first}: no such file or folder", file=sys.stderr)
        return EXIT_USAGE
    return None


COMMANDS = frozenset(
    {"agents", "presets", "run", "batch", "runs", "docs", "open", "rules", "usage", "mcp"}
)
"""The sub-commands (:data:`core.cli.COMMAND_MODULES`), named here so that a double-click
does not import the command line's parser; a test keeps the two lists equal."""


if __name__ == "__main__":
    sys.exit(main())
