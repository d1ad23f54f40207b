"""The supervisor's side of an item running on a worker: its messages in, its run recorded.

:func:`relay` collects what the worker's :class:`~core.batch.worker_host.WorkerHost` sends
for one item and gives it the life a local item has: every event goes into the batch's
:class:`~core.batch.recording.RemoteRecording` (the ordinary publisher: redaction, the run
file, the index, the batch's listeners), and every approval the worker asks is put to the
batch's responder — the terminal, the window's dialog or a ``--approve`` setting — and the
answer sent back while the step waits there.

A worker that dies mid-item (killed, out of memory, its node gone) surfaces as
:class:`WorkerLost`; the recording then ends the run itself with the reason, so that item
fails and the batch goes on. Cancelling the task running :func:`relay` (Ctrl+C on the
batch) cancels the item on the worker and waits a little for its ``aborted`` ending, so the
run file ends as a cancelled local run's does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from core.batch.jobs import ItemOutcome
from core.batch.recording import RemoteRecording
from core.batch.worker_host import Outgoing
from core.model.events import event_from_json
from core.safety.approvals import ApprovalAnswer, ApprovalRequest, Responder

CANCEL_GRACE_S = 30.0
"""How long a cancelled item's worker has to send its ``aborted`` ending (a step's own stop
takes up to 5 s before its process is killed)."""

_log = logging.getLogger(__name__)


class WorkerLost(Exception):
    """The worker running an item is gone; the message says what the transport knows."""


class ItemChannel(Protocol):
    """One item on one worker, as the supervisor reaches it (see :mod:`core.batch.worker_host`
    for the messages). ``answer`` and ``cancel`` only send: they never wait for the worker."""

    async def collect(self) -> list[Outgoing]:
        """The next messages, waiting for at least one; raises :class:`WorkerLost`."""
        ...

    def answer(self, request_id: str, answer: str) -> None: ...

    def cancel(self) -> None: ...


async def relay(
    channel: ItemChannel,
    recording: RemoteRecording,
    responder: Responder,
    ended: Callable[[ItemOutcome], object],
) -> None:
    """Record the item's run until it ends, then hand ``ended`` the outcome
    :meth:`RemoteRecording.close` gives — on cancel too, before re-raising."""
    asks: set[asyncio.Task[None]] = set()
    recording.stop = channel.cancel  # its run file cannot be written: no use running on
    pump = asyncio.create_task(_pump(channel, recording, responder, asks))
    try:
        ended(await asyncio.shield(pump))
    except asyncio.CancelledError:
        channel.cancel()
        await asyncio.wait({pump}, timeout=CANCEL_GRACE_S)
        if pump.done() and not pump.cancelled() and pump.exception() is None:
            ended(pump.result())
        else:
            pump.cancel()
            ended(recording.close("the batch was cancelled; its worker did not confirm it stopped"))
        raise
    finally:
        for task in list(asks):
            task.cancel()


async def _pump(
    channel: ItemChannel,
    recording: RemoteRecording,
    responder: Responder,
    asks: set[asyncio.Task[None]],
) -> ItemOutcome:
    while True:
        try:
            messages = await channel.collect()
        except WorkerLost as lost:
            return recording.close(f"the worker running this item died: {lost}")
        for message in messages:
            if message.kind == "event":
                recording.publish(event_from_json(message.body))
            elif message.kind == "ask":
                task = asyncio.create_task(_ask(channel, responder, message.body))
                asks.add(task)
                task.add_done_callback(asks.discard)
            else:
                return recording.close(
                    message.body or "the worker ended the run without its ending"
                )


async def _ask(channel: ItemChannel, responder: Responder, body: str) -> None:
    request = ApprovalRequest.model_validate_json(body)
    try:
        answer = await responder(request)
    except Exception as error:  # a broken responder must not leave the step waiting
        _log.exception("the approval responder failed")
        answer = ApprovalAnswer(
            decision="deny", reason=f"Denied: asking failed ({error!r})", decided_by="no_one"
        )
    channel.answer(request.request_id, answer.model_dump_json())
