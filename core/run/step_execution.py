"""Driving one backend through one step: reading its events, stopping it on cancel or time.

The runner (:mod:`core.run.runner`) starts :func:`consume` as a task and waits on it through
:func:`supervise`. Between them a backend's contract (:mod:`core.backends.base`) holds: its
events are passed on as they come, its ``step_finished`` is kept for the runner to complete,
its stream or process is released as soon as the step is over, and a backend that fails — or
has a bug — ends its step as an error instead of taking the run down.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Literal

from core.backends.base import Backend, BackendError, StepContext
from core.model.budget import BudgetReached
from core.model.events import Event, Log, StepFinished, Usage

StopReason = Literal["cancelled", "timeout"]


async def consume(
    backend: Backend,
    ctx: StepContext,
    emit: Callable[[Event], None],
    check_budget: Callable[[StepContext], Awaitable[None]],
    outcome: list[StepFinished],
) -> None:
    """Pass the backend's events to ``emit`` until its ``step_finished``, which goes into
    ``outcome`` instead (so a cancelled consumer still leaves what it got). A CLI backend
    asks its model itself, so its usage is checked against the budget here, as it comes."""
    try:
        events = backend.run(ctx)
        try:
            async for event in events:
                if isinstance(event, StepFinished):
                    ctx.inbox.close()  # at once: a message now would reach no one
                    outcome.append(event)
                    return
                emit(event)
                if isinstance(event, Usage) and backend.name != "openai":
                    await check_budget(ctx)  # the CLI asks its model itself
        finally:
            # A backend left suspended after its StepFinished (or abandoned on cancel)
            # releases its stream or process now, not whenever it is garbage-collected.
            await events.aclose()
    except (BackendError, BudgetReached) as error:
        outcome.append(ctx.make(StepFinished, status="error", error=str(error)))
    except Exception as error:  # a bug in a backend must not take the run down
        emit(ctx.make(Log, level="error", message=traceback.format_exc()))
        outcome.append(
            ctx.make(
                StepFinished,
                status="error",
                error=f"internal error in the {backend.name} backend: {error!r}",
            )
        )


async def supervise(
    task: asyncio.Task[None],
    ctx: StepContext,
    cancel: asyncio.Event,
    *,
    timeout_s: float | None,
    grace_s: float,
) -> StopReason | None:
    """Wait for the step's task; on ``cancel`` or after ``timeout_s`` stop it in two stages
    (see :mod:`core.backends.base`): ``ctx.cancelled`` first, then after ``grace_s`` the task
    itself. Returns why it was stopped, or None when it ended by itself. Cancelling the
    caller cancels the task too."""
    cancel_wait = asyncio.create_task(cancel.wait())
    try:
        await asyncio.wait(
            {task, cancel_wait}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
    except asyncio.CancelledError:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
        raise
    finally:
        cancel_wait.cancel()
    if task.done():
        return None
    reason: StopReason = "cancelled" if cancel.is_set() else "timeout"
    ctx.cancelled.set()
    if grace_s > 0:
        await asyncio.wait({task}, timeout=grace_s)
    if not task.done():
        task.cancel()
    with suppress(asyncio.CancelledError):
        await task
    return reason
