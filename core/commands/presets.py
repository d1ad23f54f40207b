"""``baton presets``: list the presets visible from a folder, and what is wrong with them.

Shaped like ``baton agents``: broken files (bad YAML, wrong shape, binary) and presets naming
an agent that does not exist are diagnostics with their path and line, so a preset that
``baton run`` refuses can be found and fixed without the window.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from core.agents import Diagnostic, discover_agents
from core.presets import PresetCatalog, agent_diagnostics, discover_presets


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "presets",
        help="list presets and diagnostics",
        description="List the presets visible from a folder and the problems of broken ones.",
    )
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="folder to look from")
    parser.add_argument("--scope", choices=["user", "project", "both"], default="both")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=run)


def as_json(catalog: PresetCatalog, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    return {
        "presets": [
            {
                "name": preset.name,
                "description": preset.description,
                "mode": preset.mode,
                "agents": [step.agent for step in preset.steps],
                "argument_hint": preset.argument_hint,
                "source": preset.source,
                "path": preset.path,
            }
            for preset in catalog.presets
        ],
        "diagnostics": [
            {"path": d.path, "line": d.line, "message": d.message, "severity": d.severity}
            for d in diagnostics
        ],
    }


def _table(catalog: PresetCatalog, diagnostics: list[Diagnostic]) -> str:
    broken = {d.path for d in diagnostics if d.severity == "error"}
    rows = [("NAME", "SOURCE", "MODE", "STEPS", "DESCRIPTION")]
    for preset in catalog.presets:
        joiner = " → " if preset.mode == "chain" else " + "
        name = preset.name + (" !" if preset.path in broken else "")
        agents = joiner.join(step.agent for step in preset.steps)
        rows.append((name, preset.source, preset.mode, agents, preset.description))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        + "  "
        + row[4]
        for row in rows
    ]
    if any(p.path in broken for p in catalog.presets):
        lines.append("\n! cannot run: see Diagnostics")
    if diagnostics:
        lines.append("\nDiagnostics:")
        for d in diagnostics:
            lines.append(f"  {d.severity}: {d.location}: {d.message}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if not args.cwd.is_dir():
        print(f"baton presets: --cwd {args.cwd} is not a folder")
        return 2
    catalog = discover_presets(args.cwd, args.scope)
    agents = discover_agents(args.cwd, args.scope)
    diagnostics = catalog.diagnostics + agent_diagnostics(catalog, agents)
    if args.json:
        print(json.dumps(as_json(catalog, diagnostics), ensure_ascii=False, indent=2))
    else:
        print(_table(catalog, diagnostics))
    return 0
