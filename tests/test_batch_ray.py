"""The Ray executor on a real local Ray with 2 workers (started once for the module): a batch
leaves the same run files and events as the local executor, and a worker killed mid-item fails
that item only.

Ray is the optional extra ``baton[ray]``: without it these tests skip — except where
``BATON_REQUIRE_EXTRAS=1`` says the extras were installed (``.ci/run``'s second pass, which
runs the tests marked ``ray``), where a missing Ray is a failure."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.graph_runs import by_agent
from tests.llm_server import LLMServer, Reply, last_user_text
from tests.test_batch_relay import SHELL_PRESET
from tests.test_batch_seam import comparable, echo
from tests.test_graph_terminal import GATED

try:
    import ray
except ImportError:
    if os.environ.get("BATON_REQUIRE_EXTRAS") == "1":
        raise
    pytest.skip("Ray is not installed (pip install 'baton[ray]')", allow_module_level=True)

from core.batch.executors import ExecutorOptions
from core.batch.inputs import BatchItem
from core.batch.ray_executor import RayExecutor
from core.batch.store import BatchSpec, BatchStore
from core.batch.supervisor import BatchRun
from core.cli import main
from core.config.settings import save_settings
from core.model.events import (
    ApprovalResolved,
    Event,
    GateDecided,
    RunFinished,
    RunStarted,
    StepFinished,
    event_from_json,
)
from core.record.run_files import RunIndex, load_run, run_file
from core.safety.approvals import ApprovalAnswer, ApprovalRequest

pytestmark = pytest.mark.ray

WORKERS = 2
GRACE_S = 10.0
"""How long a batch's Ray workers and threads get to end after a test (conftest's check)."""


@pytest.fixture(scope="module", autouse=True)
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A local Ray with 2 CPUs for the module. Its processes inherit this environment, so it
    gets a home of its own and no keyring: workers never touch the real ones."""
    home = tmp_path_factory.mktemp("ray-home")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        # Set, so ray.init does not turn token authentication on by setting it in this
        # process's environment, where every later Ray of the session would inherit it.
        env.setenv("RAY_AUTH_MODE", "disabled")
        ray.init(
            num_cpus=WORKERS,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    yield
    ray.shutdown()


def worker_hosts() -> list[psutil.Process]:
    """The processes of the Ray executor's workers (actors are titled ``ray::WorkerHost``)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if "WorkerHost" in " ".join(process.cmdline()):
                found.append(process)
        except psutil.Error:
            continue
    return found


def echo_noting_workers(seen: set[int]) -> Callable[[dict[str, Any]], Reply]:
    """A scripted-server responder that echoes, first adding to ``seen`` the Ray workers alive
    (so a test knows its items were answered while workers ran them)."""

    def answer(body: dict[str, Any]) -> Reply:
        seen.update(process.pid for process in worker_hosts())
        return echo(body)

    return answer


@pytest.fixture(autouse=True)
def no_leftover_threads_or_processes() -> Iterator[None]:
    """conftest's check, for a module sharing one Ray: Ray starts and reaps its idle worker
    processes as it likes, so what must not outlive a test is a Baton worker (an WorkerHost
    actor's process) or a thread."""
    threads_before = set(threading.enumerate())
    yield
    _, alive = psutil.wait_procs(worker_hosts(), timeout=GRACE_S)
    new_threads = [t for t in threading.enumerate() if t not in threads_before]
    for thread in new_threads:
        thread.join(timeout=GRACE_S)
    assert not alive, f"Ray workers still running after the test: {alive}"
    assert not [t.name for t in new_threads if t.is_alive()]


def write_inputs(folder: Path, count: int) -> Path:
    inputs = folder / "inputs.jsonl"
    rows = [json.dumps({"args": [f"item {n:02d}"]}) for n in range(count)]
    inputs.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return inputs


def run_batch_command(
    capsys: pytest.CaptureFixture[str], inputs: Path, folder: Path, *options: str
) -> tuple[str, dict[int, list[Event]]]:
    """``baton batch scout-and-plan --json`` → the batch id and each item's printed events,
    by row."""
    command = ["batch", "scout-and-plan", "--inputs", str(inputs), "--cwd", str(folder)]
    code = main([*command, "--json", "--concurrency", str(WORKERS), *options])
    out = capsys.readouterr().out
    assert code == 0, out
    printed: dict[int, list[Event]] = {}
    batch_ids = set()
    for line in out.splitlines():
        row = json.loads(line)
        item = row.pop("item")
        # The batch's id leads every line; run_started carries it as a field of its own too.
        batch_ids.add(row["batch_id"] if row["type"] == "run_started" else row.pop("batch_id"))
        printed.setdefault(item, []).append(event_from_json(json.dumps(row)))
    (batch_id,) = batch_ids
    return batch_id, printed


def test_a_batch_on_ray_leaves_the_same_runs_as_the_local_executor(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    workers_seen: set[int] = set()
    llm_server.responder = echo_noting_workers(workers_seen)
    inputs = write_inputs(tmp_path, 10)
    local_batch, local = run_batch_command(capsys, inputs, tmp_path)
    assert workers_seen == set()  # the local executor runs items in this process
    ray_batch, on_ray = run_batch_command(capsys, inputs, tmp_path, "--executor", "ray")
    assert len(workers_seen) == WORKERS

    assert sorted(local) == sorted(on_ray) == list(range(10))
    for item in range(10):
        here, there = (RunIndex().get(printed[item][0].run_id) for printed in (local, on_ray))
        assert here is not None and there is not None
        assert (here.status, here.batch_id) == ("ok", local_batch)
        assert (there.status, there.batch_id) == ("ok", ray_batch)
        assert there.usage == here.usage
        their_file = load_run(Path(there.path))
        assert comparable(their_file) == comparable(load_run(Path(here.path)))
        assert on_ray[item] == their_file  # what --json printed is what was recorded
        start = their_file[0]
        assert isinstance(start, RunStarted) and start.args == [f"item {item:02d}"]


async def test_a_worker_killed_mid_item_fails_that_item_not_the_batch(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    save_settings(llm_server.settings())
    release = threading.Event()
    llm_server.responder = lambda body: Reply.answer(
        f"answer to {last_user_text(body)[-12:]}", hold=release
    )
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=[f"item {n}"]) for n in range(6)], "x")
    executor = RayExecutor(ExecutorOptions(concurrency=WORKERS))
    batch = asyncio.create_task(BatchRun(record, executor, settings=llm_server.settings()).run())

    await llm_server.wait_until_async(lambda: llm_server.in_flight == WORKERS, timeout=120)
    hosts = worker_hosts()
    assert len(hosts) == WORKERS
    victim = hosts[0]
    victim.kill()
    victim.wait(timeout=120)
    release.set()
    await batch

    final = store.get(record.id)
    assert final is not None
    assert final.counts() == {"ok": 5, "error": 1}
    failed = next(item for item in final.items if item.status == "error")
    run = RunIndex().get(failed.run_id or "")
    assert run is not None and run.status == "error" and run.error is not None
    assert run.error.startswith("the worker running this item died: ")
    assert f"Ray worker process {victim.pid} on " in run.error
    events = load_run(Path(run.path))
    step, end = events[-2:]
    assert isinstance(step, StepFinished) and (step.status, step.error) == ("error", run.error)
    assert isinstance(end, RunFinished) and (end.status, end.error) == ("error", run.error)


async def test_cancelling_a_batch_on_ray_aborts_the_items_on_their_workers(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    save_settings(llm_server.settings())
    llm_server.responder = lambda body: Reply.hang()
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=[f"item {n}"]) for n in range(4)], "x")
    executor = RayExecutor(ExecutorOptions(concurrency=WORKERS))
    batch = BatchRun(record, executor, settings=llm_server.settings())
    running = asyncio.create_task(batch.run())

    await llm_server.wait_until_async(lambda: llm_server.in_flight == WORKERS, timeout=120)
    batch.cancel()  # what Ctrl+C does
    await running

    final = store.get(record.id)
    assert final is not None and final.counts() == {"aborted": 2, "pending": 2}
    for item in final.items:
        if item.status == "aborted":
            run = RunIndex().get(item.run_id or "")
            assert run is not None and run.status == "aborted"
            step, end = load_run(Path(run.path))[-2:]
            assert isinstance(step, StepFinished) and step.status == "aborted"
            assert isinstance(end, RunFinished) and end.status == "aborted"
    assert llm_server.in_flight == 0  # the workers closed their requests


