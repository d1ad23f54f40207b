"""Parsed definition files kept between discoveries, so a refresh re-parses only what changed.

The GUI re-discovers agents and presets after every file-watch event, save, create and delete.
Parsing (YAML, pydantic) is most of that cost and almost every file is unchanged, so
:class:`ParseCache` keeps each file's outcome — the definition, or the error it raised —
under its path and source, valid while the file's ``(mtime_ns, size, inode)`` stays the same.
The inode catches an atomic save (write elsewhere + rename) that keeps the size. File times
come from a coarse clock, so a second in-place write of the same size within one tick would
keep the stamp: as git does with "racily clean" entries, an outcome is only kept when the file
was last written more than :data:`SETTLED_NS` before it was read. A file that cannot be
stat'ed is parsed every time (the parser reports why).

A cache is shared by a view's GUI-thread and worker-thread reads, so its table is guarded by a
lock; parsing itself runs outside the lock (two threads may parse the same file once each,
which is harmless: the outcome is the same).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

_Stamp = tuple[int, int, int]

SETTLED_NS = 1_000_000_000
"""How long ago a file must have been written for its parsed outcome to be kept."""


def _stamp(path: Path) -> _Stamp | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


class ParseCache(Generic[T]):
    """Outcomes of ``parse(path, source)`` by ``(path, source)`` and file stamp.

    ``errors`` are the exception types that are part of the outcome (a broken file stays broken
    until it changes); they are cached and raised again. Anything else propagates uncached.
    """

    def __init__(self, errors: tuple[type[Exception], ...]) -> None:
        self._errors = errors
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], tuple[_Stamp, T | Exception]] = {}

    def get(self, path: Path, source: str, parse: Callable[[Path], T]) -> T:
        """The parsed file: from the cache while the file is unchanged, else ``parse(path)``."""
        key = (str(path), source)
        now = time.time_ns()
        stamp = _stamp(path)
        with self._lock:
            entry = self._entries.get(key)
        if stamp is not None and entry is not None and entry[0] == stamp:
            outcome = entry[1]
        else:
            try:
                outcome = parse(path)
            except self._errors as error:
                outcome = error
            if stamp is not None and now - stamp[0] > SETTLED_NS:
                with self._lock:
                    self._entries[key] = (stamp, outcome)
        if isinstance(outcome, Exception):
            raise outcome.with_traceback(None)  # each raise starts afresh, nothing piles up
        return outcome
