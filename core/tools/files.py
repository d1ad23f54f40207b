"""Opening files the way a file tool may, and doing file work that a cancel can leave behind.

:func:`open_regular` opens only regular files. A FIFO, a device or a socket inside the working
folder would otherwise block ``read`` forever (a FIFO with no writer) or stream without end
(``/dev/zero`` through a symlink is refused earlier, but a device node inside the folder is
not). The file is opened non-blocking first, beneath the working folder, checked with ``fstat``
on the open descriptor (no race with a swap between check and open), and only then switched
back to blocking reads. :func:`write_regular` is its counterpart for writes.

:func:`off_loop` runs blocking file work in a *daemon* thread. ``asyncio.to_thread`` uses the
default executor, whose threads the interpreter joins at exit: one stuck read (a hung network
file system) would keep Baton from exiting after a cancel. A daemon thread is abandoned
instead, so cancel always ends the process within the documented grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, ParamSpec, TypeVar

from core.config.atomic import atomic_write_at
from core.tools.base import ToolError
from core.tools.beneath import folder_beneath, lstat_at, open_file_at, split

P = ParamSpec("P")
T = TypeVar("T")

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words (``a named pipe (FIFO)``)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def refuse_special(path: Path, shown: str) -> None:
    """Raise :class:`ToolError` when ``path`` exists and is neither a regular file nor a folder."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ToolError(f"{shown} is {kind_of(mode)}; file tools only work on regular files.")


def open_regular(path: Path, shown: str, root: Path) -> BinaryIO:
    """Open the resolved ``path`` for binary reading if it is a regular file; :class:`ToolError`
    otherwise. It is opened beneath the working folder ``root`` (resolved), in a folder checked
    to be inside it and outside Baton's own (:mod:`core.tools.beneath`): a folder on the way
    swapped for a symlink since ``path`` was resolved cannot redirect the read."""
    folder, name = split(root, path)
    with folder_beneath(root, folder, shown) as dir_fd:
        return open_regular_at(dir_fd, name, shown)


def open_regular_at(dir_fd: int, name: str, shown: str) -> BinaryIO:
    """:func:`open_regular` for the entry ``name`` of a folder already open and checked."""
    try:
        fd = open_file_at(dir_fd, name, shown, _READ_FLAGS)
    except ToolError:
        entry = lstat_at(dir_fd, name)
        if entry is not None and not stat.S_ISREG(entry.st_mode):  # a socket: say what it is
            raise ToolError(
                f"{shown} is {kind_of(entry.st_mode)}; file tools only work on regular files."
            ) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ToolError(f"{shown} is {kind_of(mode)}; file tools only work on regular files.")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def utf8(text: str, shown: str) -> bytes:
    """``text`` as UTF-8, or a :class:`ToolError` for a lone surrogate (JSON can carry one)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"The content for {shown} has a character that is not valid Unicode text "
            f"({exc.object[exc.start : exc.end]!r} at position {exc.start}); it cannot be "
            "written as UTF-8."
        ) from None


def write_regular(path: Path, shown: str, root: Path, data: bytes) -> bool:
    """Replace (or create) the resolved ``path`` with ``data`` atomically, beneath ``root``.

    Missing folders are created inside held descriptors and the temporary file is renamed
    within the checked folder (:func:`core.config.atomic.atomic_write_at`). Returns whether the file
    existed before."""
    folder, name = split(root, path)
    with folder_beneath(root, folder, shown, create=True) as dir_fd:
        entry = lstat_at(dir_fd, name)
        if entry is not None and stat.S_ISDIR(entry.st_mode):
            raise ToolError(f"{shown} is a folder; give a file path.")
        if entry is not None and stat.S_ISLNK(entry.st_mode):
            raise ToolError(
                f"{shown} was just replaced by a symlink; file tools do not follow a symlink "
                "that changes while they work. Try again."
            )
        if entry is not None and not stat.S_ISREG(entry.st_mode):
            raise ToolError(
                f"{shown} is {kind_of(entry.st_mode)}; file tools only work on regular files."
            )
        try:
            return atomic_write_at(dir_fd, name, data)
        except OSError as exc:
            raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}.") from exc


async def off_loop(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)`` in a daemon thread; cancelling abandons the thread."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return  # cancelled meanwhile: nobody wants the result
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result = function(*args, **kwargs)
        except BaseException as error:  # handed to the awaiting task
            outcome: tuple[T | None, BaseException | None] = (None, error)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # the loop is closed: the run is over
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="baton-file-tool", daemon=True).start()
    return await future
