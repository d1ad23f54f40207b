"""``baton open RUN_FILE [--screenshot PNG]``: show a saved run or a transcript in the window.

``RUN_FILE`` is a Baton run file (``runs/<id>.jsonl``) or a pi / Claude Code transcript
(:func:`core.history.run_import.load_any`). The file is read here, before Qt is imported, so a
missing
or unrecognised file is a one-line error with exit status 2 and no window; the window itself
comes from the entry point's :class:`core.cli.WindowHooks`. Opening a
transcript does not add it to the history (``baton runs import`` does).

``--screenshot PNG`` renders the run, saves a PNG of the main window and exits 0: the way the
README's pictures are made. It needs no display: without one, the offscreen platform is used.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.history.run_import import load_any

EXIT_USAGE = 2


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "open",
        help="open a saved run or a pi / Claude Code transcript in the window",
        description="Open a run file or a pi / Claude Code transcript in the window. "
        "Example: baton open ~/.local/share/baton/runs/20260101-120000-abc123.jsonl",
    )
    parser.add_argument("file", type=Path, metavar="RUN_FILE", help="run file or transcript")
    parser.add_argument(
        "--screenshot",
        type=Path,
        metavar="PNG",
        help="save a PNG of the window once the run is shown, then exit",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    path: Path = args.file.expanduser()
    if not path.exists():
        print(f"baton open: {path}: no such file", file=sys.stderr)
        return EXIT_USAGE
    try:
        events = load_any(path)
    except (ValueError, OSError) as error:
        print(f"baton open: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.window is None:
        print("baton open: the window is not available from 'python -m core.cli'", file=sys.stderr)
        return EXIT_USAGE
    code: int = args.window.open_run(path, events, args.screenshot)
    return code
