"""The pi backend's process side (core.backends.pi_cli) against a real child process.

``tests/fake_pi.py`` stands in for pi: the backend really spawns it, reads its pipes,
signals its process group and reaps it. Only what pi prints is scripted.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from core.backends.base import BackendError, StepContext
from core.backends.cli_output import read_lines
from core.backends.pi_cli import PiBackend, parse_version
from core.backends.pi_rpc import gate_extension
from core.backends.pi_sessions import sessions_dir
from core.config.settings import Settings
from core.definitions.agents import AgentDefinition
from core.model.events import (
    Event,
    Log,
    StepFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from tests.fake_pi import make_fake_pi
from tests.step_contexts import step_context

SESSION = json.dumps({"type": "session", "version": 3, "id": "s", "cwd": "/x"})
START = json.dumps({"type": "message_start", "message": {"role": "assistant", "content": []}})


AGENT_END = {"out": json.dumps({"type": "agent_end", "messages": []})}


def answer_lines(text: str, *, end: bool = True) -> list[dict[str, Any]]:
    delta = {"type": "text_delta", "contentIndex": 0, "delta": text}
    ended = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stopReason": "stop",
        "model": "m1",
        "usage": {"input": 7, "output": 3, "totalTokens": 10, "cost": {"total": 0.5}},
    }
    return [
        {"out": SESSION},
        {"out": START},
        {"out": json.dumps({"type": "message_update", "assistantMessageEvent": delta})},
        {"out": json.dumps({"type": "message_end", "message": ended})},
        *([AGENT_END] if end else []),
    ]


TOOL_START = json.dumps(
    {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {}}
)


def make_ctx(
    folder: Path,
    pi: Path | str | None,
    *,
    tools: tuple[str, ...] | None = None,
    model: str | None = "m1",
    prompt: str = "You are a careful test agent.\nÜmlauts are fine.",
    **settings: Any,
) -> StepContext:
    work = folder / "work"
    work.mkdir(exist_ok=True)
    config = Settings(pi_path=str(pi) if pi is not None else None, **settings)
    agent = AgentDefinition(name="worker", description="d", tools=tools, system_prompt=prompt)
    return step_context(agent, work, config, run_id="run-1", task="do the thing", model=model)


async def collect(ctx: StepContext) -> list[Event]:
    return [event async for event in PiBackend().run(ctx)]


def of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def gone(pid: int) -> bool:
    """No such process, or only a zombie waiting for a parent that is not us."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return True
    return state == b"Z"


async def wait_gone(pid: int) -> None:
    """Wait for a process that is not our child to die (a pidfd turns readable then)."""
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    died = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(descriptor, died.set)
    try:
        async with asyncio.timeout(10):
            await died.wait()
    finally:
        loop.remove_reader(descriptor)
        os.close(descriptor)


def recorded(record: Path) -> dict[str, Any]:
    """What the fake saw (argv, cwd, pid, prompt file); written before its first line."""
    data: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
    return data


def recorded_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def exists(path: str | Path) -> bool:
    return Path(path).exists()


def mode(path: str | Path) -> int:
    return stat.S_IMODE(Path(path).stat().st_mode)


# ------------------------------------------------------------------------------ normal runs


