"""The standard background load of the GUI and ingest benchmarks: one busy process per core.

A figure measured on an idle machine flatters: a person's machine also compiles, indexes and
runs a browser. :func:`background_load` starts one process per core that spins in pure Python
(as busy as a process can be, never sleeping), runs the block, and stops them, so every
benchmark loads the machine the same way and reports its figures both ways (keys ending in
``_loaded``); the goals hold for the loaded figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
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


def quiet_and_loaded(measure: Callable[[], dict[str, float]]) -> dict[str, float]:
    """``measure()`` alone, then again under :func:`background_load`; one dict, the loaded
    figures under the same keys plus ``_loaded``, and the load average seen before each."""
    quiet = measure()
    quiet["load_average_1m"] = round(os.getloadavg()[0], 2)
    with background_load() as busy:
        print(f"under load: {busy} busy processes", flush=True)
        loaded = measure()
    loaded["load_average_1m"] = round(os.getloadavg()[0], 2)
    return {**quiet, **{f"{key}_loaded": value for key, value in loaded.items()}}
