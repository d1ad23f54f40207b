"""``baton agents``: list the agent definitions visible from a folder, and what is wrong."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from core.agents import AgentCatalog, discover_agents


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "agents",
        help="list agent definitions and diagnostics",
        description="List the agents visible from a folder (listing never needs trust).",
    )
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="folder to look from")
    parser.add_argument("--scope", choices=["user", "project", "both"], default="both")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=run)


def catalog_as_json(catalog: AgentCatalog) -> dict[str, Any]:
    return {
        "agents": [
            {
                "name": agent.name,
                "description": agent.description,
                "tools": list(agent.tools) if agent.tools is not None else None,
                "model": agent.model,
                "source": agent.source,
                "path": agent.path,
                "overrides": agent.overrides,
            }
            for agent in catalog.agents
        ],
        "diagnostics": [
            {"path": d.path, "line": d.line, "message": d.message, "severity": d.severity}
            for d in catalog.diagnostics
        ],
    }


def _table(catalog: AgentCatalog) -> str:
    rows = [("NAME", "SOURCE", "MODEL", "TOOLS", "DESCRIPTION")]
    for agent in catalog.agents:
        tools = ", ".join(agent.tools) if agent.tools is not None else "(all)"
        name = agent.name + (" *" if agent.overrides else "")
        rows.append((name, agent.source, agent.model or "-", tools, agent.description))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        + "  "
        + row[4]
        for row in rows
    ]
    if any(a.overrides for a in catalog.agents):
        lines.append("\n* overrides an agent of the same name from a lower-precedence folder")
    if catalog.diagnostics:
        lines.append("\nDiagnostics:")
        for d in catalog.diagnostics:
            lines.append(f"  {d.severity}: {d.location}: {d.message}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if not args.cwd.is_dir():
        print(f"baton agents: --cwd {args.cwd} is not a folder")
        return 2
    catalog = discover_agents(args.cwd, args.scope)
    if args.json:
        print(json.dumps(catalog_as_json(catalog), ensure_ascii=False, indent=2))
    else:
        print(_table(catalog))
    return 0
