"""Graph pipelines: what the graph scheduler costs per step over a chain of the same steps.

The same ten steps run as a ``chain`` and as a ``graph`` preset (ten named steps, each after
the one before), side by side in one process and alternated run by run (a busy moment on the
shared machine then hits both alike), median of 15 runs each. Steps are answered at once by
an in-process backend and runs are not recorded, so what is left is the runners' own work:
preparing, hand-offs, conditions, events — the part the graph scheduler adds to.

Last line: one JSON object, ``{"overhead_ms_per_step", "chain_ms_per_step",
"graph_ms_per_step"}``; :func:`measure_overhead` returns it as a dict so other graph figures
(the Presets view's ``layout_ms``) can be added to the same line.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import ClassVar

from core.backends.base import StepContext
from core.config.settings import Settings
from core.definitions.presets import parse_preset_text
from core.model.events import Event, StepFinished, TextDelta
from core.run.run_request import request_from_preset
from core.run.runner import Runner

STEPS = 10
RUNS = 15


class InstantBackend:
    """Answers every step at once with its task, as a backend's events would."""

    name: ClassVar[str] = "instant"
    cancel_grace_s: ClassVar[float] = 0.0

    async def run(self, ctx: StepContext) -> AsyncGenerator[Event, None]:
        yield ctx.make(TextDelta, text=ctx.task[:40])
        yield ctx.make(StepFinished, status="ok", output=ctx.task[:40])


def preset_text(mode: str) -> str:
    lines = [f"name: bench-{mode}", f"mode: {mode}", "steps:"]
    for number in range(1, STEPS + 1):
        task = "start $@" if number == 1 else "go on from {previous}"
        name = f"name: s{number}, " if mode == "graph" else ""
        lines.append(f'  - {{{name}agent: worker, task: "{task}"}}')
    return "\n".join(lines) + "\n"


async def one_run(mode: str, cwd: Path) -> float:
    preset = parse_preset_text(preset_text(mode))
    request = request_from_preset(preset, ["x"], cwd, scope="user")
    runner = Runner(
        request, settings=Settings(), record=False, backend_factory=lambda name: InstantBackend()
    )
    started = time.perf_counter()
    result = await runner.run()
    elapsed = (time.perf_counter() - started) * 1000
    if result.status != "ok":
        raise SystemExit(f"{mode} run failed: {result.error}")
    return elapsed / STEPS


async def measure_overhead(cwd: Path) -> dict[str, float]:
    """Median per-step time of each form and the graph's overhead over the chain, in ms."""
    for mode in ("chain", "graph"):  # warm-up, not counted
        await one_run(mode, cwd)
    samples: dict[str, list[float]] = {"chain": [], "graph": []}
    for _ in range(RUNS):
        for mode in samples:
            samples[mode].append(await one_run(mode, cwd))
    chain, graph = (statistics.median(samples[mode]) for mode in ("chain", "graph"))
    print(f"chain: {chain:.2f} ms/step, graph: {graph:.2f} ms/step (median of {RUNS})")
    return {
        "overhead_ms_per_step": round(graph - chain, 3),
        "chain_ms_per_step": round(chain, 3),
        "graph_ms_per_step": round(graph, 3),
    }


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["BATON_CONFIG_DIR"] = str(home / "config")
        os.environ["BATON_DATA_DIR"] = str(home / "data")
        figures = await measure_overhead(home)
        print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
