"""Typed params on the command line, the hand-off cap and step folders (,
5), end to end against the scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.config import paths
from core.config.settings import save_settings
from core.model.events import RunStarted, StepFinished, StepStarted
from core.record.run_files import RunIndex, load_run
from tests.llm_server import LLMServer, Reply

WRITER = """---
name: writer
description: writes notes
tools: read
params:
  tone: {type: enum, values: [formal, casual], default: casual}
  count: {type: integer, default: 2, min: 1, max: 5}
---
Write in a {tone} tone, {count} points.
"""


@pytest.fixture
def configured(llm_server: LLMServer) -> LLMServer:
    save_settings(llm_server.settings())
    folder = paths.config_dir() / "agents"
    folder.mkdir(parents=True)
    (folder / "writer.md").write_text(WRITER, encoding="utf-8")
    return llm_server


def system_text(request: object) -> str:
    messages = request.messages  # type: ignore[attr-defined]
    return str(next(m["content"] for m in messages if m["role"] == "system"))


def test_param_reaches_task_and_system_prompt_and_the_run_file(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(Reply.answer("done"))
    task = "notes in {tone}, {count} of them"
    args = ["--task", task, "--param", "tone=formal", "--cwd", str(tmp_path)]
    code = main(["run", "--agent", "writer", *args])
    assert code == 0
    (request,) = configured.requests
    assert request.user_text == "notes in formal, 2 of them"  # the default of count applied
    assert "Write in a formal tone, 2 points." in system_text(request)
    assert "{tone}" not in system_text(request)
    record = RunIndex().list()[0]
    started = load_run(Path(record.path))[0]
    assert isinstance(started, RunStarted)
    assert started.params == {"tone": "formal", "count": 2}
    assert "params: tone=formal, count=2" in capsys.readouterr().out  # the run header


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        ("tone=rude", "parameter tone: Input should be 'formal' or 'casual'"),
        ("count=9", "parameter count: Input should be less than or equal to 5"),
        ("count=many", "parameter count: Input should be a valid integer"),
        ("mood=x", "unknown parameter 'mood': the agents of this run declare tone, count"),
    ],
)
def test_bad_param_exits_2_before_any_request(
    configured: LLMServer, capsys: pytest.CaptureFixture[str], param: str, expected: str
) -> None:
    code = main(["run", "--agent", "writer", "--task", "t", "--param", param])
    assert code == 2
    assert expected in capsys.readouterr().err
    assert configured.requests == []


def test_step_param_sets_one_step_of_a_chain(
    configured: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(Reply.answer("a"), Reply.answer("b"))
    chain = ["--chain", "writer={tone}", "writer={tone} after {previous}"]
    assert main(["run", *chain, "--param", "2.tone=formal", "--json"]) == 0
    assert [r.user_text for r in configured.requests] == ["casual", "formal after a"]
    first = capsys.readouterr().out.splitlines()[0]
    assert '"1.tone":"casual"' in first.replace(" ", "")
    assert '"2.tone":"formal"' in first.replace(" ", "")

    assert main(["run", *chain, "--param", "7.tone=formal"]) == 2
    assert "no step '7' (use a step number 1-2" in capsys.readouterr().err


def test_a_long_answer_is_capped_when_handed_on_and_kept_whole(
    configured: LLMServer, tmp_path: Path
) -> None:
    answer = "".join(f"line {n:06d} " + "x" * 88 + "\n" for n in range(2_000))  # 200 KB
    configured.queue(Reply.answer(answer), Reply.answer("planned"))
    chain = ["--chain", "scout=look", "planner=PLAN:{previous}"]
    assert main(["run", *chain, "--cwd", str(tmp_path)]) == 0
    handed = configured.requests[1].user_text.removeprefix("PLAN:")
    assert len(handed) <= 50_000
    assert handed.startswith(answer[:1000])
    kept = handed[: handed.index("\n[…")]
    assert kept.endswith("\n") and answer.startswith(kept)  # cut at a line end
    left = len(answer) - len(kept)
    assert f"[… {left:,} more characters" in handed

    run_id = RunIndex().list()[0].id
    saved = paths.data_dir() / "handoff" / run_id / "step-1.md"
    assert saved.read_text(encoding="utf-8") == answer
    assert saved.stat().st_mode & 0o777 == 0o600
    assert f"{saved} (open it with the read tool)" in handed
    assert not (tmp_path / ".baton").exists()
    record = RunIndex().get(run_id)
    assert record is not None and f"run file {record.path} (step 1)" in handed
    outputs = [e.output for e in load_run(Path(record.path)) if isinstance(e, StepFinished)]
    assert outputs[0] == answer


def test_short_answers_are_handed_on_untouched(configured: LLMServer, tmp_path: Path) -> None:
    configured.queue(Reply.answer("short"), Reply.answer("ok"))
    assert main(["run", "--chain", "scout=a", "planner={previous}", "--cwd", str(tmp_path)]) == 0
    assert configured.requests[1].user_text == "short"
    assert not (tmp_path / ".baton").exists()


def test_a_step_folder_outside_the_run_folder_needs_the_flag(
    configured: LLMServer, tmp_path: Path, user_presets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_folder = tmp_path / "project"
    (tmp_path / "outside").mkdir()
    (run_folder / "inside").mkdir(parents=True)
    (user_presets / "spread.yaml").write_text(
        "name: spread\nmode: parallel\nsteps:\n  - {agent: scout, task: a, cwd: inside}\n"
        "  - {agent: scout, task: b, cwd: ../outside}\n",
        encoding="utf-8",
    )
    assert main(["run", "spread", "--cwd", str(run_folder)]) == 2
    err = capsys.readouterr().err
    assert f"step 2 (scout): folder {tmp_path / 'outside'} is outside the run's folder" in err
    assert "--allow-outside-folder" in err
    assert configured.requests == []

    configured.responder = lambda body: Reply.answer("ok")
    args = ["run", "spread", "--cwd", str(run_folder), "--allow-outside-folder", "--json"]
    assert main(args) == 0
    started = [e for e in map(_event, capsys.readouterr().out.splitlines()) if e]
    folders = sorted(e.cwd for e in started)
    assert folders == sorted([str(run_folder / "inside"), str(tmp_path / "outside")])


def _event(line: str) -> StepStarted | None:
    from core.model.events import event_from_json

    event = event_from_json(line)
    return event if isinstance(event, StepStarted) else None


def test_hand_off_refuses_to_write_through_a_planted_symlink(tmp_path: Path) -> None:
    """A link planted on the hand-off folder (agents cannot write in the data folder, so this
    is defence in depth): nothing is written through it, and the marker points at the run
    file only."""
    from core.config.handoff_files import handoff_dir
    from core.run.handoff import hand_off

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    handoff_dir("run-1").parent.mkdir(parents=True)
    handoff_dir("run-1").symlink_to(elsewhere)
    text = "y" * 5_000
    handed = hand_off(text, limit=1_000, run_id="run-1", step_number=1, run_file=Path("/r.jsonl"))
    assert list(elsewhere.iterdir()) == []
    assert len(handed) <= 1_000
    assert "read tool" not in handed and "run file /r.jsonl (step 1)" in handed
    assert handed.startswith("y" * 100)  # one long line is cut inside it


def test_params_reach_a_preset_by_agent_name(
    configured: LLMServer, tmp_path: Path, user_presets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (user_presets / "brief.yaml").write_text(
        "name: brief\nsteps:\n  - {agent: scout, task: 'look at $1'}\n"
        "  - {agent: writer, task: 'write {tone} about $1: {previous}'}\n",
        encoding="utf-8",
    )
    configured.queue(Reply.answer("seen"), Reply.answer("written"))
    args = ["run", "brief", "the API", "--param", "writer.tone=formal", "--cwd", str(tmp_path)]
    assert main(args) == 0
    assert [r.user_text for r in configured.requests] == [
        "look at the API",
        "write formal about the API: seen",
    ]
    assert "params: tone=formal, count=2" in capsys.readouterr().out
