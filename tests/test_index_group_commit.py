"""The run index's group commit: the rows written during one event-loop turn share one
transaction, a thread reads its own queued rows, one failing write costs no other, and a
process killed between a run's ending in its file and the index's commit loses nothing the
run file says (a real ``baton batch`` child, SIGKILL)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from core.batch.store import BatchStore
from core.config.settings import save_settings
from core.model.events import RunFinished, RunStarted, event_from_json
from core.record.index_db import index_transaction, write_soon
from core.record.liveness import LivenessLock
from core.record.run_files import INTERRUPTED_ERROR, RunIndex, load_run, runs_dir
from tests.llm_server import LLMServer, Reply
from tests.waiting import LIMIT_S

REPO = Path(__file__).resolve().parents[1]


def started(run_id: str) -> RunStarted:
    return RunStarted(
        run_id=run_id, ts=0.0, mode="chain", steps=[], cwd="/", started_at="2026-12-07T10:00:00"
    )


def committed() -> tuple[Callable[[Exception | None], None], asyncio.Future[Exception | None]]:
    """A ``done`` callback for a queued write, and the future it resolves with the write's
    outcome once its group is committed: what a test awaits instead of loop turns."""
    future: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()

    def done(error: Exception | None) -> None:
        if not future.done():  # not after a failed test gave up on it
            future.set_result(error)

    return done, future


async def outcome(written: asyncio.Future[Exception | None]) -> Exception | None:
    """The write's outcome; a commit that never comes fails the test instead of hanging it
    (the limit only bounds a failure)."""
    return await asyncio.wait_for(written, LIMIT_S)


def test_the_rows_of_one_loop_turn_are_one_transaction(tmp_path: Path) -> None:
    index = RunIndex(tmp_path / "runs.sqlite")
    statements: list[str] = []
    with index_transaction(index.path) as db:  # this thread's kept connection
        db.set_trace_callback(statements.append)
    elsewhere = sqlite3.connect(index.path)  # another process's view of the file
    seen: list[int] = []

    async def one_turn() -> None:
        done, last = committed()
        for n in range(64):
            index.started_soon(
                started(f"run-{n}"), tmp_path / f"run-{n}.jsonl", done if n == 63 else None
            )
        seen.append(elsewhere.execute("SELECT count(*) FROM runs").fetchone()[0])
        assert await outcome(last) is None  # the turn ended: its writes are committed
        seen.append(elsewhere.execute("SELECT count(*) FROM runs").fetchone()[0])

    asyncio.run(one_turn())
    assert seen == [0, 64]
    assert [s for s in statements if s.startswith("BEGIN")] == ["BEGIN "]
    assert len([s for s in statements if s.startswith("INSERT")]) == 64
    elsewhere.close()


def test_a_thread_reads_the_rows_it_queued(tmp_path: Path) -> None:
    index = RunIndex(tmp_path / "runs.sqlite")
    found: list[str | None] = []

    run_file = tmp_path / "run-a.jsonl"
    lock = LivenessLock(run_file)  # the run's owner is alive: this process

    async def write_then_read() -> None:
        index.started_soon(started("run-a"), run_file)
        record = index.get("run-a")  # same turn, before its commit
        found.append(record.status if record is not None else None)

    asyncio.run(write_then_read())
    lock.release()
    assert found == ["running"]


def test_a_loop_closed_before_its_turn_ended_holds_back_no_later_rows(tmp_path: Path) -> None:
    """An app quitting (or a test's loop) may close its loop with a commit still to run: the
    next loop on the thread commits at its turn's end, the rows left behind too."""
    index = RunIndex(tmp_path / "runs.sqlite")
    elsewhere = sqlite3.connect(index.path)
    first = asyncio.new_event_loop()

    async def queue_and_stop() -> None:
        index.started_soon(started("run-a"), tmp_path / "a.jsonl")
        first.stop()  # the turn's commit would run at the next turn, which never comes

    stopping = first.create_task(queue_and_stop())
    first.run_forever()
    assert stopping.done()
    first.close()
    assert elsewhere.execute("SELECT count(*) FROM runs").fetchone()[0] == 0

    async def next_loop() -> None:
        done, written = committed()
        index.started_soon(started("run-b"), tmp_path / "b.jsonl", done)
        assert await outcome(written) is None

    asyncio.run(next_loop())
    assert elsewhere.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
    elsewhere.close()


def test_one_failing_write_costs_no_other_and_is_told_why(tmp_path: Path) -> None:
    index = RunIndex(tmp_path / "runs.sqlite")
    outcomes: dict[str, Exception | None] = {}

    async def one_turn() -> None:
        done, last = committed()
        index.started_soon(started("run-a"), tmp_path / "a.jsonl", lambda e: outcomes.update(a=e))
        write_soon(
            index.path,
            lambda db: db.execute("INSERT INTO no_such_table VALUES (1)"),
            lambda e: outcomes.update(bad=e),
        )
        index.started_soon(started("run-b"), tmp_path / "b.jsonl", done)  # told last
        outcomes["b"] = await outcome(last)

    asyncio.run(one_turn())
    assert outcomes["a"] is None and outcomes["b"] is None
    assert isinstance(outcomes["bad"], sqlite3.OperationalError)
    assert "no_such_table" in str(outcomes["bad"])
    assert {record.id for record in index.list()} == {"run-a", "run-b"}


# The child runs the real ``baton batch`` and dies the moment the Nth run's ending, already in
# its run file (flushed and closed), would be queued for the index: a kill -9 before the
# loop turn's group commit, the widest window it opens.
KILLED_CHILD = r"""
import os, signal, sys
from core.cli import main
from core.record.run_files import RunIndex

kill_at = int(sys.argv[1])
endings = 0
queue_ending = RunIndex.finished_soon

def finished_soon(self, *args, **kwargs):
    global endings
    endings += 1
    if endings == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    return queue_ending(self, *args, **kwargs)

RunIndex.finished_soon = finished_soon
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.skipif(os.name != "posix", reason="kill -9 of a child needs POSIX")
def test_a_batch_killed_before_the_group_commit_reads_as_its_run_files_say(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    save_settings(llm_server.settings())
    slow = {"item-6", "item-7"}  # still waiting on the model when the child dies

    def respond(body: dict[str, object]) -> Reply:
        text = json.dumps(body)
        return Reply.hang() if any(mark in text for mark in slow) else Reply.answer("done")

    llm_server.responder = respond
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(
        "".join(json.dumps({"args": [f"item-{n}"]}) + "\n" for n in range(8)), encoding="utf-8"
    )
    command = ["batch", "scout-and-plan", "--inputs", str(inputs), "--json", "--cwd", str(tmp_path)]
    child = subprocess.run(
        [sys.executable, "-c", KILLED_CHILD, "4", *command, "--concurrency", "8"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr

    # What the child acknowledged: each item's run_finished line it printed.
    printed: dict[int, str] = {}
    batch_ids = set()
    for line in child.stdout.splitlines():
        if not line.endswith("}"):
            continue  # a line cut by the kill was never acknowledged
        row = json.loads(line)
        batch_ids.add(row.pop("batch_id"))
        item = row.pop("item")
        event = event_from_json(json.dumps(row))
        if isinstance(event, RunFinished):
            printed[item] = event.status
    assert len(printed) >= 4 and set(printed.values()) == {"ok"}
    (batch_id,) = batch_ids

    record = BatchStore().get(batch_id)  # reading repairs what the kill left "running"
    assert record is not None
    for item in record.items:
        if item.run_id is None:
            continue
        run = RunIndex().get(item.run_id)
        assert run is not None
        endings = [e for e in load_run(Path(run.path)) if isinstance(e, RunFinished)]
        assert len(endings) == 1  # nothing appended over an ending the file had
        if item.index in printed:
            assert item.status == run.status == endings[0].status == printed[item.index]
        else:
            assert item.status == run.status == endings[0].status == "interrupted"
            assert run.error == INTERRUPTED_ERROR
    interrupted = {item.index for item in record.items if item.status == "interrupted"}
    assert {6, 7} <= interrupted and not interrupted & printed.keys()
    assert not list(runs_dir().glob("*.lock"))  # the dead owner's locks are swept
