"""Resume and re-run from a step, against the scripted server, counting its requests: finished
steps are reused as saved (no request), and the next step gets their output byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.model.events import RunStarted, StepFinished, StepStarted
from core.record.run_files import RunIndex, load_run
from tests.llm_server import LLMServer, Reply

ANSWER_1 = (
    "## Files Retrieved\n- `a.py` — odd spacing  \n\ttabs, “quotes”, 登录 and a trailing space "
)
CHAIN = ["--chain", "scout=find it", "planner=plan from {previous}", "worker=do {previous}"]


@pytest.fixture
def configured(llm_server: LLMServer) -> LLMServer:
    save_settings(llm_server.settings())
    return llm_server


def _latest(
    capsys: pytest.CaptureFixture[str], after: RunStarted | None = None
) -> tuple[RunStarted, list[StepFinished]]:
    """The run just made (the one that is not ``after``: both may start in the same second)."""
    capsys.readouterr()
    records = [r for r in RunIndex().list() if after is None or r.id != after.run_id]
    (record,) = records
    events = load_run(Path(record.path))
    started = events[0]
    assert isinstance(started, RunStarted)
    return started, [e for e in events if isinstance(e, StepFinished)]


def test_resume_reuses_finished_steps_and_hands_on_their_output_unchanged(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(Reply.answer(ANSWER_1), Reply.error(400, "context too long"))
    assert main(["run", *CHAIN, "--cwd", str(tmp_path)]) == 1
    parent, _ = _latest(capsys)
    failed_request = configured.requests[1].user_text
    assert len(configured.requests) == 2

    configured.queue(Reply.answer("the plan"), Reply.answer("done"))
    assert main(["runs", "resume", parent.run_id]) == 0
    child, finished = _latest(capsys, after=parent)
    assert len(configured.requests) == 4  # none for step 1
    assert configured.requests[2].user_text == failed_request
    assert ANSWER_1 in configured.requests[2].user_text
    assert child.lineage is not None
    assert (child.lineage.run_id, child.lineage.step, child.lineage.kind) == (
        parent.run_id,
        1,
        "resume",
    )
    assert [f.reused_from for f in finished] == [parent.run_id, None, None]
    assert [f.status for f in finished] == ["ok", "ok", "ok"]
    record = RunIndex().get(child.run_id)
    assert record is not None
    first = next(e for e in load_run(Path(record.path)) if isinstance(e, StepStarted))
    assert first.reused_from == parent.run_id


def test_rerun_from_step_three_sends_nothing_for_steps_one_and_two(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(Reply.answer("found"), Reply.answer("planned"), Reply.answer("first try"))
    assert main(["run", *CHAIN, "--cwd", str(tmp_path)]) == 0
    parent, _ = _latest(capsys)

    configured.queue(Reply.answer("second try"))
    code = main(
        ["runs", "rerun", parent.run_id, "--from", "3", "--task", "Do it carefully: {previous}"]
    )
    assert code == 0
    child, finished = _latest(capsys, after=parent)
    assert len(configured.requests) == 4
    assert configured.requests[3].user_text == "Do it carefully: planned"
    assert [f.output for f in finished] == ["found", "planned", "second try"]
    assert child.lineage is not None and child.lineage.kind == "rerun"


def test_a_finished_run_has_nothing_to_resume(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(Reply.answer("ok"))
    assert main(["run", "--agent", "scout", "--task", "x", "--cwd", str(tmp_path)]) == 0
    parent, _ = _latest(capsys)
    assert main(["runs", "resume", parent.run_id]) == 2
    assert "nothing to resume" in capsys.readouterr().err


def test_continue_says_more_to_the_last_step_in_its_conversation(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(
        Reply.answer("found"), Reply.answer("planned"), Reply.answer("the plan is done")
    )
    assert main(["run", *CHAIN, "--cwd", str(tmp_path)]) == 0
    parent, _ = _latest(capsys)

    configured.queue(Reply.answer("three files"))
    assert main(["runs", "continue", parent.run_id, "How many files did you change?"]) == 0
    child, finished = _latest(capsys, after=parent)
    follow_up = configured.requests[3]
    said = [(m["role"], m.get("content")) for m in follow_up.messages if m["role"] != "system"]
    assert said[0] == ("user", "do planned")  # step 3's task, as it was sent
    assert ("assistant", "the plan is done") in said
    assert said[-1] == ("user", "How many files did you change?")
    assert child.lineage is not None
    assert (child.lineage.run_id, child.lineage.step, child.lineage.kind) == (
        parent.run_id,
        2,
        "continue",
    )
    assert [f.output for f in finished] == ["three files"]


def test_continue_names_a_step_that_cannot_be_continued(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(Reply.answer("ok"))
    assert main(["run", "--agent", "scout", "--task", "x", "--cwd", str(tmp_path)]) == 0
    parent, _ = _latest(capsys)

    assert main(["runs", "continue", parent.run_id, "more", "--step", "2"]) == 2
    assert "step 2 of run" in capsys.readouterr().err
    assert main(["runs", "continue", parent.run_id, "more", "--step", "0"]) == 2
    assert "--step counts from 1" in capsys.readouterr().err
    assert len(configured.requests) == 1  # nothing was sent