async def test_an_approval_asked_on_a_worker_is_answered_by_the_supervisor(
    llm_server: LLMServer, tmp_path: Path, user_presets: Path
) -> None:
    (user_presets / "shell.yaml").write_text(SHELL_PRESET, encoding="utf-8")
    save_settings(llm_server.settings())
    llm_server.queue(Reply.tool("bash", {"command": "echo approved-here"}), Reply.answer("done"))
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="approve")

    store = BatchStore()
    record = store.create(
        BatchSpec(preset="shell", cwd=str(tmp_path)), [BatchItem(args=["x"])], "x"
    )
    executor = RayExecutor(ExecutorOptions(concurrency=1))
    await BatchRun(record, executor, settings=llm_server.settings(), responder=person).run()

    assert [(r.tool, r.arguments["command"]) for r in asked] == [("bash", "echo approved-here")]
    final = store.get(record.id)
    assert final is not None and final.counts() == {"ok": 1}
    events = load_run(run_file(final.items[0].run_id or ""))
    decided = [(e.decision, e.decided_by) for e in events if isinstance(e, ApprovalResolved)]
    assert decided == [("approve", "person")]
    assert "approved-here" in llm_server.requests[1].tool_messages[0]["content"]


async def test_gate_answers_travel_to_the_workers(
    llm_server: LLMServer, tmp_path: Path, user_presets: Path
) -> None:
    """``--gate`` on Ray: each answer reaches the worker running the item, and without one an
    item at a gate fails with the reason instead of waiting (a worker has nobody to ask)."""
    (user_presets / "gated.yaml").write_text(GATED, encoding="utf-8")
    save_settings(llm_server.settings())
    llm_server.responder = by_agent({"worker": lambda task: f"did {task}"})
    spec = BatchSpec(preset="gated", cwd=str(tmp_path), scope="user")
    store = BatchStore()
    ends: dict[str | None, list[tuple[str, str | None]]] = {}
    for gates in ("continue", "stop", None):
        record = store.create(spec, [BatchItem(args=["one"]), BatchItem(args=["two"])], "x")
        executor = RayExecutor(ExecutorOptions(concurrency=WORKERS))
        batch = BatchRun(record, executor, settings=llm_server.settings(), gates=gates)
        outcomes = await batch.run()
        ends[gates] = [(o.status, o.error) for o in outcomes]
        for outcome in outcomes:
            decided = [e for e in load_run(run_file(outcome.run_id)) if isinstance(e, GateDecided)]
            assert [(e.decision, e.by) for e in decided] == ([(gates, "default")] if gates else [])
    assert ends["continue"] == [("ok", None)] * 2
    assert ends["stop"] == [("aborted", "stopped at the gate before 'ship' (default)")] * 2
    for status, error in ends[None]:
        assert status == "error" and error is not None
        assert error.startswith("the gate before 'ship' needs a person: a batch item has no one")


async def test_a_workers_items_reuse_its_one_provider_connection(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """One connection pool per worker process: every step of every item one worker runs goes
    on the connection its first step opened (not a client, and a connection, per step)."""
    save_settings(llm_server.settings())
    llm_server.responder = echo
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = store.create(spec, [BatchItem(args=[f"item {n}"]) for n in range(3)], "x")
    executor = RayExecutor(ExecutorOptions(concurrency=1))  # one worker
    outcomes = await BatchRun(record, executor, settings=llm_server.settings()).run()
    assert [o.status for o in outcomes] == ["ok"] * 3
    assert len(llm_server.requests) == 6  # two steps an item
    assert len({request.client_port for request in llm_server.requests}) == 1
