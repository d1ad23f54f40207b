"""``baton --self-test``: prove a build works without a person or a display.

A bundle can miss a data file, a Qt plugin or a lazily imported module and still start; this
exercises each of those paths — built-in agents and presets read from the bundled resources,
the SQLite document store with its full-text index, the backends' lazy imports, and the main
window opened and closed — in temporary folders, so the user's own files are never touched.
It prints one line per check and exits 0 only when all of them pass.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path


def _scratch(prefix: str) -> Path:
    """A folder for one check, inside the self-test's temporary home: removed with it, so a
    person's temporary folder keeps nothing of a self-test (each run left four folders)."""
    home = Path(os.environ["BATON_DATA_DIR"]).parent
    return Path(tempfile.mkdtemp(prefix=prefix, dir=home))


def _check_definitions() -> str:
    from core.definitions.agents import discover_agents
    from core.definitions.presets import discover_presets

    folder = _scratch("cwd-")
    agents = discover_agents(folder, "both")
    names = sorted(a.name for a in agents.agents)
    if not {"scout", "planner", "worker", "reviewer"} <= set(names) or agents.diagnostics:
        raise RuntimeError(f"built-in agents incomplete: {names} {agents.diagnostics}")
    presets = discover_presets(folder)
    if len(presets.presets) < 3 or presets.diagnostics:
        raise RuntimeError(f"built-in presets incomplete: {presets.presets}")
    return f"{len(names)} agents, {len(presets.presets)} presets"


def _check_documents() -> str:
    from core.documents.store import DocumentStore

    with DocumentStore() as store:
        created = store.create("登录 flow", "用户登录 and sign-in notes", tags=["self-test"])
        hits = store.search("登录").total + store.search("sign").total
        store.delete(created.id)
    if hits != 2:
        raise RuntimeError(f"full-text search found {hits} of 2 hits")
    return "create, CJK + English search, delete"


def _check_backends() -> str:
    from core.backends.pi_rpc import gate_extension
    from core.backends.registry import BACKENDS

    for target in BACKENDS.values():
        module, name = target.split(":")
        getattr(importlib.import_module(module), name)
    if not gate_extension().is_file():  # pi's approvals go through it
        raise RuntimeError(f"pi's approval extension is missing: {gate_extension()}")
    return ", ".join(BACKENDS)


def _check_window() -> str:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from gui.app import create_application
    from gui.window.main_window import MainWindow

    app = create_application([])
    settings = QSettings(
        str(Path(os.environ["BATON_CONFIG_DIR"]) / "window.ini"), QSettings.Format.IniFormat
    )
    window = MainWindow(_scratch("project-"), settings)
    window.show()
    QApplication.processEvents()
    shown = window.isVisible()
    window.close()
    QApplication.processEvents()
    if not shown:
        raise RuntimeError("the main window did not show")
    return f"main window shown and closed ({app.platformName()})"


def _check_charts() -> str:
    """The usage charts paint with QPainter and the bundled fonts: draw one off screen, so a
    bundle missing a font or an image plugin fails here rather than at the first click on Usage."""
    from core.model.events import UsageStats
    from gui.widgets.usage_charts import UsageBar, UsageCharts

    charts = UsageCharts("step")
    charts.resize(600, 220)
    charts.set_bars([UsageBar("1 scout", UsageStats(input=1200, output=300, cost=0.01))])
    image = charts.grab().toImage()
    if image.isNull() or charts.tokens.values()["input"] != [1200]:
        raise RuntimeError("the usage chart could not be drawn")
    return f"usage charts drawn ({image.width()}×{image.height()})"


def _check_metadata() -> str:
    """Libraries read their own metadata at run time (genai-prices its version, at import):
    each runtime dependency listed at build time must have it here. From a pip install the
    list is absent and every distribution is installed with its metadata anyway."""
    from importlib import metadata

    listed = Path(getattr(sys, "_MEIPASS", "")) / "bundle-distributions.txt"
    if not getattr(sys, "frozen", False) or not listed.is_file():
        return "not a bundle: installed distributions carry their own"
    names = listed.read_text(encoding="utf-8").split()
    missing = []
    for name in names:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        raise RuntimeError(f"no metadata in the bundle for {', '.join(missing)}")
    return f"{len(names)} distributions"


def _check_step() -> str:
    """One step on Baton's own agent loop against a scripted endpoint: the HTTP client, the
    stream parser, pricing, an approval and a real bash tool call, end to end."""
    import asyncio

    from core.config.settings import Provider, Settings
    from core.model.events import Event, StepFinished, ToolCallFinished
    from core.run.run_request import RunRequest, StepSpec
    from core.run.runner import Runner
    from core.safety.approvals import ApprovalAnswer, ApprovalRequest
    from gui.self_test_endpoint import ANSWER, MODEL, Endpoint

    asked: list[str] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.tool)
        return ApprovalAnswer(decision="approve", decided_by="setting")

    events: list[Event] = []
    folder = _scratch("step-")
    with Endpoint() as endpoint:
        settings = Settings(
            providers=[Provider(name="self-test", base_url=endpoint.base_url)],
            default_model=MODEL,
        )
        request = RunRequest(
            mode="single", steps=[StepSpec(agent="worker", task="self-test")], cwd=folder
        )
        runner = Runner(
            request, settings=settings, responder=approve, listeners=[events.append], record=False
        )
        finished = asyncio.run(runner.run())
    tools = [e for e in events if isinstance(e, ToolCallFinished)]
    steps = [e for e in events if isinstance(e, StepFinished)]
    if finished.status != "ok" or not steps or steps[0].output.strip() != ANSWER:
        error = finished.error or (steps[0].error if steps else "no step finished")
        raise RuntimeError(f"the step did not finish: {finished.status}: {error}")
    if not tools or tools[0].status != "ok" or "baton-self-test" not in tools[0].result:
        raise RuntimeError(f"the bash tool call did not run: {tools}")
    return f"own agent loop: bash tool call ({', '.join(asked) or 'no approval asked'}), answer"


def _check_window_run() -> str:
    from gui.self_test_window import check_window_run

    config = Path(os.environ["BATON_CONFIG_DIR"])
    return check_window_run(config, _scratch("run-"))


CHECKS: list[tuple[str, Callable[[], str]]] = [
    ("dependency metadata", _check_metadata),
    ("agent step", _check_step),
    ("agent and preset definitions", _check_definitions),
    ("document store", _check_documents),
    ("backends", _check_backends),
    ("window", _check_window),
    ("charts", _check_charts),
    ("window run", _check_window_run),
]


def run_self_test() -> int:
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory(prefix="baton-selftest-") as home:
        os.environ["BATON_CONFIG_DIR"] = str(Path(home) / "config")
        os.environ["BATON_DATA_DIR"] = str(Path(home) / "data")
        failures = 0
        for label, check in CHECKS:
            try:
                print(f"ok    {label}: {check()}", flush=True)
            except Exception as error:
                failures += 1
                print(f"FAIL  {label}: {error}", flush=True)
                traceback.print_exc()
        print("self-test passed" if not failures else f"self-test: {failures} check(s) failed")
        return 1 if failures else 0