async def test_a_normal_step(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": answer_lines("**Done.**")})
    ctx = make_ctx(tmp_path, pi)
    events = await collect(ctx)
    step = events[-1]
    assert isinstance(step, StepFinished)
    assert (step.status, step.output, step.error) == ("ok", "**Done.**", None)
    assert step.usage.turns == 1 and step.usage.cost == 0.5
    assert [e.text for e in of(events, TextDelta)] == ["**Done.**"]
    assert all(e.run_id == "run-1" and e.step == 0 for e in events)
    seen = recorded(record)
    prompt_file = seen["prompt_path"]
    assert seen["argv"] == [
        "--mode", "rpc", "--session-dir", str(sessions_dir()), "--no-extensions",
        "-e", str(gate_extension()),
        "--model", "m1", "--tools", "read,grep,find,ls,bash,edit,write",
        "--no-context-files", "--no-skills",  # the folder is not trusted
        "--append-system-prompt", prompt_file,
    ]  # fmt: skip
    assert seen["task"] == "Task: do the thing"  # the RPC prompt, once the gate was seen
    assert seen["cwd"] == str(ctx.cwd)
    assert seen["prompt_mode"] == 0o600 and seen["prompt_folder_mode"] == 0o700
    assert seen["prompt_text"] == "You are a careful test agent.\nÜmlauts are fine.\n"
    assert not exists(prompt_file) and not exists(Path(prompt_file).parent)
    assert gone(seen["pid"])
    assert [e for e in of(events, Log) if e.level == "warning"] == []  # every call is gated


async def test_a_reference_transcript_through_the_process(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    for version in ("pi-0.73.1", "pi-1.6.0"):
        source = fixtures_dir / "pi" / version / "rich.jsonl"
        pi = make_fake_pi(tmp_path / version, {"steps": [{"replay": str(source)}]})
        events = await collect(make_ctx(tmp_path, pi))
        step = events[-1]
        assert isinstance(step, StepFinished) and step.status == "ok"
        assert step.output.startswith("## Findings")
        assert len(of(events, ToolCallStarted)) == len(of(events, ToolCallFinished)) == 3


async def test_cleanup_is_done_before_the_step_result_is_handed_over(tmp_path: Path) -> None:
    """The runner stops iterating at ``step_finished``; nothing may be left to a finally."""
    record = tmp_path / "record.json"
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": answer_lines("ok")})
    run = PiBackend().run(make_ctx(tmp_path, pi))
    async for event in run:
        if isinstance(event, StepFinished):
            seen = recorded(record)
            assert gone(seen["pid"])
            assert not exists(seen["prompt_path"])
            break
    await run.aclose()


@pytest.mark.parametrize(
    ("tools", "options", "expected", "notes"),
    [
        (("read", "document"), {}, ["--tools", "read"], ["warning: pi has no 'document'"]),
        ((), {}, ["--no-tools"], []),
        (
            ("read", "bash", "subagent", "my_extension_tool"),
            {"policy": {"bash": "deny", "subagent": "allow", "my_extension_tool": "allow"}},
            ["--tools", "read"],
            ["info: the policy denies 'bash'",
             "warning: not given to pi: subagent, my_extension_tool (pi steps get only"],
        ),
        (None, {"policy": {"bash": "allow", "edit": "allow", "write": "allow"}},
         ["--tools", "read,grep,find,ls,bash,edit,write"], ["info: pi has no 'document'"]),
    ],
)  # fmt: skip
async def test_tools_and_their_notes(
    tmp_path: Path,
    tools: tuple[str, ...] | None,
    options: dict[str, Any],
    expected: list[str],
    notes: list[str],
) -> None:
    record = tmp_path / "record.json"
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": answer_lines("ok")})
    events = await collect(make_ctx(tmp_path, pi, tools=tools, **options))
    argv = recorded(record)["argv"]
    assert argv[9 : 9 + len(expected)] == expected
    assert not any("subagent" in arg for arg in argv)
    logs = [f"{e.level}: {e.message}" for e in of(events, Log)]
    assert len(logs) == len(notes)
    assert all(log.startswith(note) for log, note in zip(logs, notes, strict=True))


async def test_model_is_passed_only_when_wanted(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": answer_lines("ok")})
    await collect(make_ctx(tmp_path, pi, pi_pass_model=False))
    assert "--model" not in recorded(record)["argv"]
    await collect(make_ctx(tmp_path, pi, model=None))
    assert "--model" not in recorded(record)["argv"]
    await collect(make_ctx(tmp_path, pi, prompt="  "))
    assert "--append-system-prompt" not in recorded(record)["argv"]


async def test_the_task_travels_as_data_never_as_an_argument(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": answer_lines("ok")})
    ctx = make_ctx(tmp_path, pi)
    ctx.task = "-rf / --help; $(echo no)\nline two"
    await collect(ctx)
    seen = recorded(record)
    assert seen["task"] == "Task: -rf / --help; $(echo no)\nline two"
    assert not any("echo no" in arg for arg in seen["argv"])


# ------------------------------------------------------------------------------ failures


async def test_exit_1_with_stderr_fails_with_its_tail(tmp_path: Path) -> None:
    steps: list[dict[str, Any]] = [{"out": SESSION}]
    steps += [{"err": f"noise {n}"} for n in range(60)]
    steps += [{"err": "Error: No API key found for provider 'local'"}, {"exit": 1}]
    pi = make_fake_pi(tmp_path / "bin", {"steps": steps})
    events = await collect(make_ctx(tmp_path, pi))
    step = events[-1]
    assert isinstance(step, StepFinished) and step.status == "error"
    assert step.error is not None
    assert step.error.startswith("pi exited with status 1: ")
    assert step.error.endswith("Error: No API key found for provider 'local'")
    assert "noise 59" in step.error and "noise 0\n" not in step.error
    stderr_logs = [e.message for e in of(events, Log) if e.message.startswith("pi: ")]
    assert len(stderr_logs) == 61 and stderr_logs[-1].endswith("provider 'local'")


async def test_garbage_non_utf8_and_a_partial_last_line_are_logged(tmp_path: Path) -> None:
    steps = [
        {"out": "Debugger attached."},
        *answer_lines("fine", end=False),
        {"out_bytes": "ff fe 80 0a".replace(" ", "")},
        {"out_bytes": b'{"type": "message_end", "mess'.hex()},
        {"exit": 0},
    ]
    pi = make_fake_pi(tmp_path / "bin", {"steps": steps})
    events = await collect(
        make_ctx(tmp_path, pi, policy={"bash": "allow", "edit": "allow", "write": "allow"})
    )
    messages = [e.message for e in of(events, Log)]
    assert any("not a pi event: Debugger attached." in m for m in messages)
    assert any("not UTF-8" in m for m in messages)
    assert any("incomplete last line" in m for m in messages)
    step = events[-1]
    assert isinstance(step, StepFinished) and (step.status, step.output) == ("ok", "fine")


async def test_a_line_far_over_64_kib(tmp_path: Path) -> None:
    steps = [{"out": SESSION}, {"out": START}, {"out_big": 3_000_000}, *answer_lines("x")[3:]]
    pi = make_fake_pi(tmp_path / "bin", {"steps": steps})
    events = await collect(make_ctx(tmp_path, pi))
    deltas = of(events, TextDelta)
    assert len(deltas[0].text) == 3_000_000
    assert isinstance(events[-1], StepFinished)


async def test_a_line_over_the_limit_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PiBackend, "max_line_bytes", 100_000)
    steps = [{"out": SESSION}, {"out": START}, {"out_big": 1_000_000}, *answer_lines("after")[1:]]
    pi = make_fake_pi(tmp_path / "bin", {"steps": steps})
    events = await collect(make_ctx(tmp_path, pi))
    skipped = [e for e in of(events, Log) if "skipped a line" in e.message]
    assert len(skipped) == 1 and "1000" in skipped[0].message
    step = events[-1]
    assert isinstance(step, StepFinished) and (step.status, step.output) == ("ok", "after")


async def test_read_lines_splits_across_chunks() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(b"one\ntw")
    reader.feed_data(b"o\n" + b"x" * 50 + b"\nthree\nfour")
    reader.feed_eof()
    lines = [(line.data, line.kind, line.size) async for line in read_lines(reader, 20)]
    assert lines == [
        (b"one\n", "line", 4),
        (b"two\n", "line", 4),
        (b"", "overflow", 51),
        (b"three\n", "line", 6),
        (b"four", "partial", 4),
    ]


# ------------------------------------------------------------------------------ cancel


async def _run_until_tool_started(ctx: StepContext) -> tuple[asyncio.Task[None], list[Event]]:
    seen: list[Event] = []
    started = asyncio.Event()

    async def consume() -> None:
        async for event in PiBackend().run(ctx):
            seen.append(event)
            if isinstance(event, ToolCallStarted):
                started.set()

    task = asyncio.create_task(consume())
    async with asyncio.timeout(20):
        await started.wait()
    return task, seen


async def test_cancel_kills_a_pi_that_ignores_sigterm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PiBackend, "kill_grace_s", 0.3)
    record = tmp_path / "record.json"
    child_file = tmp_path / "child.pid"
    steps = [
        {"ignore_sigterm": True},
        {"spawn_detached": str(child_file)},  # like pi's bash tool: a session of its own
        {"out": SESSION},
        {"out": TOOL_START},
        {"hang": True},
    ]
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": steps})
    task, _ = await _run_until_tool_started(make_ctx(tmp_path, pi))
    seen = recorded(record)
    child = int(recorded_text(child_file))
    prompt = Path(seen["prompt_path"])
    assert exists(prompt) and mode(prompt) == 0o600
    assert not gone(seen["pid"]) and not gone(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(30):  # fails (rather than hangs) if pi is never killed
            await task
    with pytest.raises(ProcessLookupError):  # killed and reaped: no zombie left
        os.kill(seen["pid"], 0)
    await wait_gone(child)
    assert gone(child)
    assert not exists(prompt) and not exists(prompt.parent)


async def test_cancel_stops_a_pi_that_obeys_sigterm(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    steps = [{"out": SESSION}, {"out": TOOL_START}, {"out_big": 500_000}, {"hang": True}]
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": steps})
    task, _ = await _run_until_tool_started(make_ctx(tmp_path, pi))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(30):  # fails (rather than hangs) if pi is never killed
            await task
    with pytest.raises(ProcessLookupError):
        os.kill(recorded(record)["pid"], 0)


async def test_pi_killed_from_outside_closes_open_calls(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    steps = [{"out": SESSION}, {"out": START}, {"out": TOOL_START}, {"hang": True}]
    pi = make_fake_pi(tmp_path / "bin", {"record": str(record), "steps": steps})
    task, seen = await _run_until_tool_started(make_ctx(tmp_path, pi))
    os.kill(recorded(record)["pid"], 15)
    await task
    closed = of(seen, ToolCallFinished)
    assert [(c.call_id, c.status) for c in closed] == [("c1", "aborted")]
    step = seen[-1]
    assert isinstance(step, StepFinished) and step.status == "aborted"
    assert step.error == "pi was stopped by SIGTERM before it finished"


# ------------------------------------------------------------------------------ finding pi


async def test_missing_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(BackendError, match="pi is not installed: npm install -g"):
        await collect(make_ctx(tmp_path, None))
    with pytest.raises(BackendError, match="pi was not found at '/nowhere/pi'"):
        await collect(make_ctx(tmp_path, "/nowhere/pi"))


async def test_pi_on_path_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pi = make_fake_pi(tmp_path / "bin", {"steps": answer_lines("from PATH")})
    monkeypatch.setenv("PATH", str(pi.parent))
    events = await collect(make_ctx(tmp_path, None))
    assert isinstance(events[-1], StepFinished) and events[-1].output == "from PATH"


async def test_versions(tmp_path: Path) -> None:
    old = make_fake_pi(tmp_path / "old", {"version": "0.72.9", "steps": answer_lines("x")})
    with pytest.raises(BackendError, match=r"pi 0\.72\.9 is too old: Baton needs pi 0\.73"):
        await collect(make_ctx(tmp_path, old))
    broken = make_fake_pi(tmp_path / "broken", {"version": "", "version_exit": 2})
    with pytest.raises(BackendError, match="failed to report its version"):
        await collect(make_ctx(tmp_path, broken))
    odd = make_fake_pi(tmp_path / "odd", {"version": "dev build", "steps": answer_lines("y")})
    events = await collect(make_ctx(tmp_path, odd))
    assert "could not read the version" in of(events, Log)[0].message
    assert isinstance(events[-1], StepFinished) and events[-1].status == "ok"
    new = make_fake_pi(tmp_path / "new", {"version": "1.6.0", "steps": answer_lines("z")})
    assert (await collect(make_ctx(tmp_path, new)))[-1].status == "ok"  # type: ignore[union-attr]
    assert parse_version("pi v0.73.1\n") == (0, 73, 1)
