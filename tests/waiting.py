"""Waiting on conditions that announce nothing: a process appearing in the process table, an
orphan leaving it, a port starting to accept.

The operating system gives no event for these, so they are re-checked on a short poll until
they hold or a generous limit passes; the limit only bounds a failure, it never decides a pass,
so a slow machine waits longer and still passes. Everything that *does* announce itself (a Qt
signal, an asyncio future, a server's request) is waited on directly instead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

POLL_S = 0.05
"""Between checks: short next to a process's start, long next to a check's cost."""
LIMIT_S = 60.0


def wait_until(
    condition: Callable[[], object], what: str | Callable[[], str], limit: float = LIMIT_S
) -> None:
    """Block until ``condition()`` is true; fails with ``what`` (or what it returns) after
    ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(what() if callable(what) else what)
        time.sleep(POLL_S)


async def until(
    condition: Callable[[], object], what: str | Callable[[], str], limit: float = LIMIT_S
) -> None:
    """:func:`wait_until` without blocking the event loop (the awaited run goes on)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(what() if callable(what) else what)
        await asyncio.sleep(POLL_S)
