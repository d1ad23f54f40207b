"""The ``baton`` command: the window by default, headless sub-commands otherwise (DESIGN §9).

Sub-commands live one per module in :mod:`core.commands`; each exposes ``register(subparsers)``
and sets ``handler`` on its parser. The GUI is imported only when the window is wanted, so the
command line works (and ``core`` imports) on machines without Qt.

Exit codes: 0 ok, 1 the work failed, 2 bad usage or configuration, 130 cancelled.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from core import __version__
from core.commands import agents as agents_command
from core.commands import docs as docs_command
from core.commands import open as open_command
from core.commands import rules as rules_command
from core.commands import run as run_command
from core.commands import runs as runs_command
from core.display import display_problem

COMMAND_MODULES = [
    agents_command,
    run_command,
    runs_command,
    docs_command,
    open_command,
    rules_command,
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


def open_window(argv: Sequence[str]) -> int:
    problem = display_problem()
    if problem:
        print(f"baton: {problem}", file=sys.stderr)
        return 2
    # Qt is imported here and only here. Through importlib, so `mypy core` checks the core
    # alone and the layering test can see that no core module imports the GUI statically.
    gui_app = importlib.import_module("gui.app")
    code: int = gui_app.run_app(list(argv))
    return code


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if args.self_test:
        code: int = importlib.import_module("gui.self_test").run_self_test()
        return code
    if args.command is None:
        return open_window(argv)
    try:
        code = args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`baton agents --json | head`): not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
