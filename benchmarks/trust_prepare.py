"""Preparing a run in a big trusted checkout: the trust fingerprint now searches the folder for
context files (``AGENTS.md`` / ``CLAUDE.md`` at any depth), and a run's preparation asks about
the same folder several times per step (trust, the CLI's settings, context).

Generates a checkout of 10,000 folders (100 × 100, a context file every tenth top folder, a
project agent, a skill), trusts it, then times one fingerprint and ``Runner.prepare()`` of a
three-step chain on pi — once with each folder's fingerprint computed every time it is asked
(as a plain loop of calls would), once as prepared (:func:`core.config.looks.one_look`: once
per folder) — quiet and under the standard background load. Last line: JSON with
``fingerprint_seconds``, ``prepare_seconds_each_time``, ``prepare_seconds`` (and ``_loaded``).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.background_load import quiet_and_loaded

FOLDERS = 100
ROUNDS = 5


def generate(root: Path) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Use tabs.\n")
    for i in range(FOLDERS):
        top = root / f"pkg{i:03}"
        for j in range(FOLDERS):
            (top / f"mod{j:03}").mkdir(parents=True)
        if i % 10 == 0:
            (top / "AGENTS.md").write_text(f"Rules of package {i}.\n")
    agents = root / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "helper.md").write_text("---\nname: helper\ndescription: Helps.\n---\nYou help.\n")
    skill = root / ".claude" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploys.\n---\nSteps.\n")


def median_seconds(action: Callable[[], object]) -> float:
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["BATON_CONFIG_DIR"] = str(base / "config")
        os.environ["BATON_DATA_DIR"] = str(base / "data")
        from core.config.looks import one_look
        from core.config.settings import Settings
        from core.run import run_preparation
        from core.run.run_request import RunRequest, StepSpec
        from core.run.runner import Runner
        from core.safety.trust import TrustStore, fingerprint

        root = base / "checkout"
        generate(root)
        TrustStore().trust(root)
        steps = [StepSpec("helper", "Go."), StepSpec("helper", "Again."), StepSpec("helper", "!")]
        request = RunRequest(mode="chain", steps=steps, cwd=root, backend="pi")

        def prepare() -> None:
            Runner(request, settings=Settings(), record=False).prepare()

        def measure() -> dict[str, float]:
            figures = {"fingerprint_seconds": median_seconds(lambda: fingerprint(root))}
            setattr(run_preparation, "one_look", contextlib.nullcontext)  # noqa: B010
            figures["prepare_seconds_each_time"] = median_seconds(prepare)
            setattr(run_preparation, "one_look", one_look)  # noqa: B010
            figures["prepare_seconds"] = median_seconds(prepare)
            return {key: round(value, 4) for key, value in figures.items()}

        figures = quiet_and_loaded(measure)
        for key, value in figures.items():
            print(f"{key}: {value}")
        print(json.dumps({"folders": FOLDERS * FOLDERS, **figures}))


if __name__ == "__main__":
    main()
