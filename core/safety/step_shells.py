"""Which step's shell a process descends from, told by the process tree, not the environment.

A ``baton`` typed in a step's ``bash`` must know it was started by that step: the recursion
guard counts how deep it is, and a document it edits is the step's edit, not a person's. An
environment variable alone cannot carry that — ``env -u``, ``env -i`` or ``exec env -u … bash``
drop it, and an agent can set a forged one. So the supervisor that starts a step's shell
records it here, in Baton's data folder, by pid and start time (a reused pid does not match),
for as long as the shell runs; a ``baton`` looks for its nearest recorded ancestor, and failing
that for the session it belongs to: the shell starts its own session, so a process orphaned by
``nohup``, ``&`` or ``disown`` (re-parented away from the shell) still carries the shell's pid as
its session id.

Not recognised: a process that leaves both the tree and the session (``setsid`` in a child that
then exits, ``systemd-run``, ``ssh localhost``). Unsandboxed, an agent runs as the person; the
sandbox is the boundary, this is attribution.

Inside the bubblewrap sandbox the host's pids are invisible and the data folder is hidden, so
there the environment marker (:mod:`core.safety.nesting`) is what a nested ``baton`` finds.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from core.config.atomic import atomic_write_text
from core.config.paths import data_path

FOLDER = "step-shells"


@dataclass(frozen=True)
class StepShell:
    """A running step shell: whose it is and how deep a run it starts would be."""

    run_id: str
    step: int
    agent: str
    depth: int


def _folder() -> Path:
    return data_path() / FOLDER  # made by the first step shell recorded


def _record_path(pid: int) -> Path:
    return _folder() / f"{pid}.json"


@contextlib.contextmanager
def recorded(pid: int, shell: StepShell) -> Iterator[None]:
    """Record the shell ``pid`` (just started) as ``shell`` until the block ends."""
    try:
        started = psutil.Process(pid).create_time()
    except psutil.Error:
        yield  # already gone: nothing below it to recognise
        return
    path = _record_path(pid)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({"started": started, **asdict(shell)}), mode=0o600)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def nearest_step_shell(process: psutil.Process | None = None) -> StepShell | None:
    """The recorded step shell that is ``process`` (default: this one) or its nearest ancestor,
    or leads its session; None when there is none."""
    folder = _folder()
    if not folder.is_dir():
        return None
    try:
        me = process.pid if process is not None else os.getpid()
        lineage = lineage_pids() if process is None else _lineage(process)
    except psutil.Error:
        return None
    for pid in lineage:
        shell = _live(folder, pid)
        if shell is not None:
            return shell
    try:
        return _live(folder, os.getsid(me))
    except OSError:
        return None


def lineage_pids() -> tuple[int, ...]:
    """This process and its ancestors, nearest first (raises ``psutil.Error``)."""
    return _own_lineage(os.getpid(), os.getppid())


@functools.lru_cache(maxsize=4)
def _own_lineage(pid: int, parent: int) -> tuple[int, ...]:
    """Walked once while this process keeps its parent: reading the process tree costs ~1 ms
    and every run a batch starts asks (benchmarks/batch.py). Keyed by the parent too, so a
    fork or a re-parented process walks again."""
    return _lineage(psutil.Process(pid))


def _lineage(process: psutil.Process) -> tuple[int, ...]:
    # itself first: bash execs a lone command in place
    return (process.pid, *(ancestor.pid for ancestor in process.parents()))


def _live(folder: Path, pid: int) -> StepShell | None:
    """The shell recorded for ``pid``, if that process is still the one recorded."""
    record = _read(folder / f"{pid}.json")
    if record is None:
        return None
    try:
        if psutil.Process(pid).create_time() != record.started:
            return None  # the pid of a shell that ended, reused by another process
    except psutil.Error:
        return None
    return record.shell


@dataclass(frozen=True)
class _Record:
    started: float
    shell: StepShell


def _read(path: Path) -> _Record | None:
    """The record at ``path``; None when there is none or it is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        shell = StepShell(
            run_id=str(data["run_id"]),
            step=int(data["step"]),
            agent=str(data["agent"]),
            depth=int(data["depth"]),
        )
        return _Record(float(data["started"]), shell)
    except (OSError, ValueError, KeyError, TypeError):
        return None
