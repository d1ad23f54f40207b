"""One look at a project's files: within it, each file is read once and each fingerprint of a
folder computed once.

**One reading.** Deciding whether a checkout may steer a model reads its files twice: the
trust check hashes them (:mod:`core.safety.trust`), and the loaders parse them (agents,
presets, context files, skills, ``.mcp.json``). Read twice, a file can change in between — a
model in another run of the same project, rewriting ``AGENTS.md`` back and forth in a loop,
would now and then get its text parsed while the check had hashed the trusted one. Inside a
look every reading of a file goes through :func:`read_file`, which reads it once and gives
every later reader the same bytes: what is checked is what is used.

**One answer per folder.** Preparing a run asks about the same folders for every step (trust,
what the CLIs would load, the context files and skills a step may read), and a batch's check
asks again for every item — all at one moment, so one answer per folder serves them all. In a
big checkout one search for context files below the folder is what costs: checking a batch in a
trusted 2,000-folder project searched it twice an item, 145 ms of each item's check
(``benchmarks/batch.py``, ``trusted_repo_check_ms_per_item``; 1.1 ms in one look).

Outside a look, every question looks at the disk again. A step's start opens a look of its own
around what it compares and loads (its prompt's sources, its MCP servers, a CLI's command
line), so it sees what an earlier step wrote, once.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
"""Non-blocking: a FIFO put where a file was expected is refused, not waited on forever."""


@dataclass(frozen=True)
class FileRead:
    """A file's bytes, and where they were read from."""

    data: bytes
    real: Path
    """The file read, links resolved: on Linux the open descriptor's own path, so a check of
    where the bytes came from cannot be raced by swapping a link after the reading."""
    whole: bool = True
    """False: cut at the limit the reader asked for (the file may be longer)."""


@dataclass
class _Look:
    fingerprints: dict[tuple[str, str], str] = field(default_factory=dict)
    files: dict[str, FileRead | OSError] = field(default_factory=dict)


_looked: ContextVar[_Look | None] = ContextVar("one_look", default=None)


@contextmanager
def one_look() -> Iterator[None]:
    """Read each file once and remember fingerprints until the block ends. A look inside
    another is the same look (a batch checks all its items in one, and each item's
    preparation opens its own). Synchronous code only: a task made inside would carry the look
    past its moment."""
    if _looked.get() is not None:
        yield
        return
    token = _looked.set(_Look())
    try:
        yield
    finally:
        _looked.reset(token)


def looked_once(kind: str, folder: Path, compute: Callable[[Path], str]) -> str:
    """``compute(folder)``, once per look for each ``kind`` of fingerprint and folder."""
    look = _looked.get()
    if look is None:
        return compute(folder)
    key = (kind, str(folder.absolute()))
    found = look.fingerprints.get(key)
    if found is None:
        found = look.fingerprints[key] = compute(folder)
    return found


def read_file(path: Path, limit: int | None = None) -> FileRead:
    """The bytes of the regular file at ``path`` (links followed), at most ``limit`` of them.
    Inside a look the first reading is remembered, and every later call gets the same bytes
    (cut to its ``limit``); only a file longer than an earlier reader's limit is read again,
    further — a loader that caps what it reads still reads no more than its cap — and that
    reading must begin with the bytes already given out, else the file is unreadable for the
    rest of the look. Raises :class:`OSError`, also when ``path`` is not a regular file (a
    folder, a FIFO, a device); a look remembers that too."""
    look = _looked.get()
    if look is None:
        return _read(path, limit)
    key = os.path.abspath(path)
    found = look.files.get(key)
    earlier = found if isinstance(found, FileRead) and not _covers(found, limit) else None
    if found is None or earlier is not None:
        try:
            found = _read(path, limit)
        except OSError as error:
            found = error
        if earlier is not None and not _continues(found, earlier):
            found = OSError(errno.EAGAIN, "changed while it was being read", str(path))
        look.files[key] = found
    if isinstance(found, OSError):
        raise OSError(found.errno, found.strerror, found.filename)
    if limit is None or len(found.data) <= limit:
        return found
    return FileRead(found.data[:limit], found.real, whole=False)


def _continues(found: FileRead | OSError, earlier: FileRead) -> bool:
    """Whether a reading further begins with the bytes an earlier reader got: every reader in
    a look sees the same file, or the file counts as unreadable (what was checked and what is
    used can then never differ)."""
    return isinstance(found, FileRead) and found.data.startswith(earlier.data)


def _covers(read: FileRead, limit: int | None) -> bool:
    """Whether ``read`` holds all that a reader asking for ``limit`` bytes gets."""
    return read.whole or (limit is not None and limit <= len(read.data))


def _read(path: Path, limit: int | None) -> FileRead:
    fd = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        real = _descriptor_path(fd) or Path(os.path.realpath(path))
        data = _read_to(fd, limit, info.st_size)
    finally:
        os.close(fd)
    return FileRead(data, real, whole=limit is None or len(data) < limit)


def _read_to(fd: int, limit: int | None, size: int) -> bytes:
    """At most ``limit`` bytes of ``fd`` (None: to its end) with plain reads, the first sized
    by the file's length: every file of a checkout is read this way when a run is checked, and
    a buffered file object around the descriptor cost a third of a small file's reading. A file
    that grows meanwhile is read on to its end (or the limit)."""
    parts: list[bytes] = []
    left = limit
    want = size + 1
    while left is None or left > 0:
        chunk = os.read(fd, want if left is None else min(want, left))
        if not chunk:
            break
        parts.append(chunk)
        if left is not None:
            left -= len(chunk)
        want = 1 << 20
    return b"".join(parts)


def _descriptor_path(fd: int) -> Path | None:
    """Where the open file is (Linux's ``/proc/self/fd``); None where that cannot be asked."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None
