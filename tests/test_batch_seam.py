"""The executor seam: an item run "elsewhere" (an unrecorded runner whose events are handed to
``host.remote(job)``, as a Ray worker's would be) leaves the same run file and index row as an
item the local executor ran; a worker lost mid-item fails that item only."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from core.batch.executors import ExecutorOptions, ItemHost, LocalExecutor
from core.batch.inputs import BatchItem
from core.batch.jobs import ItemJob, OutputKeeper, item_runner, run_item
from core.batch.recording import WORKER_LOST, RemoteRecording
from core.batch.store import BatchSpec, BatchStore
from core.batch.supervisor import BatchRun
from core.config.settings import Settings, save_settings
from core.model.events import Event, RunFinished, RunStarted
from core.record.run_files import RunIndex, load_run
from core.safety.redaction import Redactor
from tests.llm_server import LLMServer, Reply, last_user_text


class InProcessRemote:
    """An executor that runs each item the way a remote worker does: the runner unrecorded,
    its events forwarded one by one into the supervisor's recording. The item named ``lose``
    has its "worker" die once its first model request reached ``server``: nothing more is
    forwarded, as nothing more would arrive from a dead worker."""

    name = "in-process-remote"

    def __init__(self, server: LLMServer | None = None, lose: str | None = None) -> None:
        self.server = server
        self.lose = lose

    async def run(self, jobs: Sequence[ItemJob], host: ItemHost) -> None:
        for job in jobs:
            recording = host.remote(job)
            alive = [True]

            def forward(
                event: Event, recording: RemoteRecording = recording, alive: list[bool] = alive
            ) -> None:
                if alive[0]:
                    recording.publish(event)

            keeper = OutputKeeper()
            runner = item_runner(
                job, settings=host.settings, listeners=[keeper, forward], record=False
            )
            worker = asyncio.create_task(run_item(runner, job, keeper))
            if job.item.args == [self.lose] and self.server is not None:
                await self.server.wait_requests_async(1)
                alive[0] = False
                worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
            host.item_ended(recording.close())


def comparable(events: list[Event]) -> list[dict[str, Any]]:
    """A run's events without what differs between two runs of the same item: ids, times,
    and how the answer's text was split into deltas (one delta per network read, and reads
    split an answer as the network has it)."""
    rows: list[dict[str, Any]] = []
    for event in events:
        data = event.model_dump()
        for key in ("run_id", "ts", "started_at", "batch_id"):
            data.pop(key, None)
        data.pop("message_id", None)
        last = rows[-1] if rows else None
        if (
            last is not None
            and data["type"] in ("text_delta", "thinking_delta")
            and {**last, "text": ""} == {**data, "text": ""}
        ):
            last["text"] += data["text"]
            continue
        rows.append(data)
    return rows


def echo(body: dict[str, Any]) -> Reply:
    return Reply.answer(f"answer to {last_user_text(body)[-12:]}")


async def run_batch(settings: Settings, folder: Path, executor: Any) -> Any:
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(folder))
    record = store.create(spec, [BatchItem(args=["alpha"]), BatchItem(args=["beta"])], "x")
    await BatchRun(record, executor, settings=settings, store=store).run()
    return store.get(record.id)


async def test_a_remote_item_is_recorded_like_a_local_one(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    save_settings(llm_server.settings())
    llm_server.responder = echo
    settings = llm_server.settings()
    local = await run_batch(settings, tmp_path, LocalExecutor(ExecutorOptions(concurrency=1)))
    remote = await run_batch(settings, tmp_path, InProcessRemote())
    assert local.counts() == remote.counts() == {"ok": 2}
    for mine, theirs in zip(local.items, remote.items, strict=True):
        here = RunIndex().get(mine.run_id)
        there = RunIndex().get(theirs.run_id)
        assert here is not None and there is not None
        assert there.batch_id == remote.id and there.status == "ok"
        assert there.usage == here.usage
        assert comparable(load_run(Path(there.path))) == comparable(load_run(Path(here.path)))
        # The batch store keeps the same outcome (usage and cost, output, structured result).
        assert mine.outcome is not None and theirs.outcome is not None
        assert theirs.outcome.duration_s is not None and theirs.outcome.duration_s > 0
        untimed = {"duration_s": None}
        assert theirs.outcome.model_copy(update=untimed) == mine.outcome.model_copy(update=untimed)


async def test_a_lost_worker_fails_its_item_and_completes_its_run_file(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    save_settings(llm_server.settings())
    llm_server.responder = lambda body: (
        Reply.hang() if "alpha" in last_user_text(body) else echo(body)
    )
    executor = InProcessRemote(llm_server, lose="alpha")
    record = await run_batch(llm_server.settings(), tmp_path, executor)
    assert [item.status for item in record.items] == ["error", "ok"]
    run = RunIndex().get(record.items[0].run_id)
    assert run is not None and run.status == "error" and run.error == WORKER_LOST
    events = load_run(Path(run.path))
    assert isinstance(events[0], RunStarted) and events[0].batch_id == record.id
    assert isinstance(events[-1], RunFinished) and events[-1].error == WORKER_LOST


async def test_a_batch_gathers_its_secrets_once_and_every_item_is_redacted(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The secrets every item could leak are the batch's settings' and the environment's:
    gathered once for the batch (they were, per item, a few file reads each), and every
    item's run file — local or remote — still has them redacted."""
    token = "tok-batch-0123456789abcdef"
    monkeypatch.setenv("DEPLOY_SERVICE_TOKEN", token)
    save_settings(llm_server.settings())
    llm_server.responder = lambda body: Reply.answer(f"the token is {token}")
    gathered: list[Settings] = []
    real = Redactor.for_settings.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Redactor], settings: Settings, *args: Any) -> Redactor:
        gathered.append(settings)
        return real(cls, settings, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(Redactor, "for_settings", classmethod(counting))
    settings = llm_server.settings()
    # Locally, the batch's only; remotely, the batch's for the run files, and each worker's
    # own (a worker redacts what it sends, with what it can see).
    for executor, expected in (
        (LocalExecutor(ExecutorOptions(concurrency=2)), 1),
        (InProcessRemote(), 1 + 2),
    ):
        gathered.clear()
        batch = await run_batch(settings, tmp_path, executor)
        assert batch.counts() == {"ok": 2}
        assert len(gathered) == expected
        for item in batch.items:
            record = RunIndex().get(item.run_id)
            assert record is not None
            text = await asyncio.to_thread(Path(record.path).read_text, "utf-8")
            assert token not in text and "[redacted]" in text


async def test_items_run_without_checkpoints_and_the_batchs_settings_keep_theirs(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """Items share their folder at the same time, so none takes per-step checkpoints (no
    snapshot could say which item changed what); the settings the batch was given are not
    changed, and an item run anywhere — here or on a worker — runs without them."""
    settings = llm_server.settings()
    assert settings.checkpoints.enabled
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=["alpha"])], "x")
    batch = BatchRun(record, LocalExecutor(ExecutorOptions()), settings=settings, store=store)
    seen: list[bool] = []
    batch.listeners.append(
        lambda index, event: seen.append(batch._active[index].settings.checkpoints.enabled)
    )
    llm_server.responder = echo
    await batch.run()
    assert seen and not any(seen) and settings.checkpoints.enabled
    (job,) = batch.jobs
    elsewhere = item_runner(job, settings=settings, record=False)  # as a worker makes it
    assert not elsewhere.settings.checkpoints.enabled and settings.checkpoints.enabled
