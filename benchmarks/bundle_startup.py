"""Start to first paint: the packaged app against the pip install, in fresh processes.

Each sample spawns the app with ``BATON_STARTUP_PROBE`` set (it prints ``painted`` once its main
window has painted, then exits) and times spawn → that line. Two kinds, alternated run by run
so a busy moment on the machine hits both alike, :data:`RUNS` of each, medians compared:

* ``bundle`` — the built app (``BATON_BUNDLE``, default ``dist/Baton/baton``);
* ``pip`` — the ``baton`` command of the virtual environment (``python -m gui.launcher``),
  with its bytecode compiled by an untimed first run, as an installed package has it.

Each process gets fresh, empty config and data folders and the offscreen platform.

Last line, JSON: ``ratio`` = bundle / pip [goal ≤ 1.5], and the medians in ms.
"""

from __future__ import annotations

import json
import os
import site
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 9


def _time_to_paint(command: list[str], home: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        BATON_STARTUP_PROBE="1",
        BATON_CONFIG_DIR=str(home / "config"),
        BATON_DATA_DIR=str(home / "data"),
        HOME=str(home),
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",  # configured: no first-run panel
    )
    if "-m" in command:
        # The source tree, as `pip install -e .` has it, and this environment's packages (the
        # child starts in the scratch folder, where a symlinked venv is not always found).
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *site.getsitepackages()])
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=home)
    assert child.stdout is not None
    for line in child.stdout:
        if line.strip() == "painted":
            elapsed = time.perf_counter() - start
            break
    else:
        raise RuntimeError(f"{command[0]} exited without painting ({child.wait()})")
    child.wait(timeout=60)
    return elapsed * 1000


def main() -> None:
    bundle = Path(os.environ.get("BATON_BUNDLE", ROOT / "dist" / "Baton" / "baton"))
    kinds = {"bundle": [str(bundle)], "pip": [sys.executable, "-m", "gui.launcher"]}
    samples: dict[str, list[float]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as scratch:
        for command in kinds.values():  # untimed: bytecode, font caches
            _time_to_paint(command, Path(tempfile.mkdtemp(dir=scratch)))
        for _ in range(RUNS):
            for kind, command in kinds.items():
                samples[kind].append(_time_to_paint(command, Path(tempfile.mkdtemp(dir=scratch))))
    medians = {kind: statistics.median(values) for kind, values in samples.items()}
    for kind, values in samples.items():
        print(f"{kind:7} median {medians[kind]:7.1f} ms  ({', '.join(f'{v:.0f}' for v in values)})")
    result = {
        "ratio": round(medians["bundle"] / medians["pip"], 3),
        "bundle_ms": round(medians["bundle"], 1),
        "pip_ms": round(medians["pip"], 1),
        "runs": RUNS,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
