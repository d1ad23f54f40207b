"""The remote item's two halves without Ray: the worker's WorkerHost running the core runner and
the supervisor's relay recording it, joined by an in-process channel (what the Ray executor's
actor calls carry). Approvals travel to the supervisor and back; a lost worker and a cancel
leave complete run files. The Ray transport itself: tests/test_batch_ray.py."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any

import pytest

from core.batch.checkout import Checkout
from core.batch.inputs import BatchItem
from core.batch.jobs import Definitions, ItemJob, ItemOutcome
from core.batch.recording import RemoteRecording
from core.batch.relay import WorkerLost, relay
from core.batch.store import BatchSpec
from core.batch.worker_host import Outgoing, WorkerHost
from core.cli import main
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    RunFinished,
    RunStarted,
    StepFinished,
    ToolCallFinished,
)
from core.record.run_files import RunIndex, load_run, run_file
from core.run.runner import new_run_id
from core.safety.approvals import ApprovalAnswer, ApprovalRequest, deny_all
from tests.llm_server import LLMServer, Reply
from tests.test_provider_clients import open_connections

SHELL_PRESET = """\
name: shell
description: one worker step
mode: single
steps:
  - agent: worker
    task: "Do: $@"
"""


class InProcessChannel:
    """The actor calls of the Ray executor, made directly; :meth:`lose` makes the next
    ``collect`` fail as a dead actor's does."""

    def __init__(self, host: WorkerHost, run_id: str) -> None:
        self.host = host
        self.run_id = run_id
        self.lost = asyncio.Event()
        self.cancels = 0
        self._sent: set[asyncio.Task[None]] = set()

    def lose(self) -> None:
        self.lost.set()

    async def collect(self) -> list[Outgoing]:
        collecting = asyncio.ensure_future(self.host.collect(self.run_id))
        lost = asyncio.ensure_future(self.lost.wait())
        await asyncio.wait({collecting, lost}, return_when=asyncio.FIRST_COMPLETED)
        lost.cancel()
        if self.lost.is_set():
            collecting.cancel()
            raise WorkerLost("worker process 4242 on test-host: the actor died")
        return collecting.result()

    def answer(self, request_id: str, answer: str) -> None:
        self._send(self.host.answer(self.run_id, request_id, answer))

    def cancel(self) -> None:
        self.cancels += 1
        self._send(self.host.cancel(self.run_id))

    def _send(self, call: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(call)
        self._sent.add(task)
        task.add_done_callback(self._sent.discard)


@pytest.fixture
def shell_job(user_presets: Path, tmp_path: Path) -> ItemJob:
    (user_presets / "shell.yaml").write_text(SHELL_PRESET, encoding="utf-8")
    spec = BatchSpec(preset="shell", cwd=str(tmp_path))
    return ItemJob(
        batch_id="batch-test", index=0, run_id=new_run_id(), spec=spec, item=BatchItem(args=["x"])
    )


HOSTS: list[WorkerHost] = []
"""The worker-side hosts a test made: closed after it, as a worker's end closes them."""


@pytest.fixture(autouse=True)
async def hosts_closed() -> AsyncIterator[None]:
    yield
    while HOSTS:
        await HOSTS.pop().close()


def worker_host() -> WorkerHost:
    """A fresh worker-side host, closed after the test (its provider connections with it)."""
    HOSTS.append(WorkerHost())
    return HOSTS[-1]


async def start(
    server: LLMServer, job: ItemJob, checkout: Checkout | None = None
) -> InProcessChannel:
    """The item started on a fresh worker-side host; the channel to it."""
    host = worker_host()
    await host.start(job, server.settings(), Definitions.load(job.spec), checkout)
    return InProcessChannel(host, job.run_id)


async def finish_on_worker(host: WorkerHost, run_id: str) -> None:
    """What a dead worker's process would have done: stop (cancel, then drain to the end)."""
    await host.cancel(run_id)
    while (await host.collect(run_id))[-1].kind != "end":
        pass


async def test_an_approval_asked_on_the_worker_is_answered_by_the_supervisor(
    llm_server: LLMServer, shell_job: ItemJob
) -> None:
    llm_server.queue(Reply.tool("bash", {"command": "echo from-the-worker"}), Reply.answer("done"))
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="approve")

    channel = await start(llm_server, shell_job)
    outcomes: list[ItemOutcome] = []
    recording = RemoteRecording(shell_job, llm_server.settings())
    await relay(channel, recording, person, outcomes.append)

    assert [(r.tool, r.arguments["command"]) for r in asked] == [("bash", "echo from-the-worker")]
    assert [(o.status, o.output) for o in outcomes] == [("ok", "done")]
    events = load_run(run_file(shell_job.run_id))
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [(e.decision, e.decided_by) for e in resolved] == [("approve", "person")]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.status for e in finished] == ["ok"] and "from-the-worker" in finished[0].result
    assert "from-the-worker" in llm_server.requests[1].tool_messages[0]["content"]
    record = RunIndex().get(shell_job.run_id)
    assert record is not None and record.status == "ok" and record.batch_id == "batch-test"


