"""Attacks on the tool side, each written as the attack and now doing no harm.

A scripted (hostile) model drives Baton's own agent loop through the real runner, with every
tool call approved — the refusals here must hold even when a person says yes — and the working
folder set to the home folder, where Baton's config and data folders live (``--cwd $HOME``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from core.cli import main
from core.config import paths
from core.config.settings import SandboxSettings, load_settings, save_settings
from core.model.events import RunFinished, ToolCallFinished
from core.record.run_files import RunIndex, load_run
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import approve_all
from core.safety.sandbox import sandbox_status
from tests.cli_child import interrupt_baton_run
from tests.llm_server import LLMServer, Reply

REPO = Path(__file__).resolve().parents[1]
RUN_ID = "20260101-000000-attack"


def run_worker(server: LLMServer, cwd: Path, *, run_id: str = RUN_ID) -> list[object]:
    """Run the built-in ``worker`` with every call approved; return the saved run's events."""
    import asyncio

    request = RunRequest(mode="single", steps=[StepSpec(agent="worker", task="go")], cwd=cwd)
    runner = Runner(request, settings=load_settings(), responder=approve_all, run_id=run_id)
    result = asyncio.run(runner.run())
    assert result.status == "ok"
    return list(load_run(paths.data_dir() / "runs" / f"{run_id}.jsonl"))


def tool_results(events: list[object]) -> list[ToolCallFinished]:
    return [e for e in events if isinstance(e, ToolCallFinished)]


@pytest.fixture
def configured(llm_server: LLMServer) -> LLMServer:
    save_settings(llm_server.settings())
    return llm_server


def test_forged_run_finished_in_the_live_run_file_is_refused(
    configured: LLMServer, isolated_home: Path
) -> None:
    live = paths.data_dir() / "runs" / f"{RUN_ID}.jsonl"
    forged = json.dumps({"type": "run_finished", "run_id": RUN_ID, "ts": 1, "status": "ok"})
    relative = live.relative_to(isolated_home).as_posix()
    configured.queue(
        Reply.tool("write", {"path": relative, "content": forged + "\n"}),
        Reply.tool("write", {"path": f"./x/../{relative}", "content": forged + "\n"}),
        Reply.tool("edit", {"path": str(live), "old_string": "run_started", "new_string": "x"}),
        Reply.answer("done"),
    )
    events = run_worker(configured, isolated_home)
    results = tool_results(events)
    assert [r.status for r in results] == ["error", "error", "error"]
    assert all("Baton's own settings or data folder" in r.result for r in results)
    assert isinstance(events[-1], RunFinished)
    assert [e for e in events if isinstance(e, RunFinished)] == [events[-1]]
    assert sum(1 for line in live.read_text().splitlines() if '"run_finished"' in line) == 1
    record = RunIndex().get(RUN_ID)
    assert record is not None and record.path == str(live)


def test_rewriting_config_yaml_to_allow_bash_is_refused(
    configured: LLMServer, isolated_home: Path
) -> None:
    config = paths.config_dir() / "config.yaml"
    before = config.read_bytes()
    (isolated_home / "link").symlink_to(paths.config_dir())
    hostile = yaml.safe_dump({**yaml.safe_load(before), "policy": {"bash": "allow"}})
    configured.queue(
        Reply.tool("write", {"path": "config/config.yaml", "content": hostile}),
        Reply.tool("write", {"path": "link/config.yaml", "content": hostile}),
        Reply.tool("read", {"path": "link/config.yaml"}),
        Reply.answer("done"),
    )
    events = run_worker(configured, isolated_home)
    assert [r.status for r in tool_results(events)] == ["error", "error", "error"]
    assert config.read_bytes() == before
    assert load_settings().effective_policy()["bash"] == "ask"


def test_listing_and_searching_home_never_shows_batons_folders(
    configured: LLMServer, isolated_home: Path
) -> None:
    (isolated_home / "notes.txt").write_text("needle\n")
    configured.queue(
        Reply.tool("ls", {"path": "."}),
        Reply.tool("find", {"pattern": "**/*"}),
        Reply.tool("grep", {"pattern": "base_url|needle"}),
        Reply.answer("done"),
    )
    events = run_worker(configured, isolated_home)
    listing, found, grepped = (r.result for r in tool_results(events))
    assert "notes.txt" in listing and "config" not in listing.split()
    assert "notes.txt" in found and "config.yaml" not in found and "runs" not in found
    assert "notes.txt:1:needle" in grepped and "base_url" not in grepped


