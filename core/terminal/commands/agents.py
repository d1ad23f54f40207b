"""``baton agents``: list the agent definitions visible from a folder, and what is wrong."""

from __future__ import annotations

import argparse
from typing import Any

from core.definitions.agents import AgentCatalog, discover_agents
from core.terminal.commands.listing import (
    check_folder,
    diagnostics_json,
    print_result,
    register_listing,
    table,
)


def register(commands: Any) -> None:
    register_listing(
        commands,
        "agents",
        "list agent definitions and diagnostics",
        "List the agents visible from a folder (listing never needs trust).",
        run,
    )


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
                "runnable": agent.error is None,
            }
            for agent in catalog.agents
        ],
        "diagnostics": diagnostics_json(catalog.diagnostics),
    }


def _table(catalog: AgentCatalog) -> str:
    rows = [("NAME", "SOURCE", "MODEL", "TOOLS", "DESCRIPTION")]
    for agent in catalog.agents:
        tools = ", ".join(agent.tools) if agent.tools is not None else "(all)"
        mark = (" *" if agent.overrides else "") + (" !" if agent.error else "")
        rows.append((agent.name + mark, agent.source, agent.model or "-", tools, agent.description))
    notes = []
    if any(a.overrides for a in catalog.agents):
        notes.append("* overrides an agent of the same name from a lower-precedence folder")
    if any(a.error for a in catalog.agents):
        notes.append("! cannot run: see Diagnostics")
    return table(rows, notes, catalog.diagnostics)


def run(args: argparse.Namespace) -> int:
    if not check_folder("agents", args):
        return 2
    catalog = discover_agents(args.cwd, args.scope)
    print_result(args, catalog_as_json(catalog), _table(catalog))
    return 0