async def test_a_worker_lost_while_asking_ends_the_run_file_with_the_reason(
    llm_server: LLMServer, shell_job: ItemJob
) -> None:
    llm_server.queue(Reply.tool("bash", {"command": "echo never"}), Reply.answer("unused"))
    asking = asyncio.Event()
    channel = await start(llm_server, shell_job)

    async def never_answered(request: ApprovalRequest) -> ApprovalAnswer:
        asking.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    outcomes: list[ItemOutcome] = []
    recording = RemoteRecording(shell_job, llm_server.settings())
    relaying = asyncio.create_task(relay(channel, recording, never_answered, outcomes.append))
    await asking.wait()
    channel.lose()
    await relaying
    await finish_on_worker(channel.host, shell_job.run_id)

    reason = "the worker running this item died: worker process 4242 on test-host: the actor died"
    assert [(o.status, o.error) for o in outcomes] == [("error", reason)]
    events = load_run(run_file(shell_job.run_id))
    asked, resolved, call, step, run = events[-5:]
    assert isinstance(asked, ApprovalRequested)
    assert isinstance(resolved, ApprovalResolved) and resolved.request_id == asked.request_id
    assert (resolved.decision, resolved.decided_by, resolved.reason) == ("deny", "cancel", reason)
    assert isinstance(call, ToolCallFinished) and call.call_id == asked.call_id
    assert call.status == "aborted"
    assert isinstance(step, StepFinished) and (step.status, step.error) == ("error", reason)
    assert isinstance(run, RunFinished) and (run.status, run.error) == ("error", reason)
    record = RunIndex().get(shell_job.run_id)
    assert record is not None and (record.status, record.error) == ("error", reason)


async def test_cancelling_the_relay_cancels_the_item_on_the_worker(
    llm_server: LLMServer, shell_job: ItemJob
) -> None:
    llm_server.queue(Reply.hang())
    channel = await start(llm_server, shell_job)
    outcomes: list[ItemOutcome] = []
    recording = RemoteRecording(shell_job, llm_server.settings())
    relaying = asyncio.create_task(relay(channel, recording, approve, outcomes.append))
    await llm_server.wait_requests_async(1)
    relaying.cancel()
    with pytest.raises(asyncio.CancelledError):
        await relaying

    assert channel.cancels == 1
    assert [o.status for o in outcomes] == ["aborted"]
    events = load_run(run_file(shell_job.run_id))
    assert isinstance(events[-1], RunFinished) and events[-1].status == "aborted"
    assert await channel.host.running() == 0  # the worker ran its item to the end and let go of it


async def approve(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(decision="approve")


def git_repository(folder: Path) -> Path:
    """A repository with one commit on branch ``trunk``: NOTES.md."""
    folder.mkdir()
    (folder / "NOTES.md").write_text("only in the repository\n", encoding="utf-8")
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
    for command in (
        ["init", "--quiet"],
        ["checkout", "--quiet", "-b", "trunk"],
        ["add", "NOTES.md"],
        [*identity, "commit", "--quiet", "-m", "notes"],
    ):
        subprocess.run(["git", *command], cwd=folder, check=True)
    return folder


async def test_an_item_runs_in_its_own_copy_of_the_repository_removed_after(
    llm_server: LLMServer, shell_job: ItemJob, tmp_path: Path
) -> None:
    repository = git_repository(tmp_path / "origin")
    llm_server.queue(Reply.tool("read", {"path": "NOTES.md"}), Reply.answer("read it"))
    channel = await start(llm_server, shell_job, Checkout(repository.as_uri(), "trunk"))
    outcomes: list[ItemOutcome] = []
    recording = RemoteRecording(shell_job, llm_server.settings())
    await relay(channel, recording, approve, outcomes.append)

    assert [o.status for o in outcomes] == ["ok"]
    events = load_run(run_file(shell_job.run_id))
    start_event = events[0]
    assert isinstance(start_event, RunStarted)
    copy = Path(start_event.cwd)
    assert copy != Path(shell_job.spec.cwd) and copy.name.startswith("baton-item-")
    read = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.status for e in read] == ["ok"] and "only in the repository" in read[0].result
    assert not await asyncio.to_thread(copy.exists)


