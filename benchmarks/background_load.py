"""Busy processes for benchmarks that must hold under load: one spinning interpreter per CPU,
started and ended by the benchmark itself, so "under load" means the same thing on every
machine (a shared 2-core runner already busy with others is busier still)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

SPIN = "while True:\n    pass\n"


@contextmanager
def background_load(processes: int | None = None) -> Iterator[int]:
    """Keep ``processes`` (default: one per CPU) spinning for the ``with`` block; yields how
    many. They are ended, and waited for, whatever happens inside."""
    count = processes if processes is not None else os.cpu_count() or 2
    spinners = [
        subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        yield count
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
