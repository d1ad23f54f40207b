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


def lock_path(run_file: Path) -> Path:
    return run_file.with_suffix(".lock")


class LivenessLock:
    """Held by the process running a run, from before it is indexed until it is recorded as
    finished.

    Made with plain descriptors: every item of a batch takes one, and a text file that was
    truncated costs its ``close`` a flush of the file system's delayed allocation (ext4
    flushes a truncated file on close), ~1 ms of the event loop's time per run. The file is
    emptied only when an earlier owner left text in it."""

    def __init__(self, run_file: Path) -> None:
        self.path = lock_path(run_file)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _try_lock(fd)
            if os.fstat(fd).st_size:
                os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()} started {time.time():.3f}\n".encode())
        except OSError:
            os.close(fd)
            raise
        self._fd: int | None = fd

    def release(self) -> None:
        """Let go and remove the lock file (the run has been recorded as finished)."""
        if self._fd is None:
            return
        self.path.unlink(missing_ok=True)
        fd, self._fd = self._fd, None
        os.close(fd)  # closing drops the lock


def owner_alive(run_file: Path) -> bool:
    """Whether some process still holds the run's lock. A run without a lock file has no
    owner (it finished, or was written by something that never locked it)."""
    try:
        fd = os.open(lock_path(run_file), os.O_RDONLY)
    except OSError:
        return False
    try:
        _try_lock(fd)
    except OSError:
        return True
    else:
        _unlock(fd)
        return False
    finally:
        os.close(fd)


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
