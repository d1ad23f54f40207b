"""Opening files the way a file tool may, and doing file work that a cancel can leave behind.

:func:`open_regular` opens only regular files. A FIFO, a device or a socket inside the working
folder would otherwise block ``read`` forever (a FIFO with no writer) or stream without end
(``/dev/zero`` through a symlink is refused earlier, but a device node inside the folder is
not). The file is opened non-blocking first, checked with ``fstat`` on the open descriptor (no
race with a swap between check and open), and only then switched back to blocking reads.

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

from core.tools.base import ToolError

P = ParamSpec("P")
T = TypeVar("T")

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


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


def open_regular(path: Path, shown: str) -> BinaryIO:
    """Open ``path`` for binary reading if it is a regular file; :class:`ToolError` otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ToolError(f"File not found: {shown}.") from None
    except OSError as exc:
        refuse_special(path, shown)  # a socket cannot be opened at all: say what it is
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}.") from exc
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
