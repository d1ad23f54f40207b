"""``baton run`` end to end: the real CLI, the real runner and Baton's own HTTP agent loop
against the scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from core.cli import main
from core.config import paths
from core.config.settings import save_settings
from core.model.events import RunFinished, RunStarted, StepFinished, event_from_json
from core.record.run_files import RunIndex, load_run
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from tests.cli_child import interrupt_baton_run
from tests.llm_server import LLMServer, Reply

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def configured(llm_server: LLMServer) -> LLMServer:
    """Point Baton's config at the test server, as a user would in config.yaml."""
    save_settings(llm_server.settings())
    return llm_server


def test_preset_run_prints_the_full_event_stream_and_saves_the_run(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cli.py").write_text("def main():\n    pass\n", encoding="utf-8")
    configured.queue(
        Reply.tool("read", {"path": "cli.py"}),
        Reply.answer("## Files Retrieved\n- `cli.py` holds `main`"),
        Reply.answer("## Plan\n1. add the flag"),
        Reply.answer("## Completed\nAdded --verbose."),
    )
    code = main(["run", "implement", "add a --verbose flag", "--json", "--cwd", str(tmp_path)])
    assert code == 0
    events = [event_from_json(line) for line in capsys.readouterr().out.splitlines()]
    assert isinstance(events[0], RunStarted) and events[0].preset == "implement"
    assert isinstance(events[-1], RunFinished) and events[-1].status == "ok"
    assert [e.status for e in events if isinstance(e, StepFinished)] == ["ok", "ok", "ok"]
    types = {e.type for e in events}
    assert {"tool_call_started", "tool_call_finished", "text_delta", "usage"} <= types

    planner_request = configured.requests[2]
    assert "`cli.py` holds `main`" in planner_request.user_text
    assert "add a --verbose flag" in configured.requests[0].user_text

    record = RunIndex().get(events[0].run_id)
    assert record is not None and record.status == "ok"
    assert load_run(Path(record.path)) == events


def test_only_the_standard_environment_and_a_one_model_server_is_enough(
    llm_server: LLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's quickest set-up: two environment variables, no config, no --model."""
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-only-in-the-environment")
    llm_server.models = ["qwen2.5-coder:7b"]
    llm_server.queue(Reply.answer("## Files Retrieved\n- none"), Reply.answer("## Plan\n1. go"))
    code = main(["run", "scout-and-plan", "anything", "--cwd", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    assert [r.body["model"] for r in llm_server.requests] == ["qwen2.5-coder:7b"] * 2


def test_unknown_agent_fails_before_any_request(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--agent", "ghost", "--task", "x", "--cwd", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown agent 'ghost'" in err and "scout" in err
    assert configured.requests == []


def test_unknown_preset_names_the_available_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "deploy", "--cwd", str(tmp_path)]) == 2
    assert (
        "unknown preset 'deploy' (available: best-of-3, fan-in, implement"
        in capsys.readouterr().err
    )


def test_parallel_concurrency_is_measured_at_the_server(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    gate = threading.Event()
    llm_server.responder = lambda body: Reply.answer("done", hold=gate)
    request = RunRequest(
        mode="parallel",
        steps=[StepSpec(agent="planner", task=f"task {i}") for i in range(6)],
        cwd=tmp_path,
    )
    runner = Runner(request, settings=llm_server.settings())

    def release_when_saturated() -> None:
        llm_server.wait_until(lambda: llm_server.in_flight == 4)
        gate.set()

    releaser = threading.Thread(target=release_when_saturated)
    releaser.start()
    result = asyncio.run(runner.run())
    releaser.join()
    assert result.status == "ok"
    assert llm_server.max_concurrent == 4
    assert len(llm_server.requests) == 6


async def test_cancel_during_a_hung_request_ends_aborted_with_the_file_intact(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.queue(Reply.answer("step one done"), Reply.hang())
    request = RunRequest(
        mode="chain",
        steps=[StepSpec(agent="scout", task="a"), StepSpec(agent="planner", task="{previous}")],
        cwd=tmp_path,
    )
    runner = Runner(request, settings=llm_server.settings())
    task = asyncio.create_task(runner.run())
    await llm_server.wait_requests_async(2)
    runner.cancel()
    result = await asyncio.wait_for(task, timeout=120)
    assert result.status == "aborted"
    await llm_server.wait_until_async(lambda: llm_server.requests[1].closed.is_set())
    saved = load_run(paths.data_dir() / "runs" / f"{runner.run_id}.jsonl")
    assert isinstance(saved[-1], RunFinished) and saved[-1].status == "aborted"
    assert [e.status for e in saved if isinstance(e, StepFinished)] == ["ok", "aborted"]


def test_denied_bash_reaches_the_model_and_the_run_goes_on(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(
        Reply.tool("bash", {"command": "rm -rf build"}),
        Reply.answer("I could not run the command, so I stopped."),
    )
    code = main(
        ["run", "--agent", "worker", "--task", "clean", "--approve", "deny", "--cwd", str(tmp_path)]
    )
    assert code == 0
    tool_message = configured.requests[1].tool_messages[0]
    assert "Denied" in tool_message["content"]
    out = capsys.readouterr().out
    assert "✗ bash rm -rf build" in out
    assert "I could not run the command" in out


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery to a child needs POSIX")
def test_ctrl_c_cancels_cleanly_with_exit_130(configured: LLMServer, tmp_path: Path) -> None:
    configured.queue(Reply.hang())
    arguments = ["run", "--agent", "scout", "--task", "wait", "--json", "--cwd", str(tmp_path)]
    code, out, err = interrupt_baton_run(configured, arguments, after_requests=1)
    assert code == 130, err
    last = json.loads(out.splitlines()[-1])
    assert last["type"] == "run_finished" and last["status"] == "aborted"
    saved = load_run(paths.data_dir() / "runs" / f"{last['run_id']}.jsonl")
    assert isinstance(saved[-1], RunFinished) and saved[-1].status == "aborted"
