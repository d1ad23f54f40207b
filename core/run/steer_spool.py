"""Steering a run from another process: a spool folder per live run.

``baton runs steer`` runs in a different process from the one running the run (another
terminal, or the window), so the message travels through the data folder: the sender writes
``<data>/steer/<run-id>/<name>.json`` atomically (folders 0700, files 0600: only the person's
own account can steer), and the running process's :class:`SteerWatcher` — asked by one
poller task per event loop while the run lives — picks it up within half a second, delivers
it through :meth:`core.run.runner.Runner.steer` as the window's message box does (as a
``user_message``) and writes ``<name>.answer`` saying whether it was delivered, so the sender
can tell the person instead of hoping.

Nothing in the folder is trusted: a message is read without following symlinks, refused when
too large or malformed, and deleted before it is delivered so it is delivered at most once.
A run's folder is removed when the run ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import shutil
import stat
import time
import weakref
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.backends.steering import SteerError
from core.config import paths
from core.config.atomic import atomic_write_bytes

POLL_S = 0.5
"""How often a live run looks for messages: quick enough for a person, idle otherwise."""
MAX_MESSAGE_BYTES = 64 * 1024
"""Larger files are refused unread: a message box, not a file transfer."""
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_NAME = re.compile(r"[0-9]{20}-[0-9a-f]{8}")
_PRIVATE_FILE = 0o600
_PRIVATE_FOLDER = 0o700


class SteerMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_MESSAGE_BYTES)
    step: int | None = Field(default=None, ge=1)
    """1-based, as the window and the terminal show steps; None: the one step running."""


class SteerAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    delivered: bool
    step: int | None = None
    """The 1-based step it went to."""
    reason: str = ""


def spool_dir(run_id: str) -> Path:
    """The run's spool folder; raises ValueError for an id that is not a plain name (a
    ``../`` would otherwise point the spool anywhere)."""
    if not _RUN_ID.fullmatch(run_id):
        raise ValueError(f"not a run id: {run_id!r}")
    return paths.data_path() / "steer" / run_id  # made by the first message posted


def _private_folder(folder: Path) -> Path:
    paths.data_dir()  # made, if it was not: the spool's folders go in it
    for part in (folder.parent, folder):
        part.mkdir(mode=_PRIVATE_FOLDER, exist_ok=True)
        if part.is_symlink() or not part.is_dir():
            raise OSError(f"{part} is not a folder")
    return folder


def post(run_id: str, message: SteerMessage) -> str:
    """Leave ``message`` for the run's process; returns its name (for :func:`answer_to`)."""
    folder = _private_folder(spool_dir(run_id))
    name = f"{time.time_ns():020d}-{secrets.token_hex(4)}"
    data = message.model_dump_json().encode("utf-8")
    atomic_write_bytes(folder / f"{name}.json", data, mode=_PRIVATE_FILE)
    return name


def answer_to(run_id: str, name: str) -> SteerAnswer | None:
    """The running process's answer to message ``name`` (and it is cleared), or None yet."""
    path = spool_dir(run_id) / f"{name}.answer"
    raw = _read_plain_file(path)
    if raw is None:
        return None
    path.unlink(missing_ok=True)
    try:
        return SteerAnswer.model_validate_json(raw)
    except ValidationError:
        return SteerAnswer(delivered=False, reason="the running process answered nonsense")


def withdraw(run_id: str, name: str) -> bool:
    """Take back a message nobody picked up; False when it was taken meanwhile."""
    try:
        (spool_dir(run_id) / f"{name}.json").unlink()
    except FileNotFoundError:
        return False
    return True


