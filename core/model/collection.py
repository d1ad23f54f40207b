"""The garbage collector: the window's start-up objects frozen; a batch's in larger steps.

**The window.** A full collection walks every object that can be in a cycle, and once the
window has started that is ~100k of them (imports, catalogs, Qt wrappers): 60 ms on a slow
machine, a stall of the window in the middle of a live run (benchmarks/live.py). What exists
when the window has started lives as long as the process, so :func:`freeze_start_up` takes it
out of the collector's sight (:func:`gc.freeze`) for good: later collections walk only what
came after (runs, views), and cycles among those are collected as before.

**A batch.** Each running item holds its whole object graph (runner, recording, publisher,
run state — ~150 objects) across thousands of allocations, so a young collection finds it
alive and promotes it to the older generations. With the default thresholds (700, 10, 10) a
batch of 256 instant items ran ~160 young, ~15 middle and one or two full collections (when
items still ended in reference cycles), and each full one walked the whole heap (imports,
catalogs, the window's objects: ~100k objects): a quarter of the supervisor's CPU per item
(benchmarks/batch.py).

So, for as long as at least one batch runs in the process:

* the objects that existed before are frozen (:func:`gc.freeze`): no collection walks them
  again; they are unfrozen when the last batch ends, so what became garbage among them is
  collected as before (in the window, whose start-up objects are frozen for good, a batch
  leaves the freezing alone: its collections walk the window's later objects too, and
  nothing it froze would ever be unfrozen);
* a young collection waits for :data:`YOUNG_THRESHOLD` allocations instead of 700: fewer
  of them find running items alive and promote them.

Nothing is disabled: cycles are still collected during the batch, only in larger steps
(memory held by the items' garbage stays bounded by the thresholds).

**No cycles to collect.** A run's parts call back their owner — its approval gate and graph
gates publish through the runner, its recording stops the runner when the run file cannot be
written, the run file's sink reports to the recording — and a bound method held by a part
is a strong reference to the owner: every run, each batch item, left its whole graph (~100
objects) to the cyclic collector, which found it in a young collection and, every tenth one,
walked everything promoted since (~45 ms, a stall of the loop, on 1,024 instant items; ~0.1 ms
of CPU an item in all). The parts hold those callbacks :func:`weakly`, so a run's graph is
freed by reference counting the moment its last user lets go (tests/test_run_cycles.py).
"""

from __future__ import annotations

import contextlib
import gc
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import ParamSpec

P = ParamSpec("P")

YOUNG_THRESHOLD = 10_000
"""Allocations (net of deallocations) between young collections while a batch runs: a few
items' worth of objects, so a collection finds ended items' cycles rather than promoting
running ones."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] = gc.get_threshold()
_start_up_frozen = False


def freeze_start_up() -> None:
    """Freeze every object alive now, for good (see the module's docstring): call once, when
    a long-lived process has started (the window, after its first paint)."""
    global _start_up_frozen
    with _lock:
        if not _start_up_frozen and _depth == 0:
            gc.freeze()
        _start_up_frozen = True


@contextlib.contextmanager
def batch_collection() -> Iterator[None]:
    """Collect garbage in larger steps while the block runs (nested and concurrent batches
    share it: the settings are restored when the last one ends)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            if not _start_up_frozen:
                gc.freeze()
            if _saved[0]:  # 0: automatic collection is off, and stays so
                gc.set_threshold(max(YOUNG_THRESHOLD, _saved[0]), *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)
                if not _start_up_frozen:
                    gc.unfreeze()


def weakly(method: Callable[P, object]) -> Callable[P, None]:
    """``method``, a bound method, called through a weak reference to its object: a part that
    calls back its owner does not keep the owner alive (see "No cycles to collect" above).
    Once the owner is gone the call does nothing — it could only have reached a run that has
    ended."""
    reference = weakref.WeakMethod(method)

    def call(*args: P.args, **kwargs: P.kwargs) -> None:
        bound = reference()
        if bound is not None:
            bound(*args, **kwargs)

    return call
