"""Is the process that runs a run still there? An OS lock answers without guessing.

The process recording a run holds an exclusive lock on ``<run-id>.lock`` beside the run file
for as long as it runs. The operating system drops the lock the moment that process ends —
finished, crashed, ``kill -9``'d — so "running" in the index can be checked exactly: the lock
is still held, or the run was interrupted. (A file's age or a bare pid would guess: a long
tool call writes nothing for minutes, and pids are reused.) The file also names the owner's
pid and start time, for a person looking at it.

POSIX uses ``flock`` (per open file, so a second look from the same process sees the lock
too); Windows uses ``msvcrt.locking`` on the file's first byte.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import IO


def lock_path(run_file: Path) -> Path:
    return run_file.with_suffix(".lock")


class LivenessLock:
    """Held by the process running a run, from before it is indexed until it is recorded as
    finished."""

    def __init__(self, run_file: Path) -> None:
        self.path = lock_path(run_file)
        self._file: IO[str] | None = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115
        try:
            _try_lock(self._file)
        except OSError:
            self._file.close()
            self._file = None
            raise
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"pid {os.getpid()} started {time.time():.3f}\n")
        self._file.flush()

    def release(self) -> None:
        """Let go and remove the lock file (the run has been recorded as finished)."""
        if self._file is None:
            return
        self.path.unlink(missing_ok=True)
        self._file.close()  # closing drops the lock
        self._file = None


def owner_alive(run_file: Path) -> bool:
    """Whether some process still holds the run's lock. A run without a lock file has no
    owner (it finished, or was written by something that never locked it)."""
    try:
        file = open(lock_path(run_file), encoding="utf-8")  # noqa: SIM115
    except OSError:
        return False
    with file:
        try:
            _try_lock(file)
        except OSError:
            return True
        _unlock(file)
        return False


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(file: IO[str]) -> None:
        file.seek(0)
        msvcrt.locking(file.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock(file: IO[str]) -> None:
        file.seek(0)
        msvcrt.locking(file.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(file: IO[str]) -> None:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(file: IO[str]) -> None:
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)
