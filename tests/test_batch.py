"""``baton batch`` end to end: the real command, the local executor, the core runner and Baton's
own HTTP agent loop against the scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.batch.executors import ExecutorOptions, LocalExecutor
from core.batch.inputs import BatchItem
from core.batch.store import BatchSpec, BatchStore
from core.batch.supervisor import BatchRun
from core.cli import main
from core.config.settings import save_settings
from core.model.events import RunFinished, RunStarted, event_from_json
from core.record.run_files import RunIndex, load_run
from tests.cli_child import interrupt_baton_run
from tests.llm_server import LLMServer, Reply, last_user_text

REPO = Path(__file__).resolve().parents[1]
FAILING = {"item-07", "item-23", "item-41"}
MARK = re.compile(r"item-\d\d")
BATCH = ["batch", "scout-and-plan", "--inputs"]


class Script:
    """The scripted model for a batch of ``scout-and-plan``: each item's scout answers with
    its item's mark (so the planner's request names it too); items in ``failing`` get an
    HTTP 400 at their first step, which Baton does not retry."""

    def __init__(self, failing: set[str]) -> None:
        self.failing = set(failing)

    def __call__(self, body: dict[str, Any]) -> Reply:
        text = last_user_text(body)
        mark = MARK.search(text)
        assert mark is not None, text
        if mark.group() in self.failing:
            return Reply.error(400, f"{mark.group()} is refused")
        return Reply.answer(f"notes on {mark.group()}")


@pytest.fixture
def configured(llm_server: LLMServer) -> Iterator[LLMServer]:
    save_settings(llm_server.settings())
    yield llm_server


def write_inputs(folder: Path, count: int) -> Path:
    path = folder / "inputs.jsonl"
    rows = [json.dumps({"args": [f"item-{n:02d}"]}) for n in range(count)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def batch_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_fifty_items_three_failures_and_a_resume_that_runs_only_those(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Script(FAILING)
    configured.responder = script
    inputs = write_inputs(tmp_path, 50)
    code = main([*BATCH, str(inputs), "--concurrency", "8", "--json", "--cwd", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    lines = batch_lines(captured.out)
    batch_ids = {line.pop("batch_id") for line in lines}
    assert len(batch_ids) == 1
    (batch_id,) = batch_ids
    ends: dict[int, str] = {}
    for line in lines:
        item = line.pop("item")
        event = event_from_json(json.dumps(line))
        if isinstance(event, RunFinished):
            ends[item] = event.status
    assert len(ends) == 50
    failed = {f"item-{n:02d}" for n, status in ends.items() if status != "ok"}
    assert failed == FAILING
    assert len(configured.requests) == 47 * 2 + 3
    assert configured.max_concurrent <= 8

    record = BatchStore().get(batch_id)
    assert record is not None
    assert record.counts() == {"ok": 47, "error": 3}
    for item in record.items:  # every item is an ordinary, indexed run of the batch
        run = RunIndex().get(item.run_id or "")
        assert run is not None and run.batch_id == batch_id
        assert run.status == item.status
        events = load_run(Path(run.path))
        assert isinstance(events[0], RunStarted) and events[0].batch_item == item.index
        assert isinstance(events[-1], RunFinished)

    capsys.readouterr()
    assert main(["batch", "status", batch_id]) == 0
    status = capsys.readouterr().out
    assert "50 items: 47 done, 3 failed" in status
    assert re.search(r"^\s+8  failed .* item-07  \(.*item-07 is refused", status, re.MULTILINE)
    assert main(["batch", "list"]) == 0
    assert batch_id in capsys.readouterr().out

    script.failing.clear()
    before = len(configured.requests)
    assert main(["batch", "resume", batch_id]) == 0, capsys.readouterr().err
    again = configured.requests[before:]
    assert len(again) == 3 * 2
    assert {MARK.search(r.user_text).group() for r in again} == FAILING  # type: ignore[union-attr]
    resumed = BatchStore().get(batch_id)
    assert resumed is not None and resumed.counts() == {"ok": 50}

    assert main(["batch", "resume", batch_id]) == 0  # nothing left: no request at all
    assert len(configured.requests) == before + 6
    capsys.readouterr()
    assert main(["batch", "export", batch_id, "--format", "csv"]) == 0
    exported = capsys.readouterr().out.splitlines()
    assert exported[0].startswith("item,status,$1,params,run_id,tokens,cost")
    assert len(exported) == 51
    assert exported[8].startswith("8,ok,item-07,") and "notes on item-07" in exported[8]


def test_ctrl_c_mid_batch_cancels_every_item_and_completes_every_run_file(
    configured: LLMServer, tmp_path: Path
) -> None:
    """SIGINT to a real ``baton batch`` while items wait on the model: every started item's
    run file ends with run_finished (aborted), the rest stay pending for a resume."""
    configured.responder = lambda body: Reply.hang()
    inputs = write_inputs(tmp_path, 12)
    options = ["--concurrency", "4", "--json", "--cwd", str(tmp_path)]
    code, out, err = interrupt_baton_run(
        configured, [*BATCH, str(inputs), *options], after_requests=4
    )
    assert code == 130, err
    lines = batch_lines(out)
    (batch_id,) = {line["batch_id"] for line in lines}
    record = BatchStore().get(batch_id)
    assert record is not None
    assert record.counts() == {"aborted": 4, "pending": 8}
    for item in record.items:
        if item.status == "pending":
            continue
        run = RunIndex().get(item.run_id or "")
        assert run is not None and run.status == "aborted"
        events = load_run(Path(run.path))
        assert isinstance(events[-1], RunFinished) and events[-1].status == "aborted"


async def test_cancelling_the_batch_task_completes_every_started_run_file(
    configured: LLMServer, tmp_path: Path
) -> None:
    configured.responder = lambda body: Reply.hang()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(tmp_path))
    store = BatchStore()
    record = store.create(spec, [BatchItem(args=[f"item-{n:02d}"]) for n in range(6)], "x")
    batch = BatchRun(
        record,
        LocalExecutor(ExecutorOptions(concurrency=3)),
        settings=configured.settings(),
        store=store,
    )
    task = asyncio.create_task(batch.run())
    await configured.wait_requests_async(3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    after = store.get(record.id)
    assert after is not None and after.counts() == {"aborted": 3, "pending": 3}
    for item in after.items:
        if item.run_id:
            events = load_run(RunIndex().get(item.run_id).path)  # type: ignore[union-attr,arg-type]
            assert isinstance(events[-1], RunFinished) and events[-1].status == "aborted"


def test_a_row_missing_its_argument_is_refused_before_anything_runs(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = tmp_path / "rows.jsonl"
    inputs.write_text('{"args": ["one"]}\n{"params": {}}\n', encoding="utf-8")
    code = main(["batch", "scout-and-plan", "--inputs", str(inputs), "--cwd", str(tmp_path)])
    assert code == 2
    assert "item 2" in capsys.readouterr().err
    assert configured.requests == []
    assert BatchStore().list() == []


def test_the_ray_executor_without_ray_names_the_extra(
    configured: LLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    inputs = write_inputs(tmp_path, 2)
    code = main([*BATCH, str(inputs), "--executor", "ray", "--cwd", str(tmp_path)])
    assert code == 2
    assert "pip install 'baton[ray]'" in capsys.readouterr().err
    assert configured.requests == []


def test_without_json_each_finished_item_is_one_line_and_the_end_a_summary(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.responder = Script({"item-01"})
    inputs = write_inputs(tmp_path, 3)
    code = main([*BATCH, str(inputs), "--concurrency", "1", "--cwd", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1
    lines = out.splitlines()
    assert [line.split()[:4] for line in lines] == [
        ["[1/3]", "done", "item", "1"],
        ["[2/3]", "failed", "item", "2"],
        ["[3/3]", "done", "item", "3"],
    ]
    assert "item-01 is refused" in lines[1]
    run = RunIndex().get(lines[0].split()[4])  # the item's run id, then its input
    assert run is not None and run.batch_id is not None and run.args == ["item-00"]
    assert lines[0].endswith("item-00")
    assert re.search(r"2 done, 1 failed \(run the rest: baton batch resume batch-\S+\)", err)


@pytest.mark.parametrize("model", ["test-model", "gpt-4o-mini"], ids=["unpriced", "priced"])
def test_export_leaves_the_cost_of_an_unpriced_model_empty(
    llm_server: LLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    model: str,
) -> None:
    """A model with no price is not free: CSV gets an empty cell, JSONL ``null``; a priced
    model's cost is written as before."""
    save_settings(llm_server.settings(default_model=model))
    llm_server.responder = Script(set())
    inputs = write_inputs(tmp_path, 1)
    assert main([*BATCH, str(inputs), "--json", "--cwd", str(tmp_path)]) == 0
    (batch_id,) = {line["batch_id"] for line in batch_lines(capsys.readouterr().out)}

    assert main(["batch", "export", batch_id, "--format", "csv"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    columns = header.split(",")
    cells = dict(zip(columns, row.split(","), strict=False))
    assert cells["status"] == "ok" and int(cells["tokens"]) > 0
    priced = model == "gpt-4o-mini"
    assert (float(cells["cost"]) > 0) if priced else cells["cost"] == ""

    assert main(["batch", "export", batch_id]) == 0
    (exported,) = batch_lines(capsys.readouterr().out)
    if priced:
        assert exported["cost"] == pytest.approx(float(cells["cost"]), abs=1e-6)
    else:
        assert exported["cost"] is None
    assert "priced" not in exported


def test_status_and_export_show_each_items_outcome_from_the_batch_store_alone(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Record once: the store keeps each item's outcome (status, usage, duration, final
    output) as the item ends, so showing a batch reads neither run files nor index rows —
    with both gone, status and export still show every figure."""
    configured.responder = Script(set())
    inputs = write_inputs(tmp_path, 3)
    assert main([*BATCH, str(inputs), "--json", "--cwd", str(tmp_path)]) == 0
    (batch_id,) = {line["batch_id"] for line in batch_lines(capsys.readouterr().out)}
    index = RunIndex()
    for record in index.list():
        Path(record.path).unlink()
        index.delete(record.id)
    assert index.list() == []

    assert main(["batch", "export", batch_id]) == 0
    rows = batch_lines(capsys.readouterr().out)
    assert [row["status"] for row in rows] == ["ok", "ok", "ok"]
    assert [row["output"] for row in rows] == [f"notes on item-{n:02d}" for n in range(3)]
    assert all(row["tokens"] > 0 and row["duration_s"] > 0 for row in rows)
    assert all(row["structured"] is None for row in rows)  # scout-and-plan declares none
    assert main(["batch", "status", batch_id, "--json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert [item["status"] for item in items] == ["ok", "ok", "ok"]
    assert [item["output"] for item in items] == [row["output"] for row in rows]
