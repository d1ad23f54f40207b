"""Ending a child process together with everything it started — on every platform.

One module stops every child Baton starts (``bash`` calls, the pi and Claude Code CLIs):

* :func:`stop_tree` — ``await stop_tree(proc)`` for an ``asyncio`` subprocess: SIGTERM to the
  child and all its descendants, SIGKILL to whatever is left after the grace period
  (:data:`KILL_GRACE_S`), then the child is reaped. Windows: ``TerminateProcess`` via psutil.
* :func:`stop_tagged` — every process carrying a tag, for a child a library started.
* :class:`ProcessTree` — the same, for a child whose tree is *tracked while it runs*
  (:meth:`ProcessTree.refresh`) and tagged through its environment (:data:`TAG_VARIABLE`), so
  a process that left the tree (``setsid``, ``nohup``, a double fork re-parented to init or to
  Baton as child subreaper) is still found and ended.

Process groups are not enough on their own: ``setsid`` leaves the group, and Windows has none.
psutil walks parent links (``/proc`` on Linux) instead. Zombies count as gone: an orphan that
exited stays a zombie until its new parent reaps it, and some container inits never do.
Zombies that are Baton's own children (re-parented to it as subreaper) are reaped here.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import secrets
import sys
from collections.abc import Iterable
from pathlib import Path

import psutil

KILL_GRACE_S = 5.0
"""Between SIGTERM and SIGKILL: time for a test runner or server to shut down cleanly."""
POLL_S = 0.05
SETTLE_POLLS = 4
TAG_VARIABLE = "BATON_PROCESS_TAG"
"""Set in a tracked child's environment; every process it starts inherits it."""
_PR_SET_CHILD_SUBREAPER = 36
_subreaper = False

_GONE = (psutil.NoSuchProcess, psutil.ZombieProcess)


def new_tag() -> str:
    """A fresh value for :data:`TAG_VARIABLE`: unguessable, so no other process shares it."""
    return secrets.token_hex(12)


def become_subreaper() -> bool:
    """Make Baton the child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``); True if it is.

    Orphans of its children are then re-parented to Baton instead of init, so they stay in
    Baton's process tree and are reaped here. Idempotent; False where unsupported.
    """
    global _subreaper
    if _subreaper:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


class ProcessTree:
    """The processes one child started, remembered as they appear.

    Call :meth:`refresh` while the child runs (cheap: one walk of its descendants) and
    :meth:`stop` when it is done. ``tag`` is the :data:`TAG_VARIABLE` value put in the child's
    environment, or None when the child was started without one.
    """

    def __init__(self, pid: int, tag: str | None = None) -> None:
        self.pid = pid
        self.tag = tag
        self._known: dict[int, psutil.Process] = {}
        self._root = _process(pid)
        """Kept from the start: psutil compares its start time, so a reused pid is not it."""
        self._since = _created(self._root) if self._root is not None else 0.0
        """Tagged processes are younger than the child: older ones are not even looked at."""
        self.refresh()

    def refresh(self) -> None:
        """Remember the child's current descendants (they may leave the tree later)."""
        if self._root is None or not _running(self._root):
            return  # gone (or its pid reused by a stranger, whose children are not ours)
        try:
            found = self._root.children(recursive=True)
        except _GONE:
            return
        for process in found:
            self._known.setdefault(process.pid, process)

    def members(self) -> list[psutil.Process]:
        """Every known or tagged process still running (the root excluded; Baton never)."""
        self.refresh()
        if self.tag is not None:
            for process in _tagged(self.tag, self._since):
                if process.pid not in (self.pid, os.getpid()):
                    self._known.setdefault(process.pid, process)
        return [p for p in self._known.values() if _running(p)]

    async def stop(self, proc: asyncio.subprocess.Process | None, grace: float | None) -> bool:
        """SIGTERM the child (``proc``, reaped by asyncio) and its tree; SIGKILL after ``grace``.

        Returns whether anything besides the child itself was still running. Cheap when
        nothing is left, so call it after every child: it also reaps re-parented zombies.
        """
        grace = KILL_GRACE_S if grace is None else grace
        targets = await self._settled(proc)
        root = _process(self.pid) if proc is None or proc.returncode is None else None
        if not targets and _root_done(proc, root):  # the common case: nothing was left
            self._reap()
            return False
        everyone = [*targets, root] if root is not None else targets
        _signal_all(everyone, kill=False)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while loop.time() < deadline:
            if _root_done(proc, root) and not any(_running(p) for p in self.members()):
                self._reap()
                return bool(targets)
            await asyncio.sleep(POLL_S)
        _signal_all([*self.members(), *everyone], kill=True)
        if proc is not None:
            await wait_exit(proc)
        for _ in range(int(1 / POLL_S)):  # SIGKILL cannot be ignored: this ends at once
            if not any(_running(p) for p in targets):
                break
            await asyncio.sleep(POLL_S)
        self._reap()
        return bool(targets)

    async def _settled(self, proc: asyncio.subprocess.Process | None) -> list[psutil.Process]:
        """The members still running once those already on their way out are gone: when the
        child has exited, a pipeline's last processes (or a PID namespace being torn down) may
        need a moment, and are not leftovers."""
        targets = self.members()
        for _ in range(SETTLE_POLLS):
            if not targets or proc is None or proc.returncode is None:
                break
            await asyncio.sleep(POLL_S / 2)
            targets = [p for p in targets if _running(p)]
        return targets

    def _reap(self) -> None:
        """Reap Baton's zombie children that belonged to this tree — known members, and any
        in the child's session (an orphan that ended before it was ever seen): as subreaper,
        nobody else will. Other children (asyncio's own) are never touched."""
        orphans = _zombie_children(session=self.pid) if _subreaper else []
        _reap([*self._known.values(), *orphans])


