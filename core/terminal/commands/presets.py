"""``baton presets``: list the presets visible from a folder, and what is wrong with them.

Shaped like ``baton agents``: broken files (bad YAML, wrong shape, binary) and presets whose
step names an agent that cannot run are diagnostics with their path and line, so a preset
that ``baton run`` refuses can be found and fixed without the window.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.definitions.agents import Diagnostic, discover_agents
from core.definitions.presets import PresetCatalog, agent_diagnostics, discover_presets
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
        "presets",
        "list presets and diagnostics",
        "List the presets visible from a folder and the problems of broken ones.",
        run,
    )


def as_json(catalog: PresetCatalog, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    broken = {d.path for d in diagnostics if d.severity == "error"}
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
                "runnable": preset.path not in broken,
            }
            for preset in catalog.presets
        ],
        "diagnostics": diagnostics_json(diagnostics),
    }


def _table(catalog: PresetCatalog, diagnostics: list[Diagnostic]) -> str:
    broken = {d.path for d in diagnostics if d.severity == "error"}
    rows = [("NAME", "SOURCE", "MODE", "STEPS", "DESCRIPTION")]
    for preset in catalog.presets:
        joiner = " → " if preset.mode == "chain" else " + "
        name = preset.name + (" !" if preset.path in broken else "")
        agents = joiner.join(step.agent for step in preset.steps)
        if preset.mode == "graph":  # names say more than agents when steps branch and repeat
            agents = ", ".join(f"{step.name} ({step.agent})" for step in preset.steps)
        rows.append((name, preset.source, preset.mode, agents, preset.description))
    notes = (
        ["! cannot run: see Diagnostics"] if any(p.path in broken for p in catalog.presets) else []
    )
    return table(rows, notes, diagnostics)


def run(args: argparse.Namespace) -> int:
    if not check_folder("presets", args):
        return 2
    catalog = discover_presets(args.cwd, args.scope)
    diagnostics = catalog.diagnostics + agent_diagnostics(
        catalog, discover_agents(args.cwd, args.scope)
    )
    print_result(args, as_json(catalog, diagnostics), _table(catalog, diagnostics))
    return 0
