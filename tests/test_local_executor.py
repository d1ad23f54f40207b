"""The local executor (:class:`core.batch.executors.LocalExecutor`): items in order, at most
``concurrency`` at once, nothing started after a cancel — and a batch of any size costs
``concurrency`` tasks, not one per item (10,000 tasks made at a batch's start held the event
loop, and so the window, for one long turn)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, cast

from core.batch.executors import ExecutorOptions, ItemHost, LocalExecutor
from core.batch.jobs import ItemJob
from tests.waiting import until


class _Host:
    """Runs "items" that each wait for the test to let them end."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()
        self.started: list[int] = []
        self.running = 0
        self.most_at_once = 0
        self.release = asyncio.Event()

    async def run_here(self, job: int) -> None:
        self.started.append(job)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await self.release.wait()
        finally:
            self.running -= 1


def _run(concurrency: int, items: int, host: _Host) -> Coroutine[Any, Any, None]:
    """The executor's ``run`` over ``items`` numbered jobs: all the executor does with a job
    is hand it to ``run_here``, and all it asks of its host is that and ``cancelled``."""
    jobs = cast("list[ItemJob]", list(range(items)))
    return LocalExecutor(ExecutorOptions(concurrency=concurrency)).run(jobs, cast(ItemHost, host))


async def test_items_start_in_order_and_at_most_concurrency_at_once() -> None:
    host = _Host()
    batch = asyncio.create_task(_run(3, 10, host))
    await until(lambda: host.running == 3, "the first items never started")
    assert host.started == [0, 1, 2]
    host.release.set()
    await batch
    assert host.started == list(range(10))
    assert host.most_at_once == 3


async def test_a_big_batch_costs_concurrency_tasks_not_one_per_item() -> None:
    host = _Host()
    before = len(asyncio.all_tasks())
    batch = asyncio.create_task(_run(4, 10_000, host))
    await until(lambda: host.running == 4, "the first items never started")
    # The batch's own task and its four workers: no task waits for a free slot.
    assert len(asyncio.all_tasks()) - before == 1 + 4
    host.release.set()
    await batch
    assert len(host.started) == 10_000


async def test_nothing_starts_after_a_cancel() -> None:
    host = _Host()
    batch = asyncio.create_task(_run(2, 6, host))
    await until(lambda: host.running == 2, "the first items never started")
    host.cancelled.set()
    host.release.set()
    await batch
    assert host.started == [0, 1]


async def test_fewer_items_than_slots_make_a_worker_each() -> None:
    host = _Host()
    host.release.set()
    await _run(64, 2, host)
    assert host.started == [0, 1]
