"""Crash-safe file writes.

Every file Baton edits is written to a temporary file in the same folder, flushed to disk,
then renamed over the target: a crash leaves either the old or the new content, never half
of each. The folder is synced too, so the rename itself survives a power cut on POSIX.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

NEW_FILE_MODE = 0o644
"""Requested for a new file; the kernel applies the umask (never read or changed here)."""
_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically, keeping the old file's permissions.

    ``mode`` sets the permissions of a new file exactly; without it a new file gets 0o644 less
    the umask. The umask is applied by the kernel when the temporary file is created, never
    read with ``os.umask`` (which can only be read by setting it: a thread creating a folder
    meanwhile would get it with the umask flipped to 0, i.e. world-writable).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        keep_mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        keep_mode = mode
    tmp_name = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp_name, _OPEN_FLAGS, NEW_FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            if keep_mode is not None:
                _set_mode(tmp.fileno(), tmp_name, keep_mode)
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_folder(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write ``text`` as UTF-8 atomically (newlines kept exactly as given)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def _set_mode(fd: int, name: Path, mode: int) -> None:
    if os.chmod in os.supports_fd:
        os.fchmod(fd, mode)
    else:  # Windows: only the read-only bit exists, set by name
        os.chmod(name, mode)


def _fsync_folder(folder: Path) -> None:
    if os.name != "posix":
        return  # Windows cannot open a folder for fsync; ReplaceFile is already durable.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_at(dir_fd: int, name: str, data: bytes, *, mode: int | None = None) -> bool:
    """:func:`atomic_write_bytes` for the entry ``name`` of the open folder ``dir_fd``.

    The temporary file is created and renamed by name *inside the held descriptor*, never
    through a path: a folder on the way swapped for a symlink meanwhile cannot redirect the
    write. A symlink in ``name``'s place is replaced, not followed. Returns whether ``name``
    existed (the file was overwritten rather than created).
    """
    try:
        old = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    keep_mode = old.st_mode & 0o7777 if old is not None and stat.S_ISREG(old.st_mode) else mode
    tmp_name = f".{name[:40]}.{secrets.token_hex(6)}.tmp"  # within NAME_MAX however long
    flags = _OPEN_FLAGS | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp_name, flags, NEW_FILE_MODE, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            if keep_mode is not None:
                os.fchmod(tmp.fileno(), keep_mode)
            os.fsync(tmp.fileno())
        os.rename(tmp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name, dir_fd=dir_fd)
        raise
    os.fsync(dir_fd)
    return old is not None
