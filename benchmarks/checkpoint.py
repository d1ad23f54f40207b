"""Benchmarks of reviewing what runs changed.

Each measure is one function in :data:`MEASURES` returning its figures; ``main`` runs them all
(or those named with ``--only``) and prints every figure merged into one JSON object as the last
line.

* ``checkpoint_ms`` — one checkpoint (:mod:`core.workspace.checkpoints`) of a git repository with
  10,000
  committed files (``--files``) of which 10 changed since the last one (8 tracked files edited,
  2 new untracked ones), through the runner's own path: ``RunCheckpoints.before`` and ``after``.
  Every checkpoint is timed, none is a warm-up beyond the first (reported apart as
  ``first_checkpoint_ms``: it also finds the repository). ``checkpoint_ms`` is the median of
  the rest (an after-checkpoint includes listing the step's changed files, as the runner
  does), ``checkpoint_p95_ms`` their p95, ``step_overhead_ms`` the median time a step waits for
  both of its checkpoints. Goal: ``checkpoint_ms`` ≤ 150. Timings are wall-clock: on a busy
  machine they include waiting for a core.

* ``run_search_p95_ms`` — searching 1,000 saved runs (``benchmarks/run_search.py``, where the
  query classes, cold and warm, are described). Goal: ≤ 50.

Run: ``python benchmarks/checkpoint.py [--files N] [--steps N] [--only NAME]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.run_search import measure_run_search  # noqa: E402
from core.config.settings import CheckpointSettings  # noqa: E402
from core.model.events import StepChanges  # noqa: E402
from core.workspace.checkpoints import RunCheckpoints  # noqa: E402

CHANGED_PER_STEP = 10


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _build_repo(repo: Path, files: int) -> list[Path]:
    _git(repo, "init", "-q", "-b", "main")
    made = []
    for number in range(files):
        path = repo / f"pkg{number // 100:03d}" / f"module_{number:05d}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"VALUE = {number}\n" + "# filler line\n" * 20, encoding="utf-8")
        made.append(path)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "start")
    return made


def _change(files: list[Path], repo: Path, step: int) -> None:
    for offset in range(CHANGED_PER_STEP - 2):
        path = files[(step * 97 + offset * 13) % len(files)]
        path.write_text(path.read_text(encoding="utf-8") + f"# step {step}\n", encoding="utf-8")
    for extra in range(2):
        (repo / f"new_{step}_{extra}.py").write_text(f"NEW = {step}\n", encoding="utf-8")


async def _checkpoints(repo: Path, files: list[Path], steps: int) -> dict[str, Any]:
    recorder = RunCheckpoints("bench", CheckpointSettings())
    single: list[float] = []
    overhead: list[float] = []
    for step in range(steps):
        started = time.perf_counter()
        assert await recorder.before(step, repo) is None
        took_before = time.perf_counter() - started
        _change(files, repo, step)
        started = time.perf_counter()
        changes = await recorder.after(step)
        took_after = time.perf_counter() - started
        assert isinstance(changes, StepChanges), changes
        found = [(change.path, change.status) for change in changes.files]
        assert len(found) == CHANGED_PER_STEP, (step, found)
        single += [took_before * 1000, took_after * 1000]
        overhead.append((took_before + took_after) * 1000)
    rest = sorted(single[1:])
    return {
        "repo_files": len(files),
        "changed_per_step": CHANGED_PER_STEP,
        "first_checkpoint_ms": round(single[0], 1),
        "checkpoint_ms": round(statistics.median(rest), 1),
        "checkpoint_p95_ms": round(rest[max(0, round(0.95 * len(rest)) - 1)], 1),
        "step_overhead_ms": round(statistics.median(overhead), 1),
    }


def measure_checkpoints(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as temp:
        repo = Path(temp) / "repo"
        repo.mkdir()
        files = _build_repo(repo, args.files)
        # Baton's stat caches go to a scratch data folder, not the user's
        os.environ["BATON_DATA_DIR"] = str(Path(temp) / "data")
        try:
            return asyncio.run(_checkpoints(repo, files, args.steps))
        finally:
            os.environ.pop("BATON_DATA_DIR", None)


MEASURES: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "checkpoint": measure_checkpoints,
    "run_search": lambda _args: measure_run_search(),
}
"""Name → measure; each adds its own keys to the last line's JSON."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--only", choices=sorted(MEASURES), action="append")
    args = parser.parse_args()
    result: dict[str, Any] = {}
    for name in args.only or MEASURES:
        figures = MEASURES[name](args)
        print(f"{name}: {figures}", file=sys.stderr)
        result.update(figures)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
