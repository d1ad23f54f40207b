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


class CancelSignal(asyncio.Event):
    """A run's cancel: an :class:`asyncio.Event` that also calls back whoever subscribed
    (:meth:`on_set`) when set. A step's :func:`supervise` learns of a cancel this way instead
    of through a task of its own waiting on the event: that task, and cancelling it again
    after every step, cost about as much as the rest of the supervision (~60 µs a step, a
    thirtieth of a batch item's CPU, measured side by side)."""

    def __init__(self) -> None:
        super().__init__()
        self._subscribers: list[Callable[[], None]] = []

    def set(self) -> None:
        if self.is_set():
            return
        super().set()
        for subscriber in tuple(self._subscribers):
            subscriber()

    def on_set(self, subscriber: Callable[[], None]) -> Callable[[], None]:
        """Call ``subscriber`` when the signal is set; returns what unsubscribes it."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)


async def supervise(
    task: asyncio.Task[None],
    ctx: StepContext,
    cancel: CancelSignal,
    *,
    timeout_s: float | None,
    grace_s: float,
) -> StopReason | None:
    """Wait for the step's task; on ``cancel`` or after ``timeout_s`` stop it in two stages
    (see :mod:`core.backends.base`): ``ctx.cancelled`` first, then after ``grace_s`` the task
    itself. Returns why it was stopped, or None when it ended by itself. Cancelling the
    caller cancels the task too.

    The task is awaited directly and the stages are callbacks: the caller resumes in the
    loop turn after the task ends. (Waking the caller through a future of its own cost a turn
    more at each step's end, and in a 64-wide batch every turn is spent waiting behind the
    other items' work: 3 turns from a step's answer to the next step's request, now 2.)"""
    loop = asyncio.get_running_loop()
    stopped: list[StopReason] = []
    timers: list[asyncio.TimerHandle] = []

    def stop(reason: StopReason) -> None:
        if stopped or task.done():
            return
        stopped.append(reason)
        ctx.cancelled.set()
        if grace_s > 0:
            timers.append(loop.call_later(grace_s, task.cancel))
        else:
            task.cancel()

    unsubscribe = cancel.on_set(lambda: stop("cancelled"))
    if timeout_s is not None:
        timers.append(loop.call_later(timeout_s, stop, "timeout"))
    if cancel.is_set():
        stop("cancelled")
    caller = asyncio.current_task()
    assert caller is not None
    asked_before = caller.cancelling()  # a cancel asked before (and handled) is not this one's
    try:
        await task  # cancelling the caller cancels the task it waits on
    except asyncio.CancelledError:
        if caller.cancelling() > asked_before:
            raise  # the caller was cancelled, and the step with it
        # Stopped here, or the step cancelled itself: it ended without its outcome.
    finally:
        unsubscribe()
        for timer in timers:
            timer.cancel()
    if caller.cancelling() > asked_before:  # the step swallowed the caller's cancel
        raise asyncio.CancelledError
    return stopped[0] if stopped else None
