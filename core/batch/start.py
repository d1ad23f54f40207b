"""Starting a batch, the one way: ``baton batch`` and the window's New batch… both call this.

Two steps, so a caller can show what it recorded before anything runs: :func:`record_batch`
reads the inputs (secrets scrubbed on the way in, as everything shown or stored of them is)
and records the batch with every item pending; :func:`batch_run` builds the executor the
placement names and a :class:`~core.batch.supervisor.BatchRun` over the record, ready to
``await run()`` on the caller's loop — which checks its items first, off the loop; the terminal
checks them at once (``prepare()``), to say what refused before it starts. Either raises
:class:`~core.model.errors.RunError` (or :class:`~core.config.settings.SettingsError`) with a
sentence a person can act on.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from core.batch.checkout import Checkout
from core.batch.executor_registry import create_executor
from core.batch.executors import ExecutorOptions
from core.batch.inputs import read_inputs, redacted
from core.batch.store import BatchPlacement, BatchRecord, BatchSpec, BatchStore
from core.batch.supervisor import BatchListener, BatchRun
from core.config.settings import Settings
from core.model.budget import BudgetAsker, stop_at_cap
from core.model.errors import RunError
from core.run.gates import GateChoice
from core.safety.approvals import Responder, deny_all
from core.safety.redaction import Redactor


def record_batch(
    store: BatchStore,
    spec: BatchSpec,
    inputs: Path,
    placement: BatchPlacement,
    *,
    header: bool = False,
) -> BatchRecord:
    """Read ``inputs`` (JSONL or CSV; ``header``: the CSV's first row names columns) and
    record a new batch of ``spec`` over them, every item pending."""
    scrub = Redactor.configured().scrub
    items = redacted(read_inputs(inputs, header=header), scrub)
    return store.create(spec, items, scrub(inputs.name), placement)


def executor_options(placement: BatchPlacement, connect_timeout_s: float) -> ExecutorOptions:
    """What the placement's executor is built with (a ``--repo`` checkout needs Ray)."""
    checkout = None
    if placement.repo:
        if placement.executor != "ray":
            raise RunError("--repo works with --executor ray (a local batch runs in --cwd)")
        checkout = Checkout(placement.repo, placement.ref)
    return ExecutorOptions(
        concurrency=placement.concurrency,
        address=placement.address,
        checkout=checkout,
        connect_timeout_s=connect_timeout_s,
    )


def batch_run(
    record: BatchRecord,
    placement: BatchPlacement,
    settings: Settings,
    *,
    responder: Responder = deny_all,
    listeners: Iterable[BatchListener] = (),
    budget_asker: BudgetAsker = stop_at_cap,
    store: BatchStore | None = None,
    gates: GateChoice | None = None,
    connect_timeout_s: float = ExecutorOptions.connect_timeout_s,
) -> BatchRun:
    """The batch's run on the executor ``placement`` names, its items not checked yet: its
    ``run()`` checks them first, on a worker thread (a window's loop goes on meanwhile)."""
    executor = create_executor(placement.executor, executor_options(placement, connect_timeout_s))
    return BatchRun(
        record,
        executor,
        settings=settings,
        responder=responder,
        listeners=listeners,
        budget_asker=budget_asker,
        store=store,
        gates=gates,
    )
