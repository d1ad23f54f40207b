"""Executors: where a batch's items run. The seam between a batch and what runs its items.

An executor gets the batch's :class:`~core.batch.jobs.ItemJob` list and an :class:`ItemHost`
(the supervising Baton) and runs every job through the host, in whatever way it likes:

* :meth:`ItemHost.run_here` runs one item in this process, recorded as an ordinary run
  (the local executor does only this, at most ``concurrency`` at once);
* :meth:`ItemHost.remote` opens a :class:`~core.batch.recording.RemoteRecording` for an item
  run elsewhere: publish the worker's events into it as they arrive (they go to the run file,
  the index and the batch's listeners exactly as a local item's do), then ``close`` it — with
  the reason, when the worker died: it then ends the run file itself — and pass the outcome
  ``close`` returns to :meth:`ItemHost.item_ended`.
  A worker runs :func:`core.batch.jobs.item_runner` with ``record=False`` and a listener that
  forwards each event (and ``run_item``'s outcome) to the supervisor.

Rules for every executor: one item's failure is never the batch's (the host turns a crash into
that item's ``error``); when :attr:`ItemHost.cancelled` is set, start nothing more and let
every started item end (the host cancels local runners; a remote executor cancels its
workers), so every started item's run file ends with ``run_finished``; when the task running
:meth:`BatchExecutor.run` is cancelled, stop the same way before re-raising.

Executors are found by name in :data:`core.batch.executor_registry.EXECUTORS`
(``--executor NAME``); this module knows none but the local one, so an executor imports it for
the seam and the registry imports the executors, never the other way round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.batch.checkout import Checkout
from core.model.errors import RunError

if TYPE_CHECKING:
    from core.batch.jobs import Definitions, ItemJob, ItemOutcome
    from core.batch.recording import RemoteRecording
    from core.config.settings import Settings
    from core.run.gates import GateChoice
    from core.safety.approvals import Responder


class ExecutorUnavailable(RunError):
    """The executor asked for cannot run here; the message says what to install."""


class ExecutorLost(RunError):
    """Where the items run went away mid-batch (a Ray cluster's head node died): the batch
    ends; started items ended with the reason, the others stay pending for a resume."""


class ItemHost(Protocol):
    """The supervising side of a batch, as an executor sees it. Used on the event loop that
    runs the batch only."""

    settings: Settings
    responder: Responder
    """Answers approvals for every item (a remote executor relays workers' asks to it)."""
    cancelled: asyncio.Event
    """Set when the batch is cancelled (Ctrl+C, the window's Cancel)."""
    gates: GateChoice | None
    """How every item's gates are answered (``--gate``; None: an item at a gate fails), as
    data: a remote executor sends it to its workers (:func:`core.batch.jobs.batch_gates`)."""

    @property
    def definitions(self) -> Definitions:
        """The batch's preset and catalogs as checked before any item ran (a remote executor
        ships these rather than reading them again)."""
        ...

    async def run_here(self, job: ItemJob) -> ItemOutcome:
        """Run the item in this process as an ordinary recorded run; never raises for the
        item's own failure (only ``CancelledError``)."""
        ...

    def remote(self, job: ItemJob) -> RemoteRecording:
        """Start recording an item that runs elsewhere (see the module docstring)."""
        ...

    def item_ended(self, outcome: ItemOutcome) -> ItemOutcome:
        """Record a remote item's ending (``run_here`` does this itself)."""
        ...


class BatchExecutor(Protocol):
    name: str

    async def run(self, jobs: Sequence[ItemJob], host: ItemHost) -> None:
        """Run every job through ``host``; returns when each has ended or, once the batch
        is cancelled, when every started one has."""
        ...


@dataclass(frozen=True)
class ExecutorOptions:
    concurrency: int = 4
    """Items running at once (a remote executor may read it as its number of workers)."""
    address: str | None = None
    """Where the cluster is (``--ray-address``); None: start one on this machine."""
    connect_timeout_s: float = 30.0
    """How long to wait for ``address`` to answer (``--ray-timeout``) before saying so,
    instead of Ray's own minutes of silent retries."""
    checkout: Checkout | None = None
    """Run each item in its own copy of this repository (``--repo``/``--ref``), made on its
    worker, instead of the spec's folder (a remote executor's option)."""


class LocalExecutor:
    """Items as asyncio tasks in this process, at most ``concurrency`` at once."""

    name = "local"

    def __init__(self, options: ExecutorOptions) -> None:
        if options.concurrency < 1:
            raise RunError("--concurrency must be at least 1")
        self.concurrency = options.concurrency

    async def run(self, jobs: Sequence[ItemJob], host: ItemHost) -> None:
        await run_on_workers(jobs, self.concurrency, host.run_here, stop=host.cancelled.is_set)


async def run_on_workers(
    jobs: Sequence[ItemJob],
    concurrency: int,
    run_one: Callable[[ItemJob], Awaitable[object]],
    *,
    stop: Callable[[], bool],
    workers: set[asyncio.Task[None]] | None = None,
) -> None:
    """``run_one`` each job, in order, on ``concurrency`` workers; none is started once
    ``stop()``. ``workers``: kept filled with the running workers (to cancel them).

    Each worker takes the next job as soon as its last one ended, in the same loop turn. A
    task per job waiting on a semaphore woke a turn later, behind the other items' work, and
    a batch of 10,000 items made 10,000 tasks in one turn of the loop (41.5 ms held, the
    window's loop included; 0.4 ms now)."""
    waiting = iter(jobs)

    async def worker() -> None:
        for job in waiting:  # shared: each job is taken by one worker
            if stop():
                return
            await run_one(job)

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(jobs))):
            task = group.create_task(worker())
            if workers is not None:
                workers.add(task)
                task.add_done_callback(workers.discard)
