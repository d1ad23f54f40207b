"""Runner semantics (architecture: "Runner") with a scripted in-process backend.

These tests pin down the runner's own rules — hand-over, fail-fast, limits, cancel, time limit,
usage sums, trust — independent of any network. The same rules against the real HTTP backend
and the scripted LLM server are in ``test_run_end_to_end.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import ClassVar

import pytest

from core.backends.base import BackendError, StepContext
from core.config import paths
from core.config.settings import DEFAULT_POLICY, Limits, Settings
from core.history.run_export import state_to_markdown
from core.model.errors import RunError
from core.model.events import (
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UsageStats,
)
from core.record.run_files import RunIndex, load_run
from core.record.run_state import TextBlock, fold
from core.run.run_request import RunRequest, StepSpec, preset_request
from core.run.runner import Runner
from core.safety.approvals import ApprovalAnswer, ApprovalGate, ApprovalRequest
from core.safety.trust import TrustStore
from core.safety.untrusted import UntrustedProjectError

Script = Callable[[StepContext], AsyncGenerator[Event, None]]


class ScriptedBackend:
    """A backend whose behaviour per step is a coroutine generator chosen by the test."""

    name: ClassVar[str] = "scripted"
    cancel_grace_s: ClassVar[float] = 0.0

    def __init__(self, script: Script) -> None:
        self._script = script

    def run(self, ctx: StepContext) -> AsyncGenerator[Event, None]:
        return self._script(ctx)


def echo_script(ctx: StepContext) -> AsyncGenerator[Event, None]:
    async def steps() -> AsyncGenerator[Event, None]:
        yield ctx.make(TextDelta, text="working… ")
        yield ctx.make(
            Usage, usage=UsageStats(turns=1, input=100, output=10, cost=0.01, model="m1")
        )
        answer = f"[{ctx.agent.name}] {ctx.task}"
        yield ctx.make(TextDelta, text=answer)
        yield ctx.make(StepFinished, status="ok", output=answer)

    return steps()


def make_runner(
    request: RunRequest, script: Script, **kwargs: object
) -> tuple[Runner, list[Event]]:
    events: list[Event] = []
    runner = Runner(
        request,
        settings=kwargs.pop("settings", Settings()),  # type: ignore[arg-type]
        listeners=[events.append],
        backend_factory=lambda name: ScriptedBackend(script),
        **kwargs,  # type: ignore[arg-type]
    )
    return runner, events


def chain(tmp_path: Path, *steps: tuple[str, str], mode: str = "chain") -> RunRequest:
    return RunRequest(
        mode=mode,  # type: ignore[arg-type]
        steps=[StepSpec(agent=a, task=t) for a, t in steps],
        cwd=tmp_path,
    )


async def test_chain_hands_the_previous_final_output_on(tmp_path: Path) -> None:
    runner, events = make_runner(
        chain(tmp_path, ("scout", "find auth"), ("planner", "plan from: {previous}")),
        echo_script,
    )
    result = await runner.run()
    assert result.status == "ok"
    started = [e for e in events if isinstance(e, StepStarted)]
    assert started[1].task == "plan from: [scout] find auth"
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)


async def test_usage_is_summed_per_step_and_per_run(tmp_path: Path) -> None:
    runner, events = make_runner(
        chain(tmp_path, ("scout", "a"), ("planner", "b"), ("worker", "c")), echo_script
    )
    result = await runner.run()
    finished = [e for e in events if isinstance(e, StepFinished)]
    assert [f.usage.input for f in finished] == [100, 100, 100]
    assert result.usage.turns == 3
    assert result.usage.input == 300
    assert result.usage.cost == pytest.approx(0.03)
    assert result.usage.line() == "3 turns ↑300 ↓30 $0.0300 m1"


async def test_chain_stops_at_the_first_failing_step(tmp_path: Path) -> None:
    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            if ctx.agent.name == "planner":
                yield ctx.make(StepFinished, status="error", error="model refused")
            else:
                async for event in echo_script(ctx):
                    yield event

        return steps()

    runner, events = make_runner(
        chain(tmp_path, ("scout", "a"), ("planner", "b"), ("worker", "c")), script
    )
    result = await runner.run()
    assert result.status == "error"
    assert result.error == "Chain stopped at step 2 (planner): model refused"
    assert [e.agent for e in events if isinstance(e, StepStarted)] == ["scout", "planner"]
    state = fold(events)
    assert [s.phase for s in state.steps] == ["ok", "error", "not_run"]


async def test_backend_error_before_any_event_fails_the_step_with_its_message(
    tmp_path: Path,
) -> None:
    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            raise BackendError("pi is not installed")
            yield  # pragma: no cover - makes this an async generator

        return steps()

    runner, _ = make_runner(chain(tmp_path, ("scout", "a")), script)
    result = await runner.run()
    assert result.error == "Chain stopped at step 1 (scout): pi is not installed"


async def test_a_crashing_backend_becomes_a_step_error_not_a_crash(tmp_path: Path) -> None:
    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            yield ctx.make(TextDelta, text="partial")
            raise KeyError("boom")

        return steps()

    runner, _ = make_runner(chain(tmp_path, ("scout", "a"), mode="single"), script)
    result = await runner.run()
    assert result.status == "error"
    assert "internal error" in (result.error or "") and "boom" in (result.error or "")


async def test_parallel_limits_tasks_and_concurrency(tmp_path: Path) -> None:
    running = 0
    peak = 0
    release = asyncio.Event()

    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            if peak == 4:
                release.set()
            await release.wait()
            running -= 1
            yield ctx.make(StepFinished, status="ok", output=ctx.task)

        return steps()

    request = chain(tmp_path, *[("scout", f"t{i}") for i in range(8)], mode="parallel")
    runner, events = make_runner(request, script)
    result = await runner.run()
    assert result.status == "ok"
    assert peak == 4
    assert len([e for e in events if isinstance(e, StepFinished)]) == 8

    too_many = chain(tmp_path, *[("scout", f"t{i}") for i in range(9)], mode="parallel")
    with pytest.raises(RunError, match="too many parallel tasks"):
        make_runner(too_many, script)[0].prepare()


async def test_parallel_failure_does_not_stop_the_others(tmp_path: Path) -> None:
    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            if ctx.task == "bad":
                yield ctx.make(StepFinished, status="error", error="nope")
            else:
                yield ctx.make(StepFinished, status="ok", output="fine")

        return steps()

    runner, events = make_runner(
        chain(tmp_path, ("scout", "ok1"), ("scout", "bad"), ("scout", "ok2"), mode="parallel"),
        script,
    )
    result = await runner.run()
    assert result.status == "error"
    assert result.error == "1 of 3 parallel tasks failed: task 2 (scout): nope"
    assert fold(events).progress_line() == "3/3 done"


async def test_cancel_reaches_every_running_step_and_closes_open_calls(tmp_path: Path) -> None:
    started = asyncio.Event()
    cleaned_up: list[int] = []

    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            try:
                yield ctx.make(
                    ToolCallStarted,
                    call_id=f"c{ctx.step}",
                    tool="bash",
                    arguments={"command": "sleep 100"},
                )
                yield ctx.make(TextDelta, text="never finished")
                started.set()
                await asyncio.Event().wait()
                yield ctx.make(StepFinished, status="ok")  # pragma: no cover
            finally:
                cleaned_up.append(ctx.step)

        return steps()

    runner, events = make_runner(
        chain(tmp_path, ("scout", "a"), ("scout", "b"), mode="parallel"), script
    )
    task = asyncio.create_task(runner.run())
    await started.wait()
    runner.cancel()
    result = await asyncio.wait_for(task, timeout=120)
    assert result.status == "aborted"
    assert sorted(cleaned_up) == [0, 1]
    closed = [e for e in events if isinstance(e, ToolCallFinished)]
    assert {e.call_id for e in closed} == {"c0", "c1"}
    assert all(e.status == "aborted" for e in closed)
    finished = [e for e in events if isinstance(e, StepFinished)]
    assert [f.status for f in finished] == ["aborted", "aborted"]
    assert all(f.output == "never finished" for f in finished)


async def test_graceful_cancel_lets_the_backend_finish_itself(tmp_path: Path) -> None:
    class Graceful(ScriptedBackend):
        cancel_grace_s: ClassVar[float] = 5.0

    first_text = asyncio.Event()

    async def steps(ctx: StepContext) -> AsyncGenerator[Event, None]:
        yield ctx.make(TextDelta, text="started")
        first_text.set()
        await ctx.cancelled.wait()
        yield ctx.make(TextDelta, text=" — interrupted politely")
        yield ctx.make(StepFinished, status="aborted", output="bye")

    events: list[Event] = []
    runner = Runner(
        chain(tmp_path, ("scout", "a"), mode="single"),
        settings=Settings(),
        listeners=[events.append],
        backend_factory=lambda name: Graceful(steps),
    )
    task = asyncio.create_task(runner.run())
    await first_text.wait()
    runner.cancel()
    result = await asyncio.wait_for(task, timeout=120)
    assert result.status == "aborted"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).endswith("politely")


async def test_step_time_limit_ends_a_slow_step_with_a_clear_error(tmp_path: Path) -> None:
    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            await asyncio.Event().wait()
            yield ctx.make(StepFinished, status="ok")  # pragma: no cover

        return steps()

    settings = Settings(limits=Limits(step_timeout_s=0.05))
    runner, _ = make_runner(chain(tmp_path, ("scout", "a")), script, settings=settings)
    result = await runner.run()
    assert result.error == (
        "Chain stopped at step 1 (scout): the step ran longer than its 0.05 s time limit"
    )


async def test_model_choice_override_then_agent_then_default(tmp_path: Path) -> None:
    agents_dir = paths.config_dir() / "agents"
    agents_dir.mkdir(parents=True)
    (agents_dir / "pinned.md").write_text(
        "---\nname: pinned\ndescription: d\nmodel: agent-model\n---\n", encoding="utf-8"
    )
    settings = Settings(default_model="default-model")
    request = chain(tmp_path, ("pinned", "a"), ("scout", "b"))
    runner, events = make_runner(request, echo_script, settings=settings)
    await runner.run()
    assert [e.model for e in events if isinstance(e, StepStarted)] == [
        "agent-model",
        "default-model",
    ]
    request.model = "override"
    runner, events = make_runner(request, echo_script, settings=settings)
    await runner.run()
    assert [e.model for e in events if isinstance(e, StepStarted)] == ["override", "override"]


async def test_unknown_agent_is_refused_before_anything_runs(tmp_path: Path) -> None:
    runner, events = make_runner(chain(tmp_path, ("scout", "a"), ("ghost", "b")), echo_script)
    with pytest.raises(RunError, match=r"step 2: unknown agent 'ghost' \(available: .*scout"):
        await runner.run()
    assert events == []


def test_preset_arguments_and_unknown_preset(tmp_path: Path) -> None:
    request, *_ = preset_request("implement", ["add", "a flag"], tmp_path)
    assert request.mode == "chain"
    assert request.steps[0].task == "Find all code relevant to: $@"  # the template
    assert request.steps[0].args == ("add", "a flag")
    runner = Runner(request, record=False)
    runner.prepare()
    planned = runner._steps
    assert planned is not None
    assert planned[0].task == "Find all code relevant to: add a flag"
    assert "{previous}" in planned[1].task
    with pytest.raises(
        RunError, match=r"unknown preset 'nope' \(available: best-of-3, fan-in, implement"
    ):
        preset_request("nope", [], tmp_path)
    with pytest.raises(RunError, match="needs 1 argument"):
        preset_request("implement", [], tmp_path)


async def test_run_is_saved_and_indexed(tmp_path: Path) -> None:
    runner, events = make_runner(chain(tmp_path, ("scout", "a")), echo_script)
    result = await runner.run()
    record = RunIndex().get(runner.run_id)
    assert record is not None
    assert record.status == "ok"
    assert record.usage == result.usage
    assert load_run(Path(record.path)) == events


async def test_secrets_never_reach_the_run_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value-123")

    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            yield ctx.make(TextDelta, text="key is sk-test-secret-value-123 ok")
            yield ctx.make(TextDelta, text=" Authorization: Bearer abcdefghijklmnop")
            yield ctx.make(StepFinished, status="ok")

        return steps()

    runner, _ = make_runner(chain(tmp_path, ("scout", "a")), script)
    await runner.run()
    saved = (paths.data_dir() / "runs" / f"{runner.run_id}.jsonl").read_text(encoding="utf-8")
    assert "sk-test-secret-value-123" not in saved
    assert "abcdefghijklmnop" not in saved
    assert saved.count("[redacted]") == 2


async def test_the_runs_state_is_its_published_stream_folded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state the runner decides with is the one the window shows: the redacted events,
    folded as they are published (nothing secret in it, the same as the run file's fold)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value-123")
    seen: list[int] = []

    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            yield ctx.make(TextDelta, text="key is sk-test-secret-value-123 ok")
            yield ctx.make(StepFinished, status="ok", output="done")

        return steps()

    runner, events = make_runner(chain(tmp_path, ("scout", "a")), script)
    # A subscriber hears of an event once it is in the state.
    runner.listeners.append(lambda event: seen.append(runner.state.events))
    await runner.run()

    assert seen == list(range(1, len(events) + 1))
    saved = load_run(paths.data_dir() / "runs" / f"{runner.run_id}.jsonl")
    assert state_to_markdown(runner.state) == state_to_markdown(fold(saved))
    assert runner.state.events == len(saved)
    answer = runner.state.steps[0].items[0]
    assert isinstance(answer, TextBlock)
    assert answer.text == "key is [redacted] ok"


async def test_a_step_ended_without_a_result_hands_on_all_its_text(tmp_path: Path) -> None:
    """The partial answer is read from the published state: what redaction still held (a
    trailing "b" might begin "Bearer …") is published first, not lost."""

    def script(ctx: StepContext) -> AsyncGenerator[Event, None]:
        async def steps() -> AsyncGenerator[Event, None]:
            yield ctx.make(TextDelta, text="the answer is b")

        return steps()

    runner, events = make_runner(chain(tmp_path, ("scout", "a")), script)
    await runner.run()

    ending = next(e for e in events if isinstance(e, StepFinished))
    assert ending.status == "error"
    assert ending.output == "the answer is b"


async def test_project_agents_need_trust(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude" / "agents").mkdir(parents=True)
    agent_file = project / ".claude" / "agents" / "local.md"
    agent_file.write_text("---\nname: local\ndescription: d\n---\nhi\n", encoding="utf-8")
    request = chain(project, ("local", "a"))
    with pytest.raises(UntrustedProjectError, match="--trust-project"):
        make_runner(request, echo_script)[0].prepare()

    TrustStore().trust(project)
    make_runner(request, echo_script)[0].prepare()

    agent_file.write_text("---\nname: local\ndescription: changed\n---\nhi\n", encoding="utf-8")
    with pytest.raises(UntrustedProjectError):
        make_runner(request, echo_script)[0].prepare()

    request.trust_project = True
    runner, _ = make_runner(request, echo_script)
    assert (await runner.run()).status == "ok"


async def test_builtin_agents_in_an_untrusted_project_run_without_asking(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".pi" / "agents").mkdir(parents=True)
    (project / ".pi" / "agents" / "x.md").write_text(
        "---\nname: x\ndescription: d\n---\n", encoding="utf-8"
    )
    runner, _ = make_runner(chain(project, ("scout", "a")), echo_script)
    assert (await runner.run()).status == "ok"


async def test_flagged_calls_ask_even_when_the_policy_allows() -> None:
    asked: list[ApprovalRequest] = []

    async def responder(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(decision="deny", reason="outside the project")

    gate = ApprovalGate(dict(DEFAULT_POLICY), responder, lambda event: None, lambda: 0.0)
    common = {"run_id": "r", "step": 0, "agent": "a", "call_id": "c", "cwd": "/w"}
    read = {"tool": "read", "arguments": {"path": "/etc/passwd"}}
    assert (await gate.check(**common, **read)).approved  # type: ignore[arg-type]
    answer = await gate.check(**common, **read, flagged=True)  # type: ignore[arg-type]
    assert answer.reason == "outside the project" and len(asked) == 1
