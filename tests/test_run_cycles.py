"""A finished run leaves nothing for the cyclic garbage collector: its runner, recording,
publisher and gates are freed by reference counting (core.model.collection, "No cycles to
collect"). Each run used to leave ~100 objects in reference cycles, found later by a
collection that stalled the loop."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.batch.executors import ExecutorOptions, LocalExecutor
from core.batch.inputs import BatchItem
from core.batch.store import BatchSpec, BatchStore
from core.batch.supervisor import BatchRun
from core.config.settings import load_settings, save_settings
from core.model.budget import Budget, Caps
from core.model.collection import weakly
from core.model.events import ApprovalResolved
from core.record.run_files import RunIndex, load_run
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from tests.llm_server import LLMServer, Reply

RUN_PARTS = {
    "Runner",
    "RunRecording",
    "EventPublisher",
    "RunFileSink",
    "RunState",
    "ApprovalGate",
    "Gates",
    "StreamRedactor",
}


@pytest.fixture
def configured(llm_server: LLMServer) -> Iterator[LLMServer]:
    save_settings(llm_server.settings())
    yield llm_server


@pytest.fixture
def cyclic_garbage() -> Iterator[list[object]]:
    """What the cyclic collector finds of what the test made: collected once before (so
    only the test's own garbage counts), automatic collection off meanwhile, and every
    unreachable object kept for the test to look at."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    found: list[object] = []
    try:
        yield found
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def collect(found: list[object]) -> set[str]:
    """Run the collector; the names of Baton's run parts among what it found in cycles."""
    gc.collect()
    found.extend(gc.garbage)
    return {type(o).__name__ for o in found} & RUN_PARTS


async def test_a_run_with_a_budget_that_asked_for_approval_leaves_no_cycles(
    configured: LLMServer, tmp_path: Path, cyclic_garbage: list[object]
) -> None:
    configured.queue(Reply.tool("bash", {"command": "echo hi > out.txt"}), Reply.answer("ok"))

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(decision="approve")

    request = RunRequest(
        mode="single",
        steps=[StepSpec("worker", "go")],
        cwd=tmp_path,
        budget=Budget(run=Caps(max_tokens=1_000_000)),
    )
    runner = Runner(request, settings=load_settings(), responder=person)
    assert (await runner.run()).status == "ok"
    run_id = runner.run_id
    alive = weakref.ref(runner)
    del runner, person

    assert alive() is None  # freed at once, by reference counting
    assert collect(cyclic_garbage) == set()
    # the gate still published through the runner while the run lived
    record = RunIndex().get(run_id)
    assert record is not None
    assert [e.decision for e in load_run(Path(record.path)) if isinstance(e, ApprovalResolved)] == [
        "approve"
    ]
    assert (tmp_path / "out.txt").read_text() == "hi\n"


async def test_a_batchs_items_leave_no_cycles(
    configured: LLMServer, tmp_path: Path, cyclic_garbage: list[object]
) -> None:
    configured.responder = lambda body: Reply.answer("notes")
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    record = BatchStore().create(spec, [BatchItem(args=[f"item {n}"]) for n in range(6)], "x")
    executor = LocalExecutor(ExecutorOptions(concurrency=3))
    outcomes = await BatchRun(record, executor, settings=configured.settings()).run()
    assert [o.status for o in outcomes] == ["ok"] * 6

    assert collect(cyclic_garbage) == set()


def test_a_weak_callback_reaches_its_object_while_it_lives_and_nothing_after() -> None:
    class Owner:
        def __init__(self) -> None:
            self.heard: list[str] = []

        def hear(self, word: str) -> None:
            self.heard.append(word)

    owner = Owner()
    call = weakly(owner.hear)
    call("one")
    assert owner.heard == ["one"]
    del owner
    call("two")  # the owner is gone: nothing happens, nothing raises