def _read_plain_file(path: Path) -> bytes | None:
    """The bytes of a regular file no larger than the limit, never through a symlink; None
    for anything else (missing, a link, a folder, a fifo, too large)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MESSAGE_BYTES:
            return None
        return file.read(MAX_MESSAGE_BYTES + 1)


Deliver = Callable[[int | None, str], int]
"""Deliver text to a 1-based step (None: the one running); returns the step it went to or
raises :class:`SteerError`."""


class SteerWatcher:
    """The running process's side: picks messages up and answers each."""

    def __init__(self, run_id: str, deliver: Deliver) -> None:
        self.folder = spool_dir(run_id)
        self._deliver = deliver

    def take(self) -> int:
        """Deliver every waiting message, oldest first; returns how many were answered."""
        try:
            names = sorted(os.listdir(self.folder))
        except OSError:
            return 0
        answered = 0
        for entry in names:
            name, dot, suffix = entry.partition(".")
            if not dot or suffix != "json" or not _NAME.fullmatch(name):
                continue  # a temporary file being written, an answer, or a stranger
            path = self.folder / entry
            raw = _read_plain_file(path)
            path.unlink(missing_ok=True)  # taken: delivered at most once, whatever happens
            self._answer(name, self._answer_for(raw))
            answered += 1
        return answered

    def _answer_for(self, raw: bytes | None) -> SteerAnswer:
        if raw is None:
            return SteerAnswer(delivered=False, reason="the message was not a plain small file")
        try:
            message = SteerMessage.model_validate_json(raw)
        except ValidationError:
            return SteerAnswer(delivered=False, reason="the message was malformed")
        try:
            step = self._deliver(message.step, message.text)
        except SteerError as error:
            return SteerAnswer(delivered=False, step=message.step, reason=str(error))
        return SteerAnswer(delivered=True, step=step)

    def _answer(self, name: str, answer: SteerAnswer) -> None:
        with contextlib.suppress(OSError):  # the sender gave up and the folder is gone
            atomic_write_bytes(
                self.folder / f"{name}.answer",
                answer.model_dump_json().encode("utf-8"),
                mode=_PRIVATE_FILE,
            )

    def remove(self) -> None:
        """The run ended: nothing more can be delivered, so nothing is left behind."""
        shutil.rmtree(self.folder, ignore_errors=True)


class _SpoolPoller:
    """Looks for every live run's messages of one event loop, every :data:`POLL_S`: one
    listing of the spool's parent folder for them all, then a look inside the folders that
    exist. A poller task per run cost a task, a failing listing and a cancel per run — a
    batch starts hundreds (~50 µs each, a sixtieth of a batch item's CPU)."""

    def __init__(self) -> None:
        self._watchers: dict[str, SteerWatcher] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, run_id: str, watcher: SteerWatcher) -> None:
        self._watchers[run_id] = watcher
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._poll(), name="steer spool")

    def discard(self, run_id: str) -> None:
        self._watchers.pop(run_id, None)
        if not self._watchers and self._task is not None:
            self._task.cancel()  # the last run ended: nothing to look for
            self._task = None

    async def _poll(self) -> None:
        while True:
            self._take_all()
            await asyncio.sleep(POLL_S)

    def _take_all(self) -> None:
        listed: dict[Path, set[str]] = {}  # the spool folder, once (a run's own, if moved)
        for watcher in tuple(self._watchers.values()):
            spool = watcher.folder.parent
            if spool not in listed:
                try:
                    listed[spool] = set(os.listdir(spool))
                except OSError:  # no message has ever been sent from this data folder
                    listed[spool] = set()
            if watcher.folder.name in listed[spool]:
                watcher.take()


_pollers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _SpoolPoller] = (
    weakref.WeakKeyDictionary()
)


@contextlib.asynccontextmanager
async def watching(run_id: str, deliver: Deliver) -> AsyncIterator[None]:
    """Take messages for ``run_id`` while the block runs (a live run), then remove its folder."""
    watcher = SteerWatcher(run_id, deliver)
    loop = asyncio.get_running_loop()
    poller = _pollers.get(loop)
    if poller is None:
        poller = _pollers[loop] = _SpoolPoller()
    poller.add(run_id, watcher)
    try:
        yield
    finally:
        poller.discard(run_id)
        watcher.remove()
