"""The worker's side of a remote batch item: the core runner as-is, its events and questions
queued for the supervisor to collect.

A worker (a Ray actor, :mod:`core.batch.ray_executor`) hosts one :class:`WorkerHost` and runs
several items on its own asyncio loop. For each item it builds the ordinary
:class:`~core.run.runner.Runner` (:func:`core.batch.jobs.item_runner`, as the local executor does)
recording nothing here (``record=False``): the run file, the index and every subscriber live
with the supervisor, which records what it collects through the ordinary publisher
(:mod:`core.batch.relay`), so a run file does not depend on where its steps ran (architecture:
"Batches and Ray").
With a :class:`~core.batch.checkout.Checkout`, the item runs in its own fresh copy of a git
ref instead of the job's folder.

What crosses back is plain text — events as their JSON lines, approval requests as JSON — in
:class:`Outgoing` messages, in the order they happened:

* ``event``: one event, already redacted by the worker's own publisher;
* ``ask``: an :class:`~core.safety.approvals.ApprovalRequest`; the step waits until the supervisor's
  responder (the terminal, the window, a ``--approve`` setting) answers through
  :meth:`WorkerHost.answer`;
* ``end``: the item is over. Its body is empty when the run sent its own ending, else it says
  why there is none (the run could not start here: a working folder missing on this worker).

The worker's items share one set of provider clients
(:class:`~core.config.provider_http.ProviderClients`) for as long as the worker lives: a step
reuses the connection an earlier item's step left open instead of making its own, and
:meth:`WorkerHost.close` closes them when the worker ends.

The host knows nothing of Ray, so it is tested in-process, and another transport could carry
the same messages.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from core.batch.checkout import Checkout, check_out, remove
from core.batch.jobs import Definitions, ItemJob, item_runner
from core.batch.provider_world import ProviderWorld
from core.config.provider_http import ProviderClients, shared_provider_clients
from core.config.settings import Settings
from core.model.errors import RunError
from core.model.events import Event, event_to_json
from core.run.gates import GateChoice
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalRequest

MAX_MESSAGES = 2000
"""Messages handed over by one :meth:`WorkerHost.collect` at most (bounds one reply's size)."""
GATHER_S = 0.02
"""After the first message of a reply, how long :meth:`WorkerHost.collect` lets more gather: a
streamed answer's deltas then cross in one remote call, not one each (a person cannot see
20 ms; the supervisor's CPU per event is what a remote call costs)."""


class Outgoing(NamedTuple):
    kind: Literal["event", "ask", "end"]
    body: str


@dataclass
class _Item:
    outbox: asyncio.Queue[Outgoing] = field(default_factory=asyncio.Queue)
    asks: dict[str, asyncio.Future[ApprovalAnswer]] = field(default_factory=dict)
    runner: Runner | None = None
    task: asyncio.Task[None] | None = None
    cancelled: bool = False

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """The runner's responder: the question goes out, the step waits for the answer."""
        answer: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
        self.asks[request.request_id] = answer
        self.outbox.put_nowait(Outgoing("ask", request.model_dump_json()))
        try:
            return await answer
        finally:
            self.asks.pop(request.request_id, None)

    def send(self, event: Event) -> None:
        self.outbox.put_nowait(Outgoing("event", event_to_json(event)))


class WorkerHost:
    """Runs items on this process's event loop; every method is a coroutine on that loop
    (Ray calls an async actor's methods there)."""

    def __init__(self) -> None:
        self._items: dict[str, _Item] = {}
        self._clients: ProviderClients | None = None
        """Made with the first item, on this process's loop (Ray makes the actor elsewhere)."""

    async def start(
        self,
        job: ItemJob,
        settings: Settings,
        definitions: Definitions,
        checkout: Checkout | None = None,
        environment: Mapping[str, str | None] | None = None,
        gates: GateChoice | None = None,
    ) -> None:
        """Begin running ``job`` with the supervisor's settings and checked definitions (in
        a fresh copy of ``checkout`` when given, instead of the job's folder); returns at once
        (collect its messages with :meth:`collect`). ``environment``: the submitter's provider
        variables (:mod:`core.batch.provider_world`), put in place of this process's own.
        ``gates``: the batch's ``--gate`` (:func:`core.batch.jobs.batch_gates`)."""
        if environment is not None:
            settings = ProviderWorld(settings, environment).apply()
        item = _Item()
        self._items[job.run_id] = item
        item.task = asyncio.create_task(
            self._run(item, job, settings, definitions, checkout, gates)
        )

    async def collect(self, run_id: str) -> list[Outgoing]:
        """The item's messages since the last call, waiting for at least one. After an
        ``end`` message the item is forgotten."""
        item = self._items.get(run_id)
        if item is None:
            return [Outgoing("end", f"this worker runs no item {run_id}")]
        messages = [await item.outbox.get()]
        if messages[0].kind == "event" and item.outbox.empty():
            await asyncio.sleep(GATHER_S)
        while len(messages) < MAX_MESSAGES and not item.outbox.empty():
            messages.append(item.outbox.get_nowait())
        if messages[-1].kind == "end":
            del self._items[run_id]
        return messages

    async def answer(self, run_id: str, request_id: str, answer: str) -> None:
        """The supervisor's answer to an ``ask`` (an :class:`ApprovalAnswer` as JSON)."""
        item = self._items.get(run_id)
        waiting = item.asks.get(request_id) if item is not None else None
        if waiting is not None and not waiting.done():
            waiting.set_result(ApprovalAnswer.model_validate_json(answer))

    async def cancel(self, run_id: str) -> None:
        """Cancel the item as Ctrl+C cancels a run: it ends ``aborted``, its file complete."""
        item = self._items.get(run_id)
        if item is not None:
            item.cancelled = True
            if item.runner is not None:
                item.runner.cancel()

    async def close(self) -> None:
        """The worker is ending: close its provider clients and their connections. Call
        once no item runs (a batch closes its workers after its items ended)."""
        if self._clients is not None:
            await self._clients.aclose()

    async def provider_clients(self) -> int:
        """How many provider clients this worker made (one per item running at once, at
        most, however many items it ran)."""
        return self._clients.made if self._clients is not None else 0

    async def whereabouts(self) -> tuple[int, str]:
        """This worker's process id and host (named when it dies; tests kill it by pid)."""
        return os.getpid(), socket.gethostname()

    async def running(self) -> int:
        """How many items this worker holds (started and not yet fully collected)."""
        return len(self._items)

    async def _run(
        self,
        item: _Item,
        job: ItemJob,
        settings: Settings,
        definitions: Definitions,
        checkout: Checkout | None,
        gates: GateChoice | None,
    ) -> None:
        if self._clients is None:
            self._clients = ProviderClients()
        async with shared_provider_clients(self._clients):
            ending = await self._run_here(item, job, settings, definitions, checkout, gates)
        item.outbox.put_nowait(Outgoing("end", ending))

    async def _run_here(
        self,
        item: _Item,
        job: ItemJob,
        settings: Settings,
        definitions: Definitions,
        checkout: Checkout | None,
        gates: GateChoice | None,
    ) -> str:
        """Run the item (in its own copy of ``checkout`` when given); why it has no ending of
        its own, or "" when it sent one."""
        folder: Path | None = None
        try:
            if checkout is not None:
                folder = await check_out(checkout)
                job = job.model_copy(
                    update={"spec": job.spec.model_copy(update={"cwd": str(folder)})}
                )
            item.runner = item_runner(
                job,
                settings=settings,
                definitions=definitions,
                responder=item.ask,
                listeners=[item.send],
                record=False,
                gates=gates,
            )
            if item.cancelled:
                item.runner.cancel()  # ends at once, aborted, with a complete run file
            ending = await self._ending(item.runner)
        except RunError as error:  # no copy of the repository, a folder missing here
            ending = str(error)
        finally:
            if folder is not None:
                remove(folder)
        return ending

    @staticmethod
    async def _ending(runner: Runner) -> str:
        """Run to the end; "" when the run sent its own ending, else why it did not."""
        try:
            await runner.run()
        except Exception as bug:
            return "" if runner.result is not None else f"internal error: {bug!r}"
        return ""
