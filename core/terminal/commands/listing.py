"""What ``baton agents`` and ``baton presets`` share: the same options, the same table shape
and the same diagnostics, so a script or a person reads both the same way."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from core.definitions.agents import Diagnostic


def register_listing(
    commands: Any, name: str, help_text: str, description: str, handler: Callable[..., int]
) -> None:
    parser = commands.add_parser(name, help=help_text, description=description)
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="folder to look from")
    parser.add_argument("--scope", choices=["user", "project", "both"], default="both")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=handler)


def diagnostics_json(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    return [
        {"path": d.path, "line": d.line, "message": d.message, "severity": d.severity}
        for d in diagnostics
    ]


def table(
    rows: Sequence[tuple[str, str, str, str, str]],
    notes: Sequence[str],
    diagnostics: Sequence[Diagnostic],
) -> str:
    """Aligned columns (the first row is the header; the last column runs free), then the
    ``notes`` explaining marks, then every diagnostic as ``severity: path:line: message``."""
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        + "  "
        + row[4]
        for row in rows
    ]
    lines.extend(f"\n{note}" for note in notes)
    if diagnostics:
        lines.append("\nDiagnostics:")
        lines.extend(f"  {d.severity}: {d.location}: {d.message}" for d in diagnostics)
    return "\n".join(lines)


def check_folder(command: str, args: argparse.Namespace) -> bool:
    """False (after saying so) when ``--cwd`` is not a folder."""
    if args.cwd.is_dir():
        return True
    print(f"baton {command}: --cwd {args.cwd} is not a folder")
    return False


def print_result(args: argparse.Namespace, as_json: dict[str, Any], as_table: str) -> None:
    if args.json:
        print(json.dumps(as_json, ensure_ascii=False, indent=2))
    else:
        print(as_table)