@pytest.mark.skipif(not sandbox_status().active, reason="no sandbox on this machine")
def test_sandboxed_bash_sees_batons_folders_empty_and_cannot_write_outside(
    configured: LLMServer, isolated_home: Path, tmp_path: Path
) -> None:
    config = paths.config_dir() / "config.yaml"
    before = config.read_bytes()
    outside = REPO / f".sandbox-probe-{tmp_path.name}"  # writable for the test, not for bash
    configured.queue(
        Reply.tool("bash", {"command": "ls -A config; echo 'policy: {bash: allow}' > config/c"}),
        Reply.tool("bash", {"command": f"echo pwned > {outside}"}),
        Reply.answer("done"),
    )
    try:
        events = run_worker(configured, isolated_home)
        assert not outside.exists()
    finally:
        outside.unlink(missing_ok=True)
    masked, escaped = tool_results(events)
    assert "config.yaml" not in masked.result
    # Read-only everywhere but the working folder; a checkout under /tmp is not even there
    # (the sandbox has a private /tmp).
    assert escaped.status == "error"
    assert "Read-only file system" in escaped.result or "No such file" in escaped.result
    assert config.read_bytes() == before and not (paths.config_dir() / "c").exists()


def test_printenv_never_hands_a_provider_key_to_the_model(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key = "sk-test-SECRET-9f8e7d6c5b4a"
    monkeypatch.setenv("PROVIDER_KEY", key)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("GITHUB_TOKEN", key)
    monkeypatch.setenv("AWS_SESSION", key)
    monkeypatch.setenv("DB_PASSWORD_FILE", key)
    save_settings(llm_server.settings(providers=[llm_server.provider(api_key_env="PROVIDER_KEY")]))
    llm_server.queue(
        Reply.tool("bash", {"command": "printenv; echo done-printing"}),
        Reply.answer("done"),
    )
    events = run_worker(llm_server, tmp_path)
    (result,) = tool_results(events)
    assert "done-printing" in result.result and "PATH=" in result.result
    bodies = [json.dumps(request.body) for request in llm_server.all_requests]
    assert sum(body.count(key) for body in bodies) == 0
    assert "PROVIDER_KEY" not in result.result and "GITHUB_TOKEN" not in result.result


@pytest.mark.skipif(os.name != "posix", reason="FIFOs and SIGINT delivery need POSIX")
def test_reading_a_fifo_then_cancelling_ends_the_process_and_the_run_is_aborted(
    configured: LLMServer, tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "pipe")
    configured.queue(Reply.tool("read", {"path": "pipe"}), Reply.hang())
    arguments = ["run", "--agent", "scout", "--task", "look", "--json", "--cwd", str(tmp_path)]
    code, out, err = interrupt_baton_run(configured, arguments, after_requests=2)
    assert code == 130, err
    refused = configured.requests[1].tool_messages[0]["content"]
    assert "named pipe (FIFO)" in refused
    last = json.loads(out.splitlines()[-1])
    saved = load_run(paths.data_dir() / "runs" / f"{last['run_id']}.jsonl")
    assert isinstance(saved[-1], RunFinished) and saved[-1].status == "aborted"


@pytest.mark.skipif(sandbox_status().kind != "bubblewrap", reason="bubblewrap does not run here")
def test_no_network_cuts_sandboxed_bash_for_one_run(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        connect = {"command": f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"}
        configured.queue(Reply.tool("bash", connect), Reply.answer("a"))
        configured.queue(Reply.tool("bash", connect), Reply.answer("b"))
        base = ["run", "--agent", "worker", "--task", "t", "--approve", "all", "--json"]
        assert main([*base, "--cwd", str(tmp_path)]) == 0
        assert main([*base, "--no-network", "--cwd", str(tmp_path)]) == 0
    with_network, without = (r.tool_messages[0]["content"] for r in configured.requests[1::2])
    assert "connected" in with_network
    assert "connected" not in without and "failed with exit code" in without
    assert "not sandboxed" not in capsys.readouterr().err


def test_baton_run_says_not_sandboxed_before_anything_runs(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = load_settings()
    save_settings(settings.model_copy(update={"sandbox": SandboxSettings(enabled=False)}))
    configured.queue(Reply.answer("hello"))
    assert main(["run", "--agent", "worker", "--task", "t", "--cwd", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "baton run: bash is not sandboxed: the sandbox is turned off in Settings" in err
