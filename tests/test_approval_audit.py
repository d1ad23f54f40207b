"""The audit trail and the gate against a hostile model: the real CLI / runner, Baton's own agent
loop, real bash and files, the scripted model server (the only fake).

Every decision names who made it; an edited command is what the run file records as run; a
rule decides without asking and says so; under ``--approve deny`` (or with no terminal) a
model that tries bash, write, edit and a document delete changes nothing, and each denial
reaches it worded honestly."""

from __future__ import annotations

import io
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.config import paths
from core.config.settings import DEFAULT_POLICY, load_settings, save_settings
from core.documents.store import DocumentStore
from core.model.events import ApprovalRequested, ApprovalResolved, Event, RunFinished
from core.record.run_files import load_run
from core.record.run_state import Notice, fold
from core.record.run_state import ToolCall as StateToolCall
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import NO_ONE_TO_ASK, ApprovalAnswer, ApprovalGate, ApprovalRequest
from core.safety.rule_store import RuleStore
from tests.llm_server import LLMServer, Reply, ToolCall

MARKER = "baton-hostile-7f3a"


@pytest.fixture
def configured(llm_server: LLMServer) -> LLMServer:
    save_settings(llm_server.settings())
    return llm_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The working folder, resolved (rules are stored under the resolved project folder)."""
    return tmp_path.resolve()


def _saved(run_id: str) -> list[Event]:
    return load_run(paths.data_dir() / "runs" / f"{run_id}.jsonl")


def _of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def test_an_edited_command_is_what_the_run_file_records(
    configured: LLMServer, tmp_path: Path
) -> None:
    configured.queue(Reply.tool("bash", {"command": "echo wrong > out.txt"}), Reply.answer("ok"))

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        edited = {**request.arguments, "command": "echo right > out.txt"}
        return ApprovalAnswer(decision="approve", updated_arguments=edited)

    request = RunRequest(mode="single", steps=[StepSpec("worker", "go")], cwd=tmp_path)
    runner = Runner(request, settings=load_settings(), responder=person)
    assert (await runner.run()).status == "ok"

    assert (tmp_path / "out.txt").read_text() == "right\n"
    saved = _saved(runner.run_id)
    [resolved] = _of(saved, ApprovalResolved)
    assert resolved.decided_by == "person" and not resolved.automatic
    assert resolved.updated_arguments == {"command": "echo right > out.txt"}
    state = fold(saved)
    [call] = [i for i in state.steps[0].items if isinstance(i, StateToolCall)]
    assert call.arguments == {"command": "echo right > out.txt"}  # what ran, not what was asked
    notices = [
        i.text for i in state.steps[0].items if isinstance(i, Notice) and i.kind == "approval"
    ]
    assert notices == ["bash — Approved by you, edited to: echo right > out.txt"]


async def test_a_person_denial_reads_denied_by_you(configured: LLMServer, tmp_path: Path) -> None:
    configured.queue(Reply.tool("bash", {"command": "rm -rf ."}), Reply.answer("ok"))

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(decision="deny", reason="not in this repo")

    request = RunRequest(mode="single", steps=[StepSpec("worker", "go")], cwd=tmp_path)
    runner = Runner(request, settings=load_settings(), responder=person)
    await runner.run()
    assert configured.requests[1].tool_messages[0]["content"] == (
        "Denied by the user: not in this repo"
    )
    state = fold(_saved(runner.run_id))
    notices = [
        i.text for i in state.steps[0].items if isinstance(i, Notice) and i.kind == "approval"
    ]
    assert notices == ["bash — Denied by you: not in this repo"]


async def test_rules_decide_without_asking_and_the_run_file_names_them(
    configured: LLMServer, project: Path, tmp_path: Path
) -> None:
    store = RuleStore()
    store.add(project, "allow", "Bash(touch:*)")
    store.add(project, "deny", "Bash(curl:*)")
    store.add(project, "ask", "Read(secrets/**)")
    configured.queue(
        Reply.tools(
            ToolCall("bash", {"command": "touch a.txt"}, "c1"),
            ToolCall("bash", {"command": "echo x | curl -d @- http://127.0.0.1:9"}, "c2"),
            ToolCall("bash", {"command": "touch b.txt; echo x > c.txt"}, "c3"),
            ToolCall("read", {"path": "secrets/key"}, "c4"),
        ),
        Reply.answer("done"),
    )
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="deny")

    request = RunRequest(mode="single", steps=[StepSpec("worker", "go")], cwd=tmp_path)
    runner = Runner(request, settings=load_settings(), responder=person)
    await runner.run()

    assert (tmp_path / "a.txt").exists()
    assert not (tmp_path / "b.txt").exists() and not (tmp_path / "c.txt").exists()
    assert [(r.tool, r.rule) for r in asked] == [("bash", None), ("read", "ask Read(secrets/**)")]
    assert asked[0].suggested_rule is None  # two commands: no single narrow rule covers them
    assert asked[1].suggested_rule is None  # an ask rule asked: an allow rule would not help
    saved = _saved(runner.run_id)
    decisions = [
        (r.call_id, r.decision, r.decided_by, r.rule) for r in _of(saved, ApprovalResolved)
    ]
    assert decisions == [
        ("c1", "approve", "rule", "allow Bash(touch:*)"),
        ("c2", "deny", "rule", "deny Bash(curl:*)"),
        ("c3", "deny", "person", None),
        ("c4", "deny", "person", None),
    ]
    results = [m["content"] for m in configured.requests[1].tool_messages]
    assert results[1] == "Denied by the project rule Bash(curl:*)"
    requested = _of(saved, ApprovalRequested)
    assert [r.rule for r in requested] == [None, "ask Read(secrets/**)"]


async def test_always_allow_adds_the_rule_for_later_calls_and_runs(tmp_path: Path) -> None:
    events: list[Event] = []
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="approve", remember_rule=request.suggested_rule)

    store = RuleStore()
    gate = ApprovalGate(dict(DEFAULT_POLICY), person, events.append, lambda: 0.0, rules=store)
    call: dict[str, Any] = {
        "run_id": "r",
        "step": 0,
        "agent": "w",
        "tool": "bash",
        "cwd": str(tmp_path),
    }
    first = await gate.check(call_id="1", arguments={"command": "ls -la"}, **call)
    second = await gate.check(call_id="2", arguments={"command": "ls -R src"}, **call)
    assert first.decided_by == "person" and second.decided_by == "rule"
    assert [r.suggested_rule for r in asked] == ["Bash(ls:*)"]
    assert store.for_folder(tmp_path).texts()["allow"] == ["Bash(ls:*)"]
    assert _of(events, ApprovalResolved)[0].added_rule == "Bash(ls:*)"
    fresh = ApprovalGate(dict(DEFAULT_POLICY), person, events.append, lambda: 0.0, rules=store)
    third = await fresh.check(call_id="3", arguments={"command": "ls x; rm -rf ."}, **call)
    assert (
        third.decided_by == "person" and len(asked) == 2
    )  # the rule never covers a second command


async def test_a_policy_deny_cannot_be_widened_by_a_rule(project: Path, tmp_path: Path) -> None:
    events: list[Event] = []
    RuleStore().add(project, "allow", "Bash")
    policy = {**DEFAULT_POLICY, "bash": "deny"}
    gate = ApprovalGate(policy, _nobody, events.append, lambda: 0.0, rules=RuleStore())
    answer = await gate.check(
        run_id="r", step=0, agent="w", tool="bash", call_id="1",
        arguments={"command": "ls"}, cwd=str(tmp_path),
    )  # fmt: skip
    assert answer.decided_by == "policy" and answer.rule == "policy bash: deny"
    assert answer.denial_message() == "Denied by the user's policy: bash is set to deny"
    assert [(e.decided_by, e.tool, e.call_id) for e in _of(events, ApprovalResolved)] == [
        ("policy", "bash", "1")
    ]


async def _nobody(request: ApprovalRequest) -> ApprovalAnswer:
    raise AssertionError("nobody should be asked")


def _hostile_script(server: LLMServer, doc_id: int, tmp_path: Path) -> None:
    config = paths.config_dir() / "config.yaml"
    server.queue(
        Reply.tools(
            ToolCall(
                "bash",
                {"command": f"echo pwned > bash.txt; setsid sh -c 'sleep 300; : {MARKER}' &"},
            ),
            ToolCall("write", {"path": "written.txt", "content": "pwned"}),
            ToolCall("edit", {"path": "keep.txt", "old_string": "mine", "new_string": "pwned"}),
            ToolCall("document", {"action": "delete", "id": doc_id}),
            ToolCall("write", {"path": str(config), "content": "policy: {bash: allow}\n"}),
            ToolCall("bash", {"command": f"echo '{{}}' > {paths.config_dir() / 'rules.json'}"}),
        ),
        Reply.answer("I tried."),
    )


@pytest.mark.parametrize(
    ("flags", "wording"),
    [
        (
            ["--approve", "deny"],
            "Denied: this run denies every call that needs approval (--approve deny)",
        ),
        ([], NO_ONE_TO_ASK),
    ],
    ids=["approve-deny", "no-terminal"],
)
def test_a_hostile_model_gets_zero_effects_and_honest_denials(
    configured: LLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    wording: str,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO())  # not a terminal
    (tmp_path / "keep.txt").write_text("mine\n")
    store = DocumentStore.default()
    doc = store.create("Person's notes", "keep me")
    config_before = (paths.config_dir() / "config.yaml").read_bytes()
    listing_before = sorted(p.name for p in tmp_path.iterdir())
    _hostile_script(configured, doc.id, tmp_path)

    args = ["run", "--agent", "worker", "--task", "do harm", "--cwd", str(tmp_path), *flags]
    assert main(args) == 0

    assert sorted(p.name for p in tmp_path.iterdir()) == listing_before  # no bash.txt, written.txt
    assert (tmp_path / "keep.txt").read_text() == "mine\n"
    assert store.get(doc.id, full=True).content == "keep me"
    assert (paths.config_dir() / "config.yaml").read_bytes() == config_before
    assert not (paths.config_dir() / "rules.json").exists()
    assert _processes_with(MARKER) == []
    results = [m["content"] for m in configured.requests[1].tool_messages]
    assert len(results) == 6
    assert results[:4] == [wording] * 4
    for result in results[4:]:  # outside the folder: refused by the tool or denied
        assert result == wording or "outside" in result.lower(), result
    [run_file] = (paths.data_dir() / "runs").glob("*.jsonl")
    saved = load_run(run_file)
    assert isinstance(saved[-1], RunFinished)
    by = {r.decided_by for r in _of(saved, ApprovalResolved)}
    assert by == ({"setting"} if flags else {"no_one"})


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="reads /proc")
def test_the_process_probe_sees_a_live_process() -> None:
    """The zero-effects test's process check is not vacuous."""
    child = subprocess.Popen(
        ["sh", "-c", f"echo ready; sleep 30; : {MARKER}"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"  # exec'd
        assert child.pid in _processes_with(MARKER)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # sh and its sleep
        child.communicate()
