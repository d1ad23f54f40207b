"""A batch while it runs: the jobs, the executor, the record, cancel — the supervising side.

:class:`BatchRun` is the :class:`~core.batch.executors.ItemHost` its executor works for. It
turns the batch record's items into jobs (a new run id each; a resume takes only the items
that did not finish ok), checks every item before anything runs (a row missing an argument is
refused up front, naming the row, rather than failing the 37th run), keeps the record up to
date as items start and end, and hands every item's events, tagged with the item's row, to
the batch's listeners (the command line's printer, the window's batch view).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from core.batch.executors import BatchExecutor
from core.batch.jobs import (
    Definitions,
    ItemJob,
    ItemOutcome,
    OutputKeeper,
    PreparedItem,
    item_runner,
    item_settings,
    run_item,
)
from core.batch.recording import RemoteRecording
from core.batch.store import BatchRecord, BatchStore
from core.config.looks import one_look
from core.config.provider_http import shared_provider_clients
from core.config.settings import Settings
from core.model.budget import BudgetAsker, stop_at_cap
from core.model.collection import batch_collection
from core.model.errors import RunError
from core.model.events import Event
from core.record.publisher import EventListener
from core.run.gates import GateChoice
from core.run.runner import Runner, new_run_id
from core.safety.approvals import Responder, deny_all
from core.safety.redaction import Redactor

BatchListener = Callable[[int, Event], None]
"""Told each event of each item with the item's 0-based row, on the batch's event loop."""

_log = logging.getLogger(__name__)


class BatchRun:
    """Runs a recorded batch's unfinished items once (a new :class:`BatchRun` resumes)."""

    def __init__(
        self,
        record: BatchRecord,
        executor: BatchExecutor,
        *,
        settings: Settings,
        responder: Responder = deny_all,
        listeners: Iterable[BatchListener] = (),
        budget_asker: BudgetAsker = stop_at_cap,
        store: BatchStore | None = None,
        gates: GateChoice | None = None,
    ) -> None:
        self.record = record
        self.executor = executor
        self.settings = settings
        self.responder = responder
        self.listeners = list(listeners)
        self.cancelled = asyncio.Event()
        self.gates = gates
        self.outcomes: dict[int, ItemOutcome] = {}
        self.jobs = [
            ItemJob(
                batch_id=record.id,
                index=item.index,
                run_id=new_run_id(),
                spec=record.spec,
                item=item.item,
            )
            for item in record.unfinished()
        ]
        self._budget_asker = budget_asker
        self._store = store or BatchStore()
        self._definitions: Definitions | None = None
        self._active: dict[int, Runner] = {}
        self._redactor: Redactor | None = None
        self._prepared: dict[int, PreparedItem] = {}
        """Each item as :meth:`prepare` checked it, taken by the item when it runs here:
        checking its steps again per item (trust store, folders, parameters) was a fifth of
        an item's cost, expanding its preset again a twentieth."""
        self._item_settings = item_settings(settings)
        """What every item runs with, made once (a copy of the settings per item before)."""

    # ---------------------------------------------------------------------------- public API

    def prepare(self) -> None:
        """Check every item before any runs; raises :class:`RunError` naming the first row
        that cannot run. Idempotent; :meth:`run` calls it."""
        if self._definitions is not None:
            return
        prepared: dict[int, PreparedItem] = {}
        with one_look():  # every item checked against the project as it is now, looked at once
            definitions = Definitions.load(self.record.spec)  # the files the check hashes
            for job in self.jobs:
                runner = item_runner(
                    job, settings=self._item_settings, definitions=definitions, record=False
                )
                prepared[job.index] = PreparedItem(runner.request, runner.prepared_steps)
        self._prepared = prepared
        # Every item runs with these settings: their secrets are gathered once, not per item
        # (the environment, the keyring, the known projects' MCP files).
        self._redactor = Redactor.for_settings(self.settings)
        self._definitions = definitions

    @property
    def definitions(self) -> Definitions:
        """The preset and catalogs every item runs with, checked by :meth:`prepare`."""
        self.prepare()
        assert self._definitions is not None
        return self._definitions

    async def check(self) -> None:
        """:meth:`prepare` on a worker thread, when not done yet: a batch's check takes about
        a millisecond an item (its agents, folders and trust, the project looked at once),
        seconds for thousands of items, which the caller's loop — a window's — must not wait
        through. Raises as :meth:`prepare` does."""
        if self._definitions is None:
            await asyncio.to_thread(self.prepare)

    async def run(self) -> list[ItemOutcome]:
        """Check the items (:meth:`check`), then run them; returns the outcomes of those
        that ran, in row order."""
        await self.check()
        with batch_collection():
            async with shared_provider_clients():  # items' steps reuse connections
                await self.executor.run(self.jobs, self)
        return [self.outcomes[index] for index in sorted(self.outcomes)]

    def cancel(self) -> None:
        """Start no more items and cancel the running ones; each ends ``aborted`` with its
        run file complete. Safe to call more than once."""
        self.cancelled.set()
        for runner in self._active.values():
            runner.cancel()

    # ---------------------------------------------------------------------------- ItemHost

    async def run_here(self, job: ItemJob) -> ItemOutcome:
        keeper = OutputKeeper()
        try:
            runner = item_runner(
                job,
                settings=self._item_settings,
                definitions=self._definitions,
                responder=self.responder,
                listeners=[keeper, self._tagged(job.index)],
                budget_asker=self._budget_asker,
                gates=self.gates,
                prepared=self._prepared.pop(job.index, None),
                redactor=self._redactor,
            )
        except RunError as error:  # checked in prepare(); a definition changed since
            return self.item_ended(_failed(job, str(error)))
        self._active[job.index] = runner
        self._store.started(job.batch_id, job.index, job.run_id)
        if self.cancelled.is_set():
            runner.cancel()
        try:
            outcome = await run_item(runner, job, keeper)
        except asyncio.CancelledError:
            self._store.finished(job.batch_id, job.index, job.run_id, "aborted")
            raise
        except Exception as bug:  # the run file is complete; the batch goes on
            _log.exception("item %d of batch %s failed inside Baton", job.index, job.batch_id)
            outcome = _failed(job, f"internal error: {bug!r}")
        finally:
            del self._active[job.index]
        return self.item_ended(outcome)

    def remote(self, job: ItemJob) -> RemoteRecording:
        self._store.started(job.batch_id, job.index, job.run_id)
        return RemoteRecording(job, self.settings, [self._tagged(job.index)], self._redactor)

    def item_ended(self, outcome: ItemOutcome) -> ItemOutcome:
        """Record how an item ended (a remote executor calls it with what ``close`` gave)."""
        self.outcomes[outcome.index] = outcome
        # Committed with the loop turn's other index writes; a failure (a locked index) is
        # logged and costs no other item.
        self._store.finished(
            self.record.id, outcome.index, outcome.run_id, outcome.status, outcome.stored()
        )
        return outcome

    # ---------------------------------------------------------------------------- internals

    def _tagged(self, index: int) -> EventListener:
        listeners = self.listeners

        def tagged(event: Event) -> None:
            for listener in listeners:
                listener(index, event)

        return tagged


def _failed(job: ItemJob, error: str) -> ItemOutcome:
    return ItemOutcome(index=job.index, run_id=job.run_id, status="error", error=error)
