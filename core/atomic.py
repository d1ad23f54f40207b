"""Crash-safe file writes.

Every file Baton edits is written to a temporary file in the same folder, flushed to disk,
then renamed over the target: a crash leaves either the old or the new content, never half
of each. The folder is synced too, so the rename itself survives a power cut on POSIX.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically, keeping the old file's permissions.

    ``mode`` sets the permissions of a new file (default: 0o644 less the umask).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        keep_mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        keep_mode = mode
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        if keep_mode is not None:
            os.chmod(tmp_name, keep_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_name, 0o644 & ~umask)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_folder(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write ``text`` as UTF-8 atomically (newlines kept exactly as given)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def _fsync_folder(folder: Path) -> None:
    if os.name != "posix":
        return  # Windows cannot open a folder for fsync; ReplaceFile is already durable.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
