"""One item of a batch: the job that describes it and the function that runs it anywhere.

:class:`ItemJob` is plain data (pydantic: JSON and pickle both work), so it can be shipped to
another process or machine. :func:`run_item` runs it with the ordinary :class:`Runner` — the
same code as ``baton run`` — and returns an :class:`ItemOutcome`; with ``record=True`` the run
writes its own run file and index row here, with ``record=False`` it only hands its events to
``listeners`` (a remote worker forwards them to the supervisor, which records them through
:class:`core.batch.recording.RemoteRecording`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.batch.inputs import BatchItem
from core.batch.store import BatchSpec, StoredOutcome
from core.config.settings import Settings
from core.definitions.agents import AgentCatalog
from core.definitions.presets import Preset, PresetCatalog
from core.model.budget import BudgetAsker, stop_at_cap
from core.model.errors import RunError
from core.model.events import Event, RunFinished, RunStatus, StepFinished, UsageStats
from core.record.publisher import EventListener
from core.run.gates import GateAsker, GateChoice, fixed_answers, nobody_to_ask
from core.run.run_preparation import PreparedStep
from core.run.run_request import RunRequest, find_preset, request_from_preset
from core.run.runner import Runner
from core.safety.approvals import Responder, deny_all
from core.safety.redaction import Redactor


class ItemJob(BaseModel):
    """Everything a worker needs to run one item (besides Baton, the settings and the
    working folder): which batch and row it is, the run id to use, what to run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    batch_id: str
    index: int
    run_id: str
    spec: BatchSpec
    item: BatchItem


class ItemOutcome(BaseModel):
    """How one item ended: its run's status, usage and final output (the last step's)."""

    model_config = ConfigDict(frozen=True)

    index: int
    run_id: str
    status: RunStatus
    error: str | None = None
    usage: UsageStats = UsageStats()
    output: str = ""
    duration_s: float = 0.0
    structured: dict[str, Any] | None = None
    """The last step's structured result, when its agent declares one."""

    @classmethod
    def ended(cls, job: ItemJob, finished: RunFinished, kept: OutputKeeper) -> ItemOutcome:
        """The item's outcome from its run's ending and the output ``kept`` — the one way
        both a local and a remote item's outcome is made, so the batch store cannot tell
        where an item ran."""
        return cls(
            index=job.index,
            run_id=job.run_id,
            status=finished.status,
            error=finished.error,
            usage=finished.usage,
            output=kept.output,
            duration_s=finished.ts,
            structured=kept.structured,
        )

    def stored(self) -> StoredOutcome:
        """What the batch store keeps of it."""
        return StoredOutcome(
            usage=self.usage,
            duration_s=self.duration_s,
            output=self.output,
            structured=self.structured,
            error=self.error,
        )


@dataclass(frozen=True)
class Definitions:
    """The preset and the catalogs, read once per batch instead of once per item."""

    preset: Preset
    agents: AgentCatalog
    presets: PresetCatalog

    @classmethod
    def load(cls, spec: BatchSpec) -> Definitions:
        """Raises :class:`RunError` for an unknown or broken preset."""
        return cls(*find_preset(spec.preset, Path(spec.cwd), spec.scope))


def item_request(job: ItemJob, definitions: Definitions) -> RunRequest:
    """The item's run request: the preset expanded with the row's arguments and
    parameters, tagged with the batch; raises :class:`RunError` for a row that cannot run."""
    spec = job.spec
    request = request_from_preset(
        definitions.preset,
        job.item.args,
        Path(spec.cwd),
        scope=spec.scope,
        model=spec.model,
        backend=spec.backend,
        trust_project=spec.trust_project,
    )
    return dataclasses.replace(
        request, params=dict(job.item.params), batch_id=job.batch_id, batch_item=job.index
    )


BATCH_GATES = nobody_to_ask(
    "a batch item has no one to ask at a gate; pass --gate continue, stop or default"
)
"""A graph's gates in a batch item (on a remote worker too): nothing waits for an answer."""


def batch_gates(choice: GateChoice | None) -> GateAsker:
    """How a batch item's gates are answered: every one as ``--gate`` says, else none (the
    item fails with the reason). A batch passes the choice, not an asker: plain data travels
    with the item to a remote worker, where the asker is made (a function does not travel,
    and a terminal prompt would be nobody's there)."""
    return fixed_answers(choice) if choice is not None else BATCH_GATES


@dataclass(frozen=True)
class PreparedItem:
    """An item as the batch's check left it: its run request and its checked steps, so the
    item's run neither expands the preset nor checks the steps again (together a twentieth
    of a local item's CPU, benchmarks/batch.py). The steps are the run's own: a run moves
    its steps' folders, so a prepared item runs once."""

    request: RunRequest
    steps: list[PreparedStep]


def item_settings(settings: Settings) -> Settings:
    """``settings`` as a batch item runs with them: without per-step checkpoints. Like a
    parallel run's tasks, the items of a batch share their working folder at the same time,
    so no snapshot could say which item changed what."""
    if not settings.checkpoints.enabled:
        return settings  # already so: a batch makes them once for all its items
    unchecked = settings.checkpoints.model_copy(update={"enabled": False})
    return settings.model_copy(update={"checkpoints": unchecked})


def item_runner(
    job: ItemJob,
    *,
    settings: Settings,
    definitions: Definitions | None = None,
    responder: Responder = deny_all,
    listeners: Iterable[EventListener] = (),
    record: bool = True,
    budget_asker: BudgetAsker = stop_at_cap,
    gates: GateChoice | None = None,
    prepared: PreparedItem | None = None,
    redactor: Redactor | None = None,
) -> Runner:
    """A prepared :class:`Runner` for the item (``definitions``: None reads them here, as
    a remote worker must; ``gates``: see :func:`batch_gates`; ``prepared``: the item as an
    unrecorded runner prepared it when the batch was checked, so it is not expanded and
    checked twice); raises :class:`RunError` when the item cannot run. The run takes
    :func:`item_settings` of ``settings``.

    ``redactor``: the batch's secrets, gathered once for all its items."""
    definitions = definitions or Definitions.load(job.spec)
    try:
        runner = Runner(
            prepared.request if prepared is not None else item_request(job, definitions),
            settings=item_settings(settings),
            responder=responder,
            listeners=listeners,
            record=record,
            agents=definitions.agents,
            presets=definitions.presets,
            run_id=job.run_id,
            budget_asker=budget_asker,
            gate_asker=batch_gates(gates),
            steps=prepared.steps if prepared is not None else None,
            redactor=redactor,
        )
        runner.prepare()
    except RunError as error:
        label = job.item.label()
        named = f"item {job.index + 1} ({label})" if label else f"item {job.index + 1}"
        raise RunError(f"{named}: {error}") from None
    return runner


class OutputKeeper:
    """A listener keeping the last step's final output (what a batch's table and export
    show for the item), so nothing has to read the run file back."""

    def __init__(self) -> None:
        self.output = ""
        self.structured: dict[str, Any] | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, StepFinished):
            self.output = event.output
            self.structured = event.structured


async def run_item(runner: Runner, job: ItemJob, keeper: OutputKeeper) -> ItemOutcome:
    """Run a prepared item (see :func:`item_runner`; ``keeper`` among its listeners) to the
    end. Never raises for the item's own failure: that is the outcome's status."""
    return ItemOutcome.ended(job, await runner.run(), keeper)
