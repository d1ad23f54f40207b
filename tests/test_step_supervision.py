"""A step's supervision (:func:`core.run.step_execution.supervise`): told of a cancel by the
run's :class:`CancelSignal` itself, with no task of its own waiting, and leaving nothing
subscribed behind, step after step."""

from __future__ import annotations

import asyncio
import contextlib
import math
from pathlib import Path

import pytest

from core.backends.base import StepContext
from core.definitions.agents import AgentDefinition
from core.run.step_execution import CancelSignal, supervise
from tests.step_contexts import step_context
from tests.waiting import until

NEVER = math.inf
"""A stage's time that never comes (``timeout_s``, ``grace_s``): the test is over first, however
slow the machine — its timer is still made, and must be gone afterwards."""


async def _never_ending() -> None:
    await asyncio.Event().wait()


async def _ending_at_once() -> None:
    return None


def _context(tmp_path: Path) -> StepContext:
    return step_context(AgentDefinition(name="scout", description="looks", body="Look."), tmp_path)


def test_a_signal_calls_each_subscriber_once_and_not_after_it_left() -> None:
    signal = CancelSignal()
    heard: list[str] = []
    leave = signal.on_set(lambda: heard.append("a"))
    signal.on_set(lambda: heard.append("b"))
    leave()
    signal.set()
    signal.set()
    assert heard == ["b"]
    assert signal.is_set()


async def test_a_cancel_stops_the_step_in_two_stages(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    signal = CancelSignal()
    stopped_politely = asyncio.Event()

    async def step() -> None:
        await ctx.cancelled.wait()  # a backend that ends at the first stage
        stopped_politely.set()

    task = asyncio.create_task(step())
    supervising = asyncio.create_task(supervise(task, ctx, signal, timeout_s=None, grace_s=NEVER))
    await until(lambda: len(signal._subscribers) == 1, "the step was never watched")
    signal.set()
    assert await supervising == "cancelled"
    assert stopped_politely.is_set()
    assert signal._subscribers == []


async def test_a_step_that_ends_by_itself_leaves_nothing_subscribed(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    signal = CancelSignal()
    for _ in range(3):  # a run's steps, one after another
        task = asyncio.create_task(_ending_at_once())
        assert await supervise(task, ctx, signal, timeout_s=NEVER, grace_s=NEVER) is None
    assert signal._subscribers == []
    assert not ctx.cancelled.is_set()


async def test_a_signal_set_before_the_step_is_watched_stops_it(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    signal = CancelSignal()
    signal.set()
    task = asyncio.create_task(_never_ending())  # a step that never ends by itself
    assert await supervise(task, ctx, signal, timeout_s=None, grace_s=0) == "cancelled"
    assert task.cancelled()


async def test_a_step_past_its_time_limit_is_stopped(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    task = asyncio.create_task(_never_ending())
    assert await supervise(task, ctx, CancelSignal(), timeout_s=0, grace_s=0) == "timeout"
    assert ctx.cancelled.is_set() and task.cancelled()


@pytest.mark.parametrize("swallows", [False, True], ids=["re-raises", "swallows"])
async def test_cancelling_the_caller_cancels_the_step_and_is_not_taken_for_a_stop(
    tmp_path: Path, swallows: bool
) -> None:
    """Also when the step ends quietly on its cancel instead of re-raising it (a backend's
    cleanup that returns): the caller's cancel still holds."""
    waiting = asyncio.Event()
    heard: list[str] = []

    async def step() -> None:
        try:
            waiting.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            heard.append("cancelled")
            if not swallows:
                raise

    task = asyncio.create_task(step())
    supervising = asyncio.create_task(
        supervise(task, _context(tmp_path), CancelSignal(), timeout_s=None, grace_s=NEVER)
    )
    await waiting.wait()
    supervising.cancel()
    with pytest.raises(asyncio.CancelledError):
        await supervising
    assert heard == ["cancelled"]
    assert task.cancelled() is not swallows


async def test_a_step_that_cancels_itself_ends_without_a_stop(tmp_path: Path) -> None:
    ctx = _context(tmp_path)

    async def gives_up() -> None:
        raise asyncio.CancelledError

    task = asyncio.create_task(gives_up())
    assert await supervise(task, ctx, CancelSignal(), timeout_s=None, grace_s=NEVER) is None
    assert not ctx.cancelled.is_set()


async def test_a_step_stopped_politely_within_its_grace_is_not_cancelled(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    signal = CancelSignal()
    signal.set()

    async def polite() -> None:
        await ctx.cancelled.wait()

    task = asyncio.create_task(polite())
    assert await supervise(task, ctx, signal, timeout_s=None, grace_s=NEVER) == "cancelled"
    assert task.done() and not task.cancelled()


async def test_a_cancel_the_caller_handled_before_is_not_taken_for_a_new_one(
    tmp_path: Path,
) -> None:
    caller = asyncio.current_task()
    assert caller is not None
    caller.cancel()  # asked, then handled without uncancel(): the count stays raised
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.get_running_loop().create_future()  # the cancel arrives at this await
    task = asyncio.create_task(_ending_at_once())
    assert (
        await supervise(task, _context(tmp_path), CancelSignal(), timeout_s=None, grace_s=NEVER)
        is None
    )
