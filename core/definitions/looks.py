"""One look at a project's files: within it, each fingerprint of a folder is computed once.

Preparing a run asks about the same folders for every step (trust, what the CLIs would load,
the context files and skills a step may read), and a batch's check asks again for every item
— all at one moment, so one answer per folder serves them all. In a big checkout one search
for context files below the folder is what costs: checking a batch in a trusted 2,000-folder
project searched it twice an item, 145 ms of each item's check (``benchmarks/batch.py``,
``trusted_repo_check_ms_per_item``; 1.1 ms in one look). Outside a look, every question looks
at the disk again: a step's start compares what it may read with what was trusted, and must
see what an earlier step wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

_looked: ContextVar[dict[tuple[str, str], str] | None] = ContextVar("one_look", default=None)


@contextmanager
def one_look() -> Iterator[None]:
    """Remember fingerprints until the block ends. A look inside another is the same look
    (a batch checks all its items in one, and each item's preparation opens its own).
    Synchronous code only: a task made inside would carry the look past its moment."""
    if _looked.get() is not None:
        yield
        return
    token = _looked.set({})
    try:
        yield
    finally:
        _looked.reset(token)


def looked_once(kind: str, folder: Path, compute: Callable[[Path], str]) -> str:
    """``compute(folder)``, once per look for each ``kind`` of fingerprint and folder."""
    looked = _looked.get()
    if looked is None:
        return compute(folder)
    key = (kind, str(folder.absolute()))
    found = looked.get(key)
    if found is None:
        found = looked[key] = compute(folder)
    return found
