"""Stopping a child process together with everything it started.

A child started with ``start_new_session=True`` leads its own process group, so one signal to
the group reaches its pipelines, background jobs and grandchildren. :func:`stop_group` sends
SIGTERM, waits up to a grace period for the group to be gone, then sends SIGKILL.

"Gone" ignores zombies: an orphaned grandchild that exited stays a zombie until its new parent
reaps it, and some container init processes never do; counting zombies would turn every stop
into a full grace-period wait. On Linux, liveness is read from ``/proc``; elsewhere a signal 0
to the group answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

KILL_GRACE_S = 5.0
"""Between SIGTERM and SIGKILL: time for a test runner or server to shut down cleanly."""
POLL_S = 0.05
_PROC = Path("/proc")


async def stop_group(proc: asyncio.subprocess.Process, grace: float | None = None) -> None:
    """SIGTERM ``proc``'s group, SIGKILL what is left after ``grace`` s; reap ``proc``.

    ``grace`` defaults to :data:`KILL_GRACE_S`, read at call time (tests shorten it).
    """
    grace = KILL_GRACE_S if grace is None else grace
    if os.name != "posix":
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await wait_exit(proc)
        return
    pgid = proc.pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline:
        if proc.returncode is not None and not group_alive(pgid):
            return
        await asyncio.sleep(POLL_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    await wait_exit(proc)


async def wait_exit(proc: asyncio.subprocess.Process) -> int:
    """Wait until ``proc`` itself has exited; return its exit status.

    ``proc.wait()`` would also wait for the output pipes to close, which a grandchild that
    left the group can hold open indefinitely. asyncio offers no exit event short of a custom
    subprocess protocol, so ``returncode`` is polled.
    """
    while proc.returncode is None:  # noqa: ASYNC110 (no event to wait on; see above)
        await asyncio.sleep(POLL_S)
    return proc.returncode


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in group ``pgid``."""
    if not (_PROC / "self" / "stat").exists():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        state = process_state(int(entry.name))
        if state is not None and state[1] == pgid and state[0] not in "ZX":
            return True
    return False


def process_state(pid: int) -> tuple[str, int] | None:
    """``(state letter, process group)`` of ``pid`` from ``/proc``; None if it is gone."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # the command name may contain spaces
    return fields[0], int(fields[2])
