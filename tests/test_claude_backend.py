"""The Claude Code backend against a fake CLI that is a real child process (tests/fake_claude.py):
the command line, the stdio control protocol, approvals, interrupt, SIGTERM/SIGKILL, errors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.backends.base import BackendError, RunClock, StepContext
from core.backends.claude_cli import ClaudeBackend, build_command, claude_tools
from core.backends.cli_paths import claude_deny_rules
from core.config.paths import config_dir
from core.config.settings import Limits, PolicyValue, Settings
from core.definitions.agents import AgentDefinition
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    Log,
    StepFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UsageStats,
)
from core.safety.approvals import ApprovalAnswer, ApprovalGate, ApprovalRequest, Responder, deny_all
from tests.fake_claude import (
    init,
    install,
    read_log,
    result,
    streamed_text,
    tool_use,
)


class Harness:
    """A step context whose gate and backend events land in one ordered list."""

    def __init__(
        self,
        tmp_path: Path,
        scenario: dict[str, Any] | None = None,
        *,
        responder: Responder = deny_all,
        agent: AgentDefinition | None = None,
        model: str | None = None,
        claude_path: str | None = None,
        policy: dict[str, PolicyValue] | None = None,
    ) -> None:
        self.folder = tmp_path
        self.log_path = tmp_path / "fake-log.jsonl"
        self.work = tmp_path / "work"
        self.work.mkdir(exist_ok=True)
        if scenario is not None and claude_path is None:
            scenario = {"log": str(self.log_path), **scenario}
            claude_path = str(install(tmp_path, scenario))
        self.events: list[Event] = []
        self.settings = Settings(
            claude_path=claude_path, limits=Limits(max_turns=7), policy=policy or {}
        )
        clock = RunClock()
        self.gate = ApprovalGate(
            self.settings.effective_policy(), responder, self.events.append, clock.now
        )
        self.ctx = StepContext(
            run_id="r1",
            step=0,
            agent=agent
            or AgentDefinition(name="helper", description="d", system_prompt="Be brief."),
            task="Copy hello.txt",
            cwd=self.work,
            model=model,
            tools=(),
            settings=self.settings,
            approvals=self.gate,
            clock=clock,
        )
        self.backend = ClaudeBackend()
        self.backend.interrupt_grace_s = 0.3
        self.backend.terminate_grace_s = 0.3

    async def run(self, on_event: Callable[[Event], None] | None = None) -> StepFinished:
        async with contextlib.aclosing(self.backend.run(self.ctx)) as stream:
            async for event in stream:
                self.events.append(event)
                if on_event is not None:
                    on_event(event)
        finished = self.events[-1]
        assert isinstance(finished, StepFinished)
        return finished

    def log(self) -> list[dict[str, Any]]:
        return read_log(self.log_path)

    def stdin(self) -> list[dict[str, Any]]:
        return [entry["stdin"] for entry in self.log() if "stdin" in entry]

    def answers(self) -> list[dict[str, Any]]:
        """The ``response`` bodies of the control responses the fake received."""
        return [
            m["response"]["response"]
            for m in self.stdin()
            if m.get("type") == "control_response" and "response" in m["response"]
        ]

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def pid(self) -> int:
        return int(self.log()[0]["pid"])


def _assert_gone(pid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _usage_total(events: list[Event]) -> UsageStats:
    total = UsageStats()
    for event in events:
        if isinstance(event, Usage):
            total = total + event.usage
    return total


def _respond(*answers: ApprovalAnswer) -> tuple[Responder, list[ApprovalRequest]]:
    asked: list[ApprovalRequest] = []
    queue = list(answers)

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return queue.pop(0)

    return responder, asked


ASK_BASH = {
    "ask": {
        "tool_name": "Bash",
        "input": {"command": "cp hello.txt copy.txt", "description": "Copy"},
        "tool_use_id": "toolu_1",
    },
    "request_id": "perm-1",
}


# ------------------------------------------------------------------------------- command


def test_tools_map_baton_names_back_and_pass_claude_names_through() -> None:
    declared = ("read", "Bash", "find", "ls", "document", "NotebookEdit", "Read")
    assert claude_tools(declared) == ["Read", "Bash", "Glob", "NotebookEdit"]


def test_command_line_has_the_protocol_flags_model_tools_turns_and_agent_body(
    tmp_path: Path,
) -> None:
    agent = AgentDefinition(
        name="scout",
        description="d",
        declared_tools=("read", "Grep"),
        system_prompt="--- starts with dashes",
    )
    harness = Harness(tmp_path, agent=agent, model="sonnet", claude_path="claude")
    argv = build_command("/bin/claude", harness.ctx, tmp_path / "prompt.md")
    assert argv[:10] == [
        "/bin/claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--input-format",
        "stream-json",
        "--permission-prompt-tool",
        "stdio",
    ]
    assert argv[10:] == [
        "--permission-mode",
        "default",
        '--settings={"permissions":{"ask":["Bash","Edit","MultiEdit","NotebookEdit","Write"],'
        f'"deny":{json.dumps(claude_deny_rules(), separators=(",", ":"))}}}}}',
        "--model",
        "sonnet",
        "--tools=Read,Grep",
        "--max-turns",
        "7",
        # An untrusted folder: only the person's settings, and no MCP server.
        "--setting-sources",
        "user",
        "--strict-mcp-config",
        # The agent's body never on the command line (ps shows it to everyone).
        "--append-system-prompt-file",
        str(tmp_path / "prompt.md"),
    ]
    assert "--- starts with dashes" not in " ".join(argv)


def test_the_policy_becomes_claude_s_permission_flags(tmp_path: Path) -> None:
    """ask → an ask rule (reads in Claude's safe set too); deny → disallowed, not offered."""
    agent = AgentDefinition(name="scout", description="d", declared_tools=("read", "Bash", "Grep"))
    policy: dict[str, PolicyValue] = {
        "read": "ask",
        "bash": "deny",
        "grep": "allow",
        "WebFetch": "deny",
    }
    harness = Harness(tmp_path, agent=agent, claude_path="claude", policy=policy)
    argv = build_command("claude", harness.ctx)
    settings = json.loads(next(a for a in argv if a.startswith("--settings="))[11:])
    assert settings["permissions"]["ask"] == ["Read", "Edit", "MultiEdit", "NotebookEdit", "Write"]
    assert settings["permissions"]["deny"] == ["Bash", "WebFetch", *claude_deny_rules()]
    config = str(config_dir().resolve())
    assert f"Read(/{config}/**)" in settings["permissions"]["deny"]  # Baton's own folders
    assert "--disallowedTools=Bash,WebFetch" in argv
    assert "--tools=Read,Grep" in argv  # Bash is never offered
    assert argv[argv.index("--permission-mode") + 1] == "default"


def test_no_model_and_no_tools_line_means_no_flags(tmp_path: Path) -> None:
    harness = Harness(tmp_path, claude_path="claude")
    argv = build_command("claude", harness.ctx)
    assert "--model" not in argv
    assert not any(a.startswith("--tools") for a in argv)


async def test_missing_configured_executable_says_how_to_install(tmp_path: Path) -> None:
    harness = Harness(tmp_path, claude_path=str(tmp_path / "nowhere" / "claude"))
    with pytest.raises(BackendError, match="npm install -g @anthropic-ai/claude-code"):
        await harness.run()


async def test_claude_not_on_path_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    harness = Harness(tmp_path)
    with pytest.raises(BackendError, match=r"not installed or not on PATH.*npm install"):
        await harness.run()


# ------------------------------------------------------------------------------- a run


async def test_normal_run_streams_text_and_ends_with_the_result(tmp_path: Path) -> None:
    totals = {
        "input_tokens": 30,
        "output_tokens": 9,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 50,
    }
    steps = [
        {"print": init()},
        *({"print": line} for line in streamed_text("msg_1", ["Hel", "lo"], output_tokens=9)),
        {"print": result("Hello", num_turns=1, cost=0.0123, usage=totals)},
    ]
    agent = AgentDefinition(
        name="helper", description="d", declared_tools=("bash",), system_prompt="Be brief."
    )
    harness = Harness(tmp_path, {"steps": steps}, agent=agent, model="haiku")
    finished = await harness.run()

    assert finished.status == "ok"
    assert finished.output == "Hello"
    assert "".join(e.text for e in harness.of(TextDelta)) == "Hello"
    assert _usage_total(harness.events) == UsageStats(
        turns=1,
        input=30,
        output=9,
        cache_read=100,
        cache_write=50,
        cost=0.0123,
        context_tokens=19,
        model="claude-sonnet-4-5",
    )
    first = harness.log()[0]
    assert first["cwd"] == str(harness.work)
    assert "--tools=Bash" in first["argv"]
    assert first["argv"][first["argv"].index("--model") + 1] == "haiku"
    # The agent's prompt: in a file only its owner can read, never in argv, gone afterwards.
    prompt = harness.log()[1]
    assert (prompt["mode"], prompt["text"]) == (0o600, "Be brief.\n")
    assert "Be brief." not in " ".join(first["argv"])
    assert not await asyncio.to_thread(os.path.exists, prompt["prompt_file"])
    sent = harness.stdin()
    assert sent[0]["request"] == {"subtype": "initialize", "hooks": None}
    assert sent[1]["message"] == {"role": "user", "content": "Copy hello.txt"}
    _assert_gone(harness.pid())


async def test_garbage_unknown_lines_and_a_crash_with_stderr(tmp_path: Path) -> None:
    steps = [
        {"print": init()},
        {"raw": "this is not json"},
        {"print": {"type": "mystery_event", "value": 1}},
        {"stderr": "fatal: config file is broken"},
        {"exit": 3},
    ]
    harness = Harness(tmp_path, {"steps": steps})
    finished = await harness.run()
    assert finished.status == "error"
    assert finished.error is not None
    assert "exited with status 3" in finished.error
    assert "config file is broken" in finished.error
    logs = harness.of(Log)
    assert any(log.level == "warning" and "this is not json" in log.message for log in logs)
    assert any(log.level == "debug" and "mystery_event" in log.message for log in logs)


async def test_two_results_the_last_one_wins(tmp_path: Path) -> None:
    second_totals = {"input_tokens": 40, "output_tokens": 20}
    steps = [
        {"print": init()},
        *({"print": line} for line in streamed_text("msg_1", ["first"])),
        {"print": result("first answer", num_turns=1, cost=0.01)},
        {"print": init()},
        {"print": result("background done", num_turns=3, cost=0.05, usage=second_totals)},
    ]
    harness = Harness(tmp_path, {"steps": steps})
    finished = await harness.run()
    assert finished.status == "ok"
    assert finished.output == "background done"
    total = _usage_total(harness.events)
    assert (total.turns, total.input, total.output, total.cost) == (3, 40, 20, 0.05)


async def test_failure_is_decided_by_is_error_not_subtype(tmp_path: Path) -> None:
    steps = [
        {"print": init()},
        {"print": result("API Error: 500 boom", is_error=True, subtype="success")},
    ]
    harness = Harness(tmp_path, {"steps": steps, "exit_code": 1})
    finished = await harness.run()
    assert finished.status == "error"
    assert finished.error == "API Error: 500 boom"


# ------------------------------------------------------------------------------- approvals


def _approval_steps(*asks: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [{"print": init()}]
    for ask in asks:
        call = ask["ask"]
        steps.append(
            {"print": tool_use("msg_t", call["tool_use_id"], call["tool_name"], call["input"])}
        )
        steps.append(ask)
    steps += [
        *({"print": line} for line in streamed_text("msg_2", ["after"])),
        {"print": result("after", num_turns=2)},
    ]
    return steps


async def test_denial_reaches_the_cli_with_the_reason(tmp_path: Path) -> None:
    responder, asked = _respond(ApprovalAnswer(decision="deny", reason="Not on my machine"))
    harness = Harness(tmp_path, {"steps": _approval_steps(ASK_BASH)}, responder=responder)
    finished = await harness.run()

    assert finished.status == "ok"
    denial = {"behavior": "deny", "message": "Denied by the user: Not on my machine"}
    assert harness.answers() == [denial]
    request = asked[0]
    assert (request.tool, request.call_id, request.agent) == ("bash", "toolu_1", "helper")
    assert request.arguments == {"command": "cp hello.txt copy.txt", "description": "Copy"}
    assert request.cwd == str(harness.work)
    resolved = harness.of(ApprovalResolved)
    assert [(r.decision, r.reason) for r in resolved] == [("deny", "Not on my machine")]
    done = harness.of(ToolCallFinished)
    assert [(d.call_id, d.status, d.result) for d in done] == [
        ("toolu_1", "error", "Denied by the user: Not on my machine")
    ]


async def test_approval_with_edited_command_sends_updated_input(tmp_path: Path) -> None:
    edited = {"command": "cp -n hello.txt copy.txt", "description": "Copy"}
    responder, _ = _respond(ApprovalAnswer(decision="approve", updated_arguments=edited))
    harness = Harness(tmp_path, {"steps": _approval_steps(ASK_BASH)}, responder=responder)
    await harness.run()
    assert harness.answers() == [{"behavior": "allow", "updatedInput": edited}]
    done = harness.of(ToolCallFinished)
    assert [(d.status, d.result) for d in done] == [("ok", "ran: cp -n hello.txt copy.txt")]


async def test_approve_for_run_answers_the_next_identical_request(tmp_path: Path) -> None:
    second = {
        "ask": {**ASK_BASH["ask"], "tool_use_id": "toolu_2"},  # type: ignore[dict-item]
        "request_id": "perm-2",
    }
    responder, asked = _respond(ApprovalAnswer(decision="approve_run"))
    harness = Harness(tmp_path, {"steps": _approval_steps(ASK_BASH, second)}, responder=responder)
    await harness.run()
    assert len(asked) == 1
    original = ASK_BASH["ask"]["input"]  # type: ignore[index]
    assert harness.answers() == [{"behavior": "allow", "updatedInput": original}] * 2
    resolved = harness.of(ApprovalResolved)
    assert [(r.decision, r.automatic) for r in resolved] == [
        ("approve_run", False),
        ("approve_run", True),
    ]


async def test_a_question_before_its_call_line_announces_the_call_first(
    tmp_path: Path,
) -> None:
    steps = [{"print": init()}, ASK_BASH, {"print": result("ok")}]
    responder, _ = _respond(ApprovalAnswer(decision="approve"))
    harness = Harness(tmp_path, {"steps": steps}, responder=responder)
    await harness.run()
    kinds = [type(e) for e in harness.events if isinstance(e, ToolCallStarted | ApprovalRequested)]
    assert kinds == [ToolCallStarted, ApprovalRequested]
    started = harness.of(ToolCallStarted)[0]
    assert (started.call_id, started.tool) == ("toolu_1", "bash")


async def test_events_keep_flowing_while_a_person_decides(tmp_path: Path) -> None:
    """The approval waits in its own task: lines printed after the question are read."""
    decided = asyncio.Event()
    seen_while_waiting: list[str] = []

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        await decided.wait()
        return ApprovalAnswer(decision="deny", reason="no")

    def on_event(event: Event) -> None:
        if isinstance(event, Log) and "meanwhile" in event.message:
            seen_while_waiting.append(event.message)
            decided.set()

    meanwhile = {"type": "user", "message": {"role": "user", "content": "meanwhile"}}
    steps = [{"print": init()}, {**ASK_BASH, "then_print": [meanwhile]}, {"print": result("ok")}]
    harness = Harness(tmp_path, {"steps": steps}, responder=responder)
    finished = await harness.run(on_event)
    assert seen_while_waiting
    assert finished.status == "ok"
    assert harness.answers() == [{"behavior": "deny", "message": "Denied by the user: no"}]


# ------------------------------------------------------------------------------- cancel


async def test_cancel_sends_interrupt_and_the_step_ends_aborted(tmp_path: Path) -> None:
    steps = [
        {"print": init()},
        *({"print": line} for line in streamed_text("msg_1", ["working"])),
        {"await_interrupt": True},
    ]
    harness = Harness(tmp_path, {"steps": steps})

    def on_event(event: Event) -> None:
        if isinstance(event, TextDelta):
            harness.ctx.cancelled.set()

    finished = await harness.run(on_event)
    assert finished.status == "aborted"
    assert finished.output == "working"
    assert {"subtype": "interrupt"} in [m.get("request") for m in harness.stdin()]
    _assert_gone(harness.pid())


async def test_cancel_during_an_approval_closes_the_dialog(tmp_path: Path) -> None:
    never = asyncio.Event()

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        harness.ctx.cancelled.set()  # the person presses Cancel while the dialog is open
        await never.wait()
        raise AssertionError("unreachable")

    harness = Harness(tmp_path, {"steps": [{"print": init()}, ASK_BASH]}, responder=responder)
    finished = await harness.run()
    assert finished.status == "aborted"
    assert [(r.decision, r.reason) for r in harness.of(ApprovalResolved)] == [
        ("deny", "run cancelled")
    ]
    assert not harness.gate.pending
    _assert_gone(harness.pid())


async def test_cli_ignoring_interrupt_and_sigterm_is_killed(tmp_path: Path) -> None:
    scenario = {
        "steps": [{"print": init()}, {"await_interrupt": True}],
        "ignore_interrupt": True,
        "ignore_sigterm": True,
    }
    harness = Harness(tmp_path, scenario)

    def on_event(event: Event) -> None:
        harness.ctx.cancelled.set()

    finished = await harness.run(on_event)
    assert finished.status == "aborted"
    _assert_gone(harness.pid())


async def test_hard_stop_kills_and_reaps_the_cli(tmp_path: Path) -> None:
    scenario = {
        "steps": [{"print": init()}, {"await_interrupt": True}],
        "ignore_sigterm": True,
    }
    harness = Harness(tmp_path, scenario)
    running = asyncio.Event()
    task = asyncio.create_task(harness.run(lambda event: running.set()))
    await running.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    _assert_gone(harness.pid())


async def test_unsupported_control_requests_are_refused_not_left_waiting(tmp_path: Path) -> None:
    steps = [
        {"print": init()},
        {
            "print": {
                "type": "control_request",
                "request_id": "hook-1",
                "request": {"subtype": "hook_callback", "callback_id": "x"},
            }
        },
        {"await_response": "hook-1"},
        {"print": result("ok")},
    ]
    harness = Harness(tmp_path, {"steps": steps})
    finished = await harness.run()
    assert finished.status == "ok"
    refusals = [
        m["response"]
        for m in harness.stdin()
        if m.get("type") == "control_response" and m["response"].get("subtype") == "error"
    ]
    assert refusals and refusals[0]["request_id"] == "hook-1"
