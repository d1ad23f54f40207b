"""Graph pipelines: how long the Presets view takes to draw a 100-step preset.

``layout_ms`` — a graph preset of 100 steps (20 stages of four parallel steps and a merge, four
of the stages in loops, gates on five merges) is opened in the Presets view, shown offscreen at
1280×860: the time from asking the view's header to show the preset until its graph is laid out
and painted (:meth:`PresetHeader.show_preset`, then a synchronous repaint of the canvas). The
median of :data:`ROUNDS`, measured twice, side by side: on a quiet machine, and under a
background load this script starts itself (:data:`LOAD_PROCESSES` processes spinning the CPU,
as other programs would on a busy 2-core machine), then stops.

Last line, JSON (goal in brackets): ``layout_ms`` [≤ 100] (quiet), ``layout_ms_loaded``,
``layout_only_ms`` (the layout algorithm alone, quiet) and ``nodes``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROUNDS = 15
LOAD_PROCESSES = 2
STAGES = 20


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
    import gui  # noqa: F401  (PySide6 work-around first)
    from gui.app import create_application

    with tempfile.TemporaryDirectory(prefix="baton-graph-home-") as home:
        os.environ["BATON_CONFIG_DIR"] = str(Path(home) / "config")
        os.environ["BATON_DATA_DIR"] = str(Path(home) / "data")
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
        f"quiet: {quiet['layout_ms']:.1f} ms drawn ({quiet['layout_only_ms']:.1f} ms layout); "
        f"under load: {loaded['layout_ms']:.1f} ms"
    )
    print(
        json.dumps(
            {
                "layout_ms": round(quiet["layout_ms"], 1),
                "layout_ms_loaded": round(loaded["layout_ms"], 1),
                "layout_only_ms": round(quiet["layout_only_ms"], 1),
                "nodes": int(quiet["nodes"]),
            }
        )
    )


if __name__ == "__main__":
    main()
