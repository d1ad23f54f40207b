"""The ``baton`` command: the window by default, headless sub-commands otherwise (architecture:
"The command line").

Sub-commands live one per module in :mod:`core.terminal.commands`; each exposes
``register(subparsers)``
and sets ``handler`` on its parser. The core never imports the GUI, not even lazily: the
installed ``baton`` entry point is :func:`gui.launcher.main`, which hands this :func:`main` a
:class:`WindowHooks` for the three things that need a window (the window itself, ``baton open``
and ``--self-test``). Headless commands never import Qt, so they work on machines without it;
``python -m core.cli`` (no hooks) runs the headless commands only.

Exit codes: 0 ok, 1 the work failed, 2 bad usage or configuration, 130 cancelled.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from core import __version__
from core.model.events import Event
from core.terminal.commands import agents as agents_command
from core.terminal.commands import batch as batch_command
from core.terminal.commands import docs as docs_command
from core.terminal.commands import mcp as mcp_command
from core.terminal.commands import open as open_command
from core.terminal.commands import presets as presets_command
from core.terminal.commands import rules as rules_command
from core.terminal.commands import run as run_command
from core.terminal.commands import runs as runs_command
from core.terminal.commands import usage as usage_command

COMMAND_MODULES = [
    agents_command,
    presets_command,
    run_command,
    batch_command,
    runs_command,
    docs_command,
    open_command,
    rules_command,
    usage_command,
    mcp_command,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="baton",
        description="See and steer chains of LLM agents. With no command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check that this installation works (offscreen, in temporary folders) and exit",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(commands)
    return parser


class WindowHooks(Protocol):
    """What only the GUI can do, handed in by the entry point (:mod:`gui.launcher`), so the
    dependency points from the GUI to the core and never back. Each returns an exit code and
    checks for a display itself before importing Qt."""

    def open_window(self, argv: list[str]) -> int: ...

    def open_run(self, path: Path, events: list[Event], screenshot: Path | None) -> int: ...

    def self_test(self) -> int: ...


NO_WINDOW = "baton: the window is not available from 'python -m core.cli'; run 'baton' instead"


def main(argv: Sequence[str] | None = None, window: WindowHooks | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.window = window
    if (args.self_test or args.command is None) and window is None:
        print(NO_WINDOW, file=sys.stderr)
        return 2
    if window is not None and args.self_test:
        return window.self_test()
    if window is not None and args.command is None:
        return window.open_window(argv)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`baton agents --json | head`): not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