async def test_a_repository_that_cannot_be_copied_fails_the_item_saying_why(
    llm_server: LLMServer, shell_job: ItemJob, tmp_path: Path
) -> None:
    repository = git_repository(tmp_path / "origin")
    channel = await start(llm_server, shell_job, Checkout(repository.as_uri(), "no-such-ref"))
    outcomes: list[ItemOutcome] = []
    recording = RemoteRecording(shell_job, llm_server.settings())
    await relay(channel, recording, approve, outcomes.append)

    (outcome,) = outcomes
    assert outcome.status == "error" and outcome.error is not None
    assert outcome.error.startswith(f"cannot copy {repository.as_uri()} at no-such-ref: git fetch")
    assert "no-such-ref" in outcome.error.split("git fetch:", 1)[1]
    end = load_run(run_file(shell_job.run_id))[-1]
    assert isinstance(end, RunFinished) and end.error == outcome.error
    assert llm_server.requests == []


def test_repo_is_refused_without_the_ray_executor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"args": ["x"]}\n', encoding="utf-8")
    code = main(["batch", "scout-and-plan", "--inputs", str(inputs), "--repo", "https://x/y"])
    assert code == 2
    assert "--repo works with --executor ray" in capsys.readouterr().err


async def test_a_workers_items_share_its_provider_connection_closed_with_the_worker(
    llm_server: LLMServer, shell_job: ItemJob
) -> None:
    """One connection pool per worker process: the second item's request goes on the
    connection the first item's step left open, and the worker's end closes it."""
    llm_server.queue(Reply.answer("first"), Reply.answer("second"))
    host = worker_host()
    definitions = Definitions.load(shell_job.spec)
    outcomes: list[ItemOutcome] = []
    for job in (shell_job, shell_job.model_copy(update={"index": 1, "run_id": new_run_id()})):
        await host.start(job, llm_server.settings(), definitions)
        recording = RemoteRecording(job, llm_server.settings())
        await relay(InProcessChannel(host, job.run_id), recording, deny_all, outcomes.append)
    assert [(o.status, o.output) for o in outcomes] == [("ok", "first"), ("ok", "second")]
    first, second = llm_server.requests
    assert second.client_port == first.client_port  # the same connection, kept open
    assert await host.provider_clients() == 1
    assert open_connections(llm_server.port) == [first.client_port]
    await host.close()
    assert open_connections(llm_server.port) == []


async def test_a_remote_run_file_that_cannot_be_written_stops_the_item_as_a_local_one(
    llm_server: LLMServer, shell_job: ItemJob
) -> None:
    """Recorded by the class a local run records itself with: a full disk stops the item on
    its worker and ends it ``error`` with the reason, in the index and the outcome too."""
    llm_server.responder = lambda body: Reply.hang()
    run_file(shell_job.run_id).symlink_to("/dev/full")  # every flush fails
    channel = await start(llm_server, shell_job)
    outcomes: list[ItemOutcome] = []
    recording = RemoteRecording(shell_job, llm_server.settings())
    await relay(channel, recording, deny_all, outcomes.append)

    [outcome] = outcomes
    assert outcome.status == "error" and outcome.error is not None
    assert "could not be written" in outcome.error and "No space left" in outcome.error
    assert channel.cancels == 1  # the worker was told to stop
    record = RunIndex().get(shell_job.run_id)
    assert record is not None and (record.status, record.error) == ("error", outcome.error)
    await llm_server.wait_until_async(lambda: llm_server.in_flight == 0)