async def stop_tree(proc: asyncio.subprocess.Process, grace: float | None = None) -> None:
    """SIGTERM ``proc`` and all its descendants, SIGKILL what is left after ``grace`` s.

    The one call a backend needs to end a CLI child cleanly; ``proc`` is reaped on return.
    ``grace`` defaults to :data:`KILL_GRACE_S`, read at call time (tests shorten it).
    """
    await ProcessTree(proc.pid).stop(proc, grace)


async def stop_tagged(tag: str, since: float, grace: float | None = None) -> int:
    """SIGTERM every process carrying ``tag`` (:data:`TAG_VARIABLE`) started at ``since`` or
    later, SIGKILL what is left after ``grace``; returns how many there were. For a child a
    library started (an MCP server the SDK launched): its pid is the library's, the tag is
    Baton's, and whatever it started — ``setsid``, double fork — still carries it."""
    grace = KILL_GRACE_S if grace is None else grace
    targets = [p for p in _tagged(tag, since) if _running(p)]
    if not targets:
        return 0
    _signal_all(targets, kill=False)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline and any(_running(p) for p in targets):  # noqa: ASYNC110 (no exit event to wait on)
        await asyncio.sleep(POLL_S)
    _signal_all([p for p in targets if _running(p)], kill=True)
    _reap(targets)
    return len(targets)


async def wait_exit(proc: asyncio.subprocess.Process) -> int:
    """Wait until ``proc`` itself has exited; return its exit status.

    ``proc.wait()`` would also wait for the output pipes to close, which a grandchild that
    left the tree can hold open indefinitely. asyncio offers no exit event short of a custom
    subprocess protocol, so ``returncode`` is polled.
    """
    while proc.returncode is None:  # noqa: ASYNC110 (no event to wait on; see above)
        await asyncio.sleep(POLL_S)
    return proc.returncode


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (non-zombie) process."""
    process = _process(pid)
    return process is not None and _running(process)


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except _GONE:
        return None


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except _GONE:
        return False
    except psutil.AccessDenied:
        return True


def _root_done(proc: asyncio.subprocess.Process | None, root: psutil.Process | None) -> bool:
    if proc is not None:
        return proc.returncode is not None
    return root is None or not _running(root)


def _signal_all(processes: Iterable[psutil.Process], *, kill: bool) -> None:
    for process in processes:
        with contextlib.suppress(psutil.Error):
            if kill:
                process.kill()
            else:
                process.terminate()


def _reap(processes: Iterable[psutil.Process]) -> None:
    """Collect the exit status of those that are Baton's own zombie children (subreaper)."""
    if os.name != "posix":
        return
    me = os.getpid()
    for process in processes:
        with contextlib.suppress(psutil.Error, ChildProcessError, OSError):
            if process.ppid() == me and process.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(process.pid, os.WNOHANG)


def _zombie_children(session: int) -> list[psutil.Process]:
    """Baton's zombie children whose session is ``session`` (Linux ``/proc``; else none)."""
    found = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children():
            with contextlib.suppress(psutil.Error, OSError, ValueError, IndexError):
                if child.status() != psutil.STATUS_ZOMBIE or child.pid == session:
                    continue
                stat = Path(f"/proc/{child.pid}/stat").read_text()
                fields = stat[stat.rfind(")") + 2 :].split()  # the name may hold spaces
                if int(fields[3]) == session:
                    found.append(child)
    return found


def _tagged(tag: str, since: float) -> list[psutil.Process]:
    """Processes started at ``since`` or later whose environment carries ``tag``: those that
    left the tree but not the tag. Reading an environment costs far more than a start time."""
    found = []
    me = os.getpid()
    for process in psutil.process_iter(["create_time"]):
        if process.pid == me or (process.info["create_time"] or 0.0) < since:
            continue
        with contextlib.suppress(psutil.Error, OSError):
            if process.environ().get(TAG_VARIABLE) == tag:
                found.append(process)
    return found


def _created(process: psutil.Process) -> float:
    """Start time, less a little: the clock psutil reads has a coarse resolution."""
    try:
        return process.create_time() - 0.1
    except psutil.Error:
        return 0.0
