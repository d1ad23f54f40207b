"""The standard background load of the GUI and ingest benchmarks: one busy process per core.

A figure measured on an idle machine flatters: a person's machine also compiles, indexes and
runs a browser. :func:`background_load` starts one process per core that spins in pure Python
(as busy as a process can be, never sleeping), runs the block, and stops them, so every
benchmark loads the machine the same way and reports its figures both ways (keys ending in
``_loaded``); the goals hold for the loaded figures.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_SPIN = "while True:\n    pass\n"


@contextmanager
def background_load(processes: int | None = None) -> Iterator[int]:
    """Run the block with ``processes`` (default: one per core) busy processes beside it;
    yields how many."""
    count = processes or os.cpu_count() or 1
    spinners = [
        subprocess.Popen([sys.executable, "-c", _SPIN], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        yield count
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


def reference_ms() -> float:
    """CPU milliseconds this machine's Python takes for a fixed loop (5 million additions,
    median of three): how fast the machine is. Figures in CPU time (a batch item's, a turn's)
    are only comparable between machines next to it — the shared machines these benchmarks
    run on differ twofold from one day to the next."""

    def once() -> float:
        start, total = time.process_time(), 0
        for number in range(5_000_000):
            total += number
        return (time.process_time() - start) * 1000

    return round(statistics.median(once() for _ in range(3)), 1)


def quiet_and_loaded(measure: Callable[[], dict[str, float]]) -> dict[str, float]:
    """``measure()`` alone, then again under :func:`background_load`; one dict, the loaded
    figures under the same keys plus ``_loaded``, the load average seen before each and the
    machine's speed (:func:`reference_ms`, once, quiet)."""
    quiet = measure()
    quiet["load_average_1m"] = round(os.getloadavg()[0], 2)
    quiet["reference_ms"] = reference_ms()
    with background_load() as busy:
        print(f"under load: {busy} busy processes", flush=True)
        loaded = measure()
    loaded["load_average_1m"] = round(os.getloadavg()[0], 2)
    return {**quiet, **{f"{key}_loaded": value for key, value in loaded.items()}}
