"""``baton run PRESET --estimate``: what a run of the preset usually costs, from earlier runs
(the launch dialog's "Earlier runs" line), so a cap can be picked before anything runs."""

from __future__ import annotations

import argparse
import json

from core.history.budget_estimate import describe_estimate, preset_estimate
from core.model.errors import RunError
from core.run.run_request import find_preset


def print_estimate(args: argparse.Namespace) -> None:
    """Print the estimate; runs nothing and asks no model. Raises :class:`RunError` when there
    is no preset to estimate (estimates are kept per preset) or it cannot be found."""
    if not args.preset:
        raise RunError("--estimate needs a preset: estimates come from its earlier runs")
    preset, _agents, _presets = find_preset(args.preset, args.cwd.resolve(), args.scope)
    estimate = preset_estimate(preset.name)
    if args.json:
        found = None
        if estimate is not None:
            found = {
                "runs": estimate.runs,
                "cost": estimate.cost,
                "tokens": estimate.tokens,
                "priced": estimate.priced,
            }
        print(json.dumps({"preset": preset.name, "estimate": found}))
        return
    print(f"{preset.name}: {describe_estimate(estimate)}")
