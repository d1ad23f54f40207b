"""Graph pipelines: what the graph scheduler costs per step over a chain of the same steps, and
how long the Presets view takes to draw a 100-step graph preset.

The same ten steps run as a ``chain`` and as a ``graph`` preset (ten named steps, each after
the one before), side by side in one process and alternated run by run (a busy moment on the
shared machine then hits both alike), median of 15 runs each. Steps are answered at once by
an in-process backend and runs are not recorded, so what is left is the runners' own work:
preparing, hand-offs, conditions, events — the part the graph scheduler adds to.

Last line: one JSON object, ``{"overhead_ms_per_step", "chain_ms_per_step",
"graph_ms_per_step"}``; :func:`measure_overhead` returns it as a dict so other graph figures
(the Presets view's ``layout_ms``) can be added to the same line.

``layout_ms`` — a graph preset of 100 steps (20 stages of four parallel steps and a merge, four
of the stages in loops, gates on five merges) is opened in the Presets view, shown offscreen at
1280×860: the time from asking the view's header to show the preset until its graph is laid out
and painted (``PresetHeader.show_preset``, then a synchronous repaint of the canvas). The median
of :data:`ROUNDS`, measured twice, side by side: on a quiet machine, and under a background load
this script starts itself (:data:`LOAD_PROCESSES` processes spinning the CPU, as other programs
would on a busy 2-core machine), then stops. :func:`measure_layout` returns ``layout_ms`` [goal
≤ 100], ``layout_only_ms`` (the layout algorithm alone) and ``nodes``; the last line adds
``layout_ms_loaded``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
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
ROUNDS = 15
LOAD_PROCESSES = 2
STAGES = 20


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


def hundred_step_preset() -> str:
    """A valid ``mode: graph`` preset of ``STAGES`` × 5 = 100 steps."""
    lines = ["name: hundred", "description: One hundred steps", "mode: graph", "steps:"]
    previous: str | None = None
    for stage in range(STAGES):
        names = [f"s{stage}-{i}" for i in range(4)]
        merge = f"m{stage}"
        block: list[str] = []
        for name in names:
            block += [f"- name: {name}", "  agent: worker", '  task: "work on {previous}"']
            block.append(f"  after: [{previous}]" if previous else "  after: []")
        block += [f"- name: {merge}", "  agent: reviewer", '  task: "merge {outputs}"']
        block.append(f"  after: [{', '.join(names)}]")
        if stage % 4 == 3:
            block.append("  gate: true")
        if stage % 5 == 2:
            lines += [
                "  - loop:",
                f"      name: loop{stage}",
                "      max_iterations: 3",
                f'      until: "{merge}.status == done"',
                "      steps:",
            ]
            lines += ["        " + line for line in block]
            previous = f"loop{stage}"
        else:
            lines += ["  " + line for line in block]
            previous = merge
    return "\n".join(lines) + "\n"


class BackgroundLoad:
    """Processes spinning the CPU until :meth:`stop` (each killed by its own pid)."""

    def __init__(self, count: int) -> None:
        self.processes = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)
        ]

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


def measure_layout(rounds: int = ROUNDS) -> dict[str, float]:
    """``layout_ms`` (median over ``rounds``) of the 100-step preset in the Presets view, and
    the layout algorithm alone; needs a QApplication."""
    from PySide6.QtCore import QSettings

    from core.definitions.agents import AgentCatalog
    from core.definitions.pipeline_graph import pipeline_graph
    from core.definitions.presets import parse_preset_text
    from gui.definitions.presets_view import PresetsView
    from gui.widgets.graph_layout import layout_graph
    from gui.widgets.prompts import Prompts

    text = hundred_step_preset()
    preset = parse_preset_text(text, path="hundred.yaml")
    graph = pipeline_graph(preset)
    with tempfile.TemporaryDirectory(prefix="baton-graph-") as scratch:
        settings = QSettings(str(Path(scratch) / "gui.ini"), QSettings.Format.IniFormat)
        view = PresetsView(Prompts(), settings, Path(scratch))
        view.resize(1280, 860)
        view.show()
        view.right.setCurrentIndex(1)  # the header and editor page, as with a preset open
        header = view.header
        canvas = header.graph.canvas
        drawn: list[float] = []
        for _ in range(rounds):
            header.show_preset(None, "", "user", AgentCatalog())
            start = time.perf_counter()
            header.show_preset(preset, "hundred.yaml", "user", AgentCatalog())
            canvas.repaint()
            drawn.append((time.perf_counter() - start) * 1000)
        assert len(canvas.graph().nodes) == 100
        metrics = canvas.fontMetrics()
        alone: list[float] = []
        for _ in range(rounds):
            start = time.perf_counter()
            layout_graph(graph, metrics.horizontalAdvance)
            alone.append((time.perf_counter() - start) * 1000)
        view.shutdown()
        view.close()
    return {
        "layout_ms": statistics.median(drawn),
        "layout_only_ms": statistics.median(alone),
        "nodes": float(len(graph.nodes)),
    }


def main() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["BATON_CONFIG_DIR"] = str(home / "config")
        os.environ["BATON_DATA_DIR"] = str(home / "data")
        figures: dict[str, float] = asyncio.run(measure_overhead(home))

        import gui  # noqa: F401  (PySide6 work-around first)
        from gui.app import create_application

        app = create_application([])
        measure_layout(3)  # warm-up: fonts, style sheet, first paints
        quiet = measure_layout()
        load = BackgroundLoad(LOAD_PROCESSES)
        try:
            loaded = measure_layout()
        finally:
            load.stop()
        app.processEvents()
    print(
        f"layout: {quiet['layout_ms']:.1f} ms drawn ({quiet['layout_only_ms']:.1f} ms layout "
        f"alone), {loaded['layout_ms']:.1f} ms under load"
    )
    figures.update(
        layout_ms=round(quiet["layout_ms"], 1),
        layout_ms_loaded=round(loaded["layout_ms"], 1),
        layout_only_ms=round(quiet["layout_only_ms"], 1),
        nodes=int(quiet["nodes"]),
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
