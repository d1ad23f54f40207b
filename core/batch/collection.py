"""The garbage collector while a batch runs: fewer, smaller collections.

Every item leaves its whole object graph (runner, recording, publisher, run state, settings
copies — ~150 objects) in reference cycles that only the cyclic collector frees, and each
item lives across thousands of allocations, so its graph is promoted to the older
generations before it ends. With the default thresholds (700, 10, 10) a batch of 256
instant items ran ~160 young, ~15 middle and one or two full collections, and each full one
walked the whole heap (imports, catalogs, the window's objects: ~100k objects): a quarter of
the supervisor's CPU per item (benchmarks/batch.py).

So, for as long as at least one batch runs in the process:

* the objects that existed before are frozen (:func:`gc.freeze`): no collection walks them
  again; they are unfrozen when the last batch ends, so what became garbage among them is
  collected as before (a process that froze objects for its own reasons, e.g. before
  forking, should not run batches: the end of a batch unfreezes them too);
* a young collection waits for :data:`YOUNG_THRESHOLD` allocations instead of 700: the
  items' cycles are then mostly found in one young or middle collection, not carried into
  the oldest generation.

Nothing is disabled: cycles are still collected during the batch, only in larger steps
(memory held by the items' garbage stays bounded by the thresholds).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

YOUNG_THRESHOLD = 10_000
"""Allocations (net of deallocations) between young collections while a batch runs: a few
items' worth of objects, so a collection finds ended items' cycles rather than promoting
running ones."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int, int] = gc.get_threshold()


@contextlib.contextmanager
def batch_collection() -> Iterator[None]:
    """Collect garbage in larger steps while the block runs (nested and concurrent batches
    share it: the settings are restored when the last one ends)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
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
                gc.unfreeze()
