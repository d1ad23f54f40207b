"""The ACP backend against a tiny agent written with the SDK's agent side (tests/acp_agent.py).

Real subprocess, real JSON-RPC over stdio, real bubblewrap, Baton's real gate, file tools and
bash: only the agent is small. The real agents (OpenCode) are in test_acp_opencode.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from acp.schema import PermissionOption

from core.backends.acp_backend import AcpBackend
from core.backends.acp_client import choose_option
from core.backends.base import BackendError, RunClock, StepContext
from core.config.acp_agents import AcpCommand, known_acp_agent, parse_acp_field
from core.config.paths import data_dir
from core.config.settings import PolicyValue, SandboxSettings, Settings
from core.definitions.agents import AgentDefinition, parse_agent_text
from core.model.events import (
    ApprovalResolved,
    Event,
    Log,
    StepFinished,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    Usage,
)
from core.safety.approvals import ApprovalAnswer, ApprovalGate, ApprovalRequest
from core.safety.rule_store import RuleStore
from core.safety.sandbox import sandbox_status

ROOT = Path(__file__).resolve().parents[1]
SANDBOXES = [
    pytest.param(True, id="sandboxed"),
    pytest.param(False, id="unsandboxed"),
]


def tiny_agent(**env: str) -> AgentDefinition:
    command = AcpCommand(
        command=sys.executable,
        args=(str(ROOT / "tests" / "acp_agent.py"),),
        env={"PYTHONPATH": str(ROOT), **env},
    )
    return AgentDefinition(name="tiny", description="d", backend="acp", acp=command)


class Person:
    """Answers approvals as a person would; records what was asked."""

    def __init__(self, deny: dict[str, str] | None = None) -> None:
        self.deny = deny or {}
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        if request.tool in self.deny:
            return ApprovalAnswer(decision="deny", reason=self.deny[request.tool])
        return ApprovalAnswer(decision="approve")


def make_ctx(
    work: Path,
    task: str,
    responder: Any,
    events: list[Event],
    *,
    agent: AgentDefinition | None = None,
    sandbox: bool = True,
    rules: RuleStore | None = None,
) -> StepContext:
    policy: dict[str, PolicyValue] = {"read": "ask", "edit": "ask", "write": "ask", "bash": "ask"}
    settings = Settings(policy=policy, sandbox=SandboxSettings(enabled=sandbox))
    clock = RunClock()
    gate = ApprovalGate(policy, responder, events.append, clock.now, rules=rules)
    return StepContext(
        run_id="r1",
        step=0,
        agent=agent or tiny_agent(),
        task=task,
        cwd=work,
        model=None,
        tools=("read", "edit", "bash"),
        settings=settings,
        approvals=gate,
        clock=clock,
    )


async def run_step(ctx: StepContext, events: list[Event]) -> StepFinished:
    async with contextlib.aclosing(AcpBackend().run(ctx)) as stream:
        async for event in stream:
            events.append(event)
    finished = events[-1]
    assert isinstance(finished, StepFinished)
    return finished


def text(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha beta\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_read_edit_and_run_go_through_the_gate_and_the_file_tools(
    work: Path, sandbox: bool
) -> None:
    if sandbox and not sandbox_status().active:
        pytest.skip("bubblewrap is not available here")
    events: list[Event] = []
    person = Person()
    task = "READ notes.txt\nWRITE out.txt hello from acp\nRUN cat out.txt"
    finished = await run_step(make_ctx(work, task, person, events, sandbox=sandbox), events)

    assert finished.status == "ok", finished.error
    assert (work / "out.txt").read_text(encoding="utf-8") == "hello from acp"
    said = text(events)
    assert "content: alpha beta" in said
    assert "ran: exit 0: hello from acp" in said
    assert finished.output == "ran: exit 0: hello from acp"
    # Sparse calls were merged: the rows and the questions carry the input sent later.
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [s.tool for s in started] == ["read", "edit", "bash"]
    assert started[0].arguments == {"filePath": "notes.txt"}  # the agent's input, as it sent it
    assert started[2].arguments["command"] == "cat out.txt"
    assert [r.tool for r in person.asked] == ["read", "edit", "bash"]
    assert person.asked[2].arguments["command"] == "cat out.txt"
    diffs = [e.chunk for e in events if isinstance(e, ToolCallOutput)]
    assert any("+hello from acp" in d for d in diffs)
    finished_calls = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [c.status for c in finished_calls] == ["ok", "ok", "ok"]
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [(r.decision, r.decided_by) for r in resolved] == [("approve", "person")] * 3
    assert any(isinstance(e, ThinkingDelta) for e in events)
    logs = [e.message for e in events if isinstance(e, Log)]
    assert any(m.startswith("plan:\n[~] do the task") for m in logs)
    assert any("usage: —" in m for m in logs)
    where = "runs sandboxed (bubblewrap)" if sandbox else "not sandboxed"
    assert any(where in m for m in logs)


async def test_a_denial_reason_reaches_the_agent_as_the_next_prompt(work: Path) -> None:
    events: list[Event] = []
    person = Person(deny={"bash": "not on a Friday"})
    ctx = make_ctx(work, "RUN touch made.txt", person, events)
    finished = await run_step(ctx, events)

    assert finished.status == "ok"
    assert not (work / "made.txt").exists()
    said = text(events)
    assert "echo: Your bash call was refused. Denied by the user: not on a Friday" in said
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [(r.decision, r.reason) for r in resolved] == [("deny", "not on a Friday")]
    done = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [d.status for d in done] == ["error"]


async def test_a_project_rule_allows_without_asking(work: Path) -> None:
    store = RuleStore()
    store.add(work, "allow", "Bash(cat:*)")
    events: list[Event] = []
    person = Person()
    ctx = make_ctx(work, "RUN cat notes.txt", person, events, rules=store)
    finished = await run_step(ctx, events)

    assert finished.status == "ok"
    assert person.asked == []
    assert "ran: exit 0: alpha beta" in text(events)
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [(r.decision, r.decided_by, r.rule) for r in resolved] == [
        ("approve", "rule", "allow Bash(cat:*)")
    ]


async def test_the_agent_cannot_write_into_batons_folders_or_outside(
    work: Path, tmp_path: Path
) -> None:
    """The attack: a hostile agent names Baton's data folder (refused before anyone is asked),
    then a path outside the working folder (the file tools refuse it even when approved)."""
    target = data_dir() / "runs" / "forged.jsonl"
    outside = tmp_path / "outside.txt"
    events: list[Event] = []
    person = Person()
    await run_step(make_ctx(work, f"WRITE {target} forged", person, events), events)
    assert not target.exists()
    assert person.asked == []
    assert "Baton's own settings or data folder" in text(events)

    events = []
    await run_step(make_ctx(work, f"WRITE {outside} escaped", person, events), events)
    assert not outside.exists()


async def test_secrets_stay_out_of_the_agent_and_its_reads_stay_inside(
    work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: a hostile agent looks for a token in its environment, then reads a file
    outside the working folder and Baton's own settings through the client's file method."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_not_for_the_agent_123")
    (tmp_path / "outside.txt").write_text("OUTSIDE-SECRET", encoding="utf-8")
    settings_file = data_dir() / "settings-copy.txt"
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text("BATON-PRIVATE", encoding="utf-8")
    task = f"ENV GITHUB_TOKEN\nCAT ../outside.txt\nCAT {settings_file}"
    events: list[Event] = []
    finished = await run_step(make_ctx(work, task, Person(), events), events)
    said = text(events)
    assert finished.status == "ok"
    assert "env GITHUB_TOKEN=None" in said
    assert "ghp_not_for_the_agent" not in said
    assert "OUTSIDE-SECRET" not in said and "BATON-PRIVATE" not in said
    assert said.count("refused:") == 2


async def test_a_policy_that_denies_bash_also_closes_the_client_s_terminal(work: Path) -> None:
    """The attack: an agent that skips the permission question and asks the client to run a
    command itself. A *deny* policy holds there too; the working folder is untouched."""
    events: list[Event] = []
    ctx = make_ctx(work, "TERM touch made.txt", Person(), events)
    ctx.approvals._policy["bash"] = "deny"
    await run_step(ctx, events)
    assert "refused:" in text(events) and "policy denies bash" in text(events)
    assert not (work / "made.txt").exists()


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_cancel_ends_the_agent_and_what_it_started(work: Path, sandbox: bool) -> None:
    if sandbox and not sandbox_status().active:
        pytest.skip("bubblewrap is not available here")
    events: list[Event] = []
    ctx = make_ctx(work, "HANG", Person(), events, sandbox=sandbox)
    backend = AcpBackend()
    hanging = asyncio.Event()

    async def consume() -> None:
        async with contextlib.aclosing(backend.run(ctx)) as stream:
            async for event in stream:
                events.append(event)
                if isinstance(event, TextDelta) and "hanging" in event.text:
                    hanging.set()

    task = asyncio.create_task(consume())
    async with asyncio.timeout(60):
        await hanging.wait()
    ctx.cancelled.set()
    async with asyncio.timeout(60):
        await task

    finished = events[-1]
    assert isinstance(finished, StepFinished) and finished.status == "aborted"
    leftovers = [
        p
        for p in psutil.process_iter(["cmdline"])
        if (p.info["cmdline"] or [])[:2] == ["sleep", "600"]
        or "acp_agent.py" in " ".join(p.info["cmdline"] or [])
    ]
    assert [p for p in leftovers if p.is_running() and p.status() != "zombie"] == []


async def test_steering_is_the_next_prompt_of_the_same_session(work: Path) -> None:
    events: list[Event] = []
    ctx = make_ctx(work, "first", Person(), events)
    ctx.inbox.open()  # the runner's put happens while the step runs; here before the turn ends
    ctx.inbox.put("and then this")
    finished = await run_step(ctx, events)
    assert "echo: first" in text(events)
    assert finished.output == "echo: and then this"


async def test_usage_the_agent_reports_is_counted(work: Path) -> None:
    events: list[Event] = []
    ctx = make_ctx(work, "hello", Person(), events, agent=tiny_agent(ACP_TEST_USAGE="1"))
    await run_step(ctx, events)
    usage = [e.usage for e in events if isinstance(e, Usage)]
    assert [(u.input, u.output, u.turns) for u in usage] == [(100, 20, 1)]


async def test_a_missing_agent_says_how_to_install_it(work: Path) -> None:
    agent = AgentDefinition(
        name="oc", description="d", backend="acp", acp=parse_acp_field("opencode")
    )
    events: list[Event] = []
    ctx = make_ctx(work, "x", Person(), events, agent=agent)
    ctx.agent.acp.env["PATH"] = str(work)  # type: ignore[union-attr]
    with pytest.raises(BackendError, match="npm install -g opencode-ai"):
        await run_step(ctx, events)


def test_options_are_chosen_by_kind_not_id() -> None:
    options = [
        PermissionOption(option_id="approved", name="Yes", kind="allow_once"),
        PermissionOption(option_id="abort", name="No", kind="reject_once"),
        PermissionOption(option_id="forever", name="Always", kind="allow_always"),
    ]
    assert choose_option(options, approved=True) == "approved"
    assert choose_option(options, approved=False) == "abort"
    assert choose_option(options[2:], approved=True) == "forever"
    assert choose_option(options[2:], approved=False) is None


def test_agent_files_name_an_acp_agent() -> None:
    agent = parse_agent_text(
        "---\nname: coder\ndescription: d\nacp: {command: opencode, args: [acp], "
        "env: {OPENCODE_DISABLE_AUTOUPDATE: 1}}\n---\nBe brief."
    )
    assert agent.backend == "acp"
    assert agent.acp is not None and agent.acp.args == ("acp",)
    assert agent.acp.env == {"OPENCODE_DISABLE_AUTOUPDATE": "1"}
    known = parse_agent_text("---\nname: g\ndescription: d\nbackend: acp\nacp: gemini\n---\n")
    assert known.acp == known_acp_agent("gemini").command  # type: ignore[union-attr]
    from core.definitions.agents import AgentFileError

    with pytest.raises(AgentFileError, match="not a known ACP agent"):
        parse_agent_text("---\nname: g\ndescription: d\nacp: nonesuch\n---\n")


def test_the_sdk_adds_no_spans_of_its_own_to_a_run_s_trace() -> None:
    """With OpenTelemetry installed the SDK would open a span per JSON-RPC message; Baton's
    backend turns that off, so a run's trace is Baton's alone."""
    from acp import telemetry

    assert isinstance(telemetry.span_context("acp.notification"), contextlib.nullcontext)
