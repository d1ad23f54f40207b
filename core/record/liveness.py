"""Is the process that runs a run still there? An OS lock answers without guessing.

The process recording a run holds an exclusive lock on ``<run-id>.lock`` beside the run file
for as long as it runs. The operating system drops the lock the moment that process ends —
finished, crashed, ``kill -9``'d — so "running" in the index can be checked exactly: the lock
is still held, or the run was interrupted. (A file's age or a bare pid would guess: a long
tool call writes nothing for minutes, and pids are reused.) The file also names the owner's
pid and start time, for a person looking at it.

POSIX uses ``flock`` (per open file, so a second look from the same process sees the lock
too); Windows uses ``msvcrt.locking`` on the file's first byte.

On POSIX a process makes one locked file per runs folder (``.owners/<pid>-<tag>.lock``, its
:class:`_Owner`) and each run's ``<run-id>.lock`` is a hard link to it: a lock belongs to the
file, not the name, so every link reads "held" while the process lives and "free" once it
ended. Creating a file costs the file system an inode (~0.35 ms of CPU on the benchmark
machine, a tenth of a batch item), a link a directory entry (~0.01 ms). Where links cannot be
made (Windows, a file system without them), each run's lock is a file of its own, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import sys
import threading
import time
from pathlib import Path

OWNERS = ".owners"
"""The folder, beside the run files, of the processes' shared lock files."""


def lock_path(run_file: Path) -> Path:
    return run_file.with_suffix(".lock")


class LivenessLock:
    """Held by the process running a run, from before it is indexed until it is recorded as
    finished.

    Made with plain descriptors: a text file that was truncated costs its ``close`` a flush of
    the file system's delayed allocation (ext4 flushes a truncated file on close)."""

    def __init__(self, run_file: Path) -> None:
        self.path = lock_path(run_file)
        self._fd: int | None = None
        self._held = True
        if _linked(self.path):
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _try_lock(fd)
            _stamp(fd)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        """Let go and remove the lock file (the run has been recorded as finished)."""
        if not self._held:
            return
        self._held = False
        self.path.unlink(missing_ok=True)
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing drops the lock


def _stamp(fd: int) -> None:
    """Write who holds the lock (emptied first only when an earlier owner left text)."""
    if os.fstat(fd).st_size:
        os.ftruncate(fd, 0)
    os.write(fd, f"pid {os.getpid()} started {time.time():.3f}\n".encode())


class _Owner:
    """This process's locked file in one runs folder, which its runs' locks link to."""

    def __init__(self, folder: Path) -> None:
        owners = folder / OWNERS
        self.path = owners / f"{os.getpid()}-{secrets.token_hex(4)}.lock"
        self.pid = os.getpid()
        for attempt in range(2):
            owners.mkdir(exist_ok=True)
            if attempt == 0:
                _sweep(owners)
            try:
                self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileNotFoundError:  # another process's exit removed the empty folder
                if attempt:
                    raise
        try:
            _try_lock(self.fd)
            _stamp(self.fd)
        except OSError:
            self.close()
            raise

    def close(self) -> None:
        """Remove the file, and its folder when no other process has one there (the runs
        folder is left as it was found)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            os.close(self.fd)
        with contextlib.suppress(OSError):
            self.path.parent.rmdir()  # fails while another owner's file is in it


_owners: dict[Path, _Owner | None] = {}
"""Per runs folder: this process's owner file (None: links do not work there)."""
_owners_lock = threading.Lock()


def _linked(path: Path) -> bool:
    """Take the run's lock as a link to this process's owner file; False when links cannot
    be made here (the caller makes a file of its own). Raises :class:`FileExistsError` when a
    live process holds the run's lock."""
    if sys.platform == "win32":
        return False
    folder = path.parent
    with _owners_lock:
        known = folder in _owners
        owner = _owners.get(folder)
        if not known or (owner is not None and owner.pid != os.getpid()):
            try:
                owner = _Owner(folder)
            except OSError:
                owner = None
            _owners[folder] = owner
    if owner is None:
        return False
    for _ in range(2):
        try:
            os.link(owner.path, path)
            return True
        except FileExistsError:
            if owner_alive_at(path):
                raise
            path.unlink(missing_ok=True)  # a dead owner's, left behind
        except OSError:
            with _owners_lock:
                _owners[folder] = None
            return False
    return False


def _sweep(owners: Path) -> None:
    """Remove the owner files of processes that ended (their runs' links stay, so an
    interrupted run still reads interrupted until it is repaired)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(owners):
            if entry.name.endswith(".lock") and not owner_alive_at(Path(entry.path)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


@atexit.register
def _close_owners() -> None:
    for owner in _owners.values():
        if owner is not None and owner.pid == os.getpid():
            owner.close()
    _owners.clear()


def _forget_owners() -> None:
    """A forked child makes its own owner files: the parent's lock must not outlive the parent
    through the child's copy of the descriptor."""
    for owner in _owners.values():
        if owner is not None:
            with contextlib.suppress(OSError):
                os.close(owner.fd)
    _owners.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_owners)


def owner_alive(run_file: Path) -> bool:
    """Whether some process still holds the run's lock. A run without a lock file has no
    owner (it finished, or was written by something that never locked it)."""
    return owner_alive_at(lock_path(run_file))


def owner_alive_at(path: Path) -> bool:
    """Whether some process holds the lock file ``path``."""
    try:
        fd = os.open(path, os.O_RDONLY)
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
