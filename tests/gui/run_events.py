"""Realistic event sequences for the run view: tests, benchmarks and screenshots share them.

:class:`RunBuilder` writes events the way the runner emits them (run_started, step wrappers,
deltas in small pieces, tool calls with streamed output, usage, run_finished with totals), so
what the view is tested with looks like a real run. The scenario functions at the bottom are
the runs the tests, ``benchmarks/ingest.py`` and ``docs/make_screenshots.py`` show.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    Log,
    PlannedStep,
    Retry,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    Usage,
    UsageStats,
)

CWD = "/home/dev/src/baton"
STARTED_AT = "2026-12-03T10:14:05+01:00"


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class RunBuilder:
    """Appends events to :attr:`events`, advancing a fake monotonic clock as it goes."""

    def __init__(self, run_id: str = "run-20261203-101405") -> None:
        self.run_id = run_id
        self.events: list[Event] = []
        self.now = 0.0
        self._calls = 0
        self._step_usage: dict[int, UsageStats] = {}
        self._total = UsageStats()
        self._agents: list[str] = []

    def _ts(self, seconds: float) -> float:
        self.now = round(self.now + seconds, 4)
        return self.now

    def start(
        self,
        mode: str,
        steps: list[tuple[str, str, str]],
        *,
        preset: str | None = None,
        args: list[str] | None = None,
    ) -> RunBuilder:
        """``steps``: (agent, task, model) triples."""
        self._agents = [agent for agent, _, _ in steps]
        planned = [PlannedStep(agent=a, task=t, model=m, cwd=CWD) for a, t, m in steps]
        self.events.append(
            RunStarted(
                run_id=self.run_id,
                mode=mode,
                preset=preset,
                args=args or [],
                steps=planned,
                cwd=CWD,
                started_at=STARTED_AT,
            )
        )
        return self

    def step_started(self, step: int, task: str, model: str) -> RunBuilder:
        self.events.append(
            StepStarted(
                run_id=self.run_id,
                step=step,
                ts=self._ts(0.05),
                agent=self._agents[step],
                task=task,
                model=model,
                cwd=CWD,
            )
        )
        return self

    def text(self, step: int, text: str, size: int = 14, delay: float = 0.02) -> RunBuilder:
        for piece in pieces(text, size):
            self.events.append(
                TextDelta(run_id=self.run_id, step=step, ts=self._ts(delay), text=piece)
            )
        return self

    def thinking(self, step: int, text: str, size: int = 24) -> RunBuilder:
        for piece in pieces(text, size):
            self.events.append(
                ThinkingDelta(run_id=self.run_id, step=step, ts=self._ts(0.02), text=piece)
            )
        return self

    def tool_started(self, step: int, tool: str, arguments: Mapping[str, object]) -> str:
        self._calls += 1
        call_id = f"call_{self._calls:04d}"
        self.events.append(
            ToolCallStarted(
                run_id=self.run_id,
                step=step,
                ts=self._ts(0.1),
                call_id=call_id,
                tool=tool,
                arguments=dict(arguments),
            )
        )
        return call_id

    def tool_output(self, step: int, call_id: str, chunk: str) -> RunBuilder:
        self.events.append(
            ToolCallOutput(
                run_id=self.run_id, step=step, ts=self._ts(0.03), call_id=call_id, chunk=chunk
            )
        )
        return self

    def tool_finished(
        self, step: int, call_id: str, result: str, status: str = "ok", seconds: float = 0.2
    ) -> RunBuilder:
        self.events.append(
            ToolCallFinished(
                run_id=self.run_id,
                step=step,
                ts=self._ts(seconds),
                call_id=call_id,
                status=status,
                result=result,
            )
        )
        return self

    def tool(
        self,
        step: int,
        tool: str,
        arguments: Mapping[str, object],
        result: str,
        *,
        output: list[str] | None = None,
        status: str = "ok",
        seconds: float = 0.2,
    ) -> str:
        call_id = self.tool_started(step, tool, arguments)
        for chunk in output or []:
            self.tool_output(step, call_id, chunk)
        self.tool_finished(step, call_id, result, status, seconds)
        return call_id

    def approval(
        self,
        step: int,
        call_id: str,
        tool: str,
        arguments: Mapping[str, object],
        decision: str = "",
    ) -> RunBuilder:
        request = f"approval-{call_id[-4:]}"
        self.events.append(
            ApprovalRequested(
                run_id=self.run_id,
                step=step,
                ts=self._ts(0.01),
                request_id=request,
                call_id=call_id,
                tool=tool,
                arguments=dict(arguments),
                agent=self._agents[step],
                cwd=CWD,
            )
        )
        if decision:
            self.events.append(
                ApprovalResolved(
                    run_id=self.run_id,
                    step=step,
                    ts=self._ts(1.4),
                    request_id=request,
                    decision=decision,
                )
            )
        return self

    def retry(self, step: int, attempt: int, error: str) -> RunBuilder:
        self.events.append(
            Retry(
                run_id=self.run_id,
                step=step,
                ts=self._ts(0.5),
                attempt=attempt,
                max_attempts=3,
                delay_ms=1000,
                error=error,
            )
        )
        return self

    def log(self, step: int, message: str, level: str = "info") -> RunBuilder:
        self.events.append(
            Log(run_id=self.run_id, step=step, ts=self._ts(0.01), level=level, message=message)
        )
        return self

    def usage(
        self,
        step: int,
        model: str,
        input: int,
        output: int,
        cost: float,
        parent_call_id: str | None = None,
        **more: int,
    ) -> RunBuilder:
        """``parent_call_id``: a sub-agent's usage (counted in the step, not its model)."""
        usage = UsageStats(turns=1, input=input, output=output, cost=cost, model=model, **more)
        part = usage if parent_call_id is None else usage.without_latest()
        self._step_usage[step] = self._step_usage.get(step, UsageStats()) + part
        self._total = self._total + part
        self.events.append(
            Usage(
                run_id=self.run_id,
                step=step,
                ts=self._ts(0.01),
                usage=usage,
                parent_call_id=parent_call_id,
            )
        )
        return self

    def step_finished(
        self,
        step: int,
        status: str = "ok",
        output: str = "",
        error: str | None = None,
        structured: dict[str, object] | None = None,
    ) -> RunBuilder:
        self.events.append(
            StepFinished(
                run_id=self.run_id,
                step=step,
                ts=self._ts(0.02),
                status=status,
                output=output,
                error=error,
                usage=self._step_usage.get(step, UsageStats()),
                structured=structured,
            )
        )
        return self

    def run_finished(self, status: str = "ok", error: str | None = None) -> RunBuilder:
        self.events.append(
            RunFinished(
                run_id=self.run_id,
                ts=self._ts(0.02),
                status=status,
                usage=self._total,
                error=error,
            )
        )
        return self


# -------------------------------------------------------------------------------- content

SONNET = "claude-sonnet-4-5"
HAIKU = "claude-haiku-4-5"

SCOUT_ANSWER = """## Files Retrieved

1. `core/commands/agents.py` (lines 1-88) - the `baton agents` sub-command
2. `core/display.py` (lines 10-64) - table formatting for the terminal
3. `tests/test_cli.py` (lines 120-180) - CLI tests to extend

## Key Code

```python
def handle(args: argparse.Namespace) -> int:
    catalog = discover_agents(Path.cwd(), args.scope)
    print(format_table(catalog.agents))
    return 0
```

## Start Here

`core/commands/agents.py`: `handle()` prints a table; a `--json` branch goes there.
"""

PLAN_ANSWER = """## Goal

Add a `--json` flag to `baton agents` that prints the catalog as JSON.

## Plan

| # | Change | File |
|---|--------|------|
| 1 | Add the `--json` flag to the parser | `core/commands/agents.py` |
| 2 | Serialise agents and diagnostics | `core/commands/agents.py` |
| 3 | Test both outputs | `tests/test_cli.py` |

## Risks

- Diagnostics must stay on **stderr** in table mode.
- [x] Keep the existing table output unchanged
- [ ] Document the flag in the README
"""

WORKER_ANSWER = """## Completed

`baton agents --json` now prints one JSON object:

```json
{"agents": [{"name": "scout", "source": "builtin"}], "diagnostics": []}
```

## Files Changed

| File | Lines |
|------|------:|
| `core/commands/agents.py` | +24 −3 |
| `tests/test_cli.py` | +31 |

## Notes

All **42 tests** pass; see the [CLI docs](https://example.com/baton/cli) for the flag.
"""

PYTEST_LINES = [
    "============================= test session starts ==============================\n",
    "collected 42 items\n",
    "\n",
    "tests/test_cli.py ........................                                [ 57%]\n",
    "tests/test_agents.py ..................                                   [100%]\n",
    "\n",
    "============================== 42 passed in 1.84s ==============================\n",
]


def start_implement(b: RunBuilder, goal: str) -> None:
    """The ``implement`` preset's three planned steps, with the scout started."""
    b.start(
        "chain",
        [
            ("scout", f"Find all code relevant to: {goal}", HAIKU),
            ("planner", f'Create an implementation plan for "{goal}"', SONNET),
            ("worker", "Implement this plan", SONNET),
        ],
        preset="implement",
        args=[goal],
    )
    b.step_started(0, f"Find all code relevant to: {goal}", HAIKU)


def finished_chain() -> list[Event]:
    """The ``implement`` preset run to completion: scout → planner → worker."""
    b = RunBuilder()
    goal = "add a --json flag to 'baton agents'"
    start_implement(b, goal)
    b.thinking(0, "The agents command lives in core/commands. Let me look at how it prints.")
    b.tool(0, "grep", {"pattern": "def handle", "path": "core/commands"}, "agents.py:12")
    b.tool(0, "read", {"path": "core/commands/agents.py"}, "def handle(args):\n    ...\n")
    b.tool(0, "read", {"path": "core/display.py"}, "def format_table(rows):\n    ...\n")
    b.usage(0, HAIKU, 8_200, 640, 0.0041, cache_read=3_100)
    b.text(0, SCOUT_ANSWER)
    b.usage(0, HAIKU, 9_900, 410, 0.0032, cache_read=8_000)
    b.step_finished(0, output=SCOUT_ANSWER)

    b.step_started(1, f'Create an implementation plan for "{goal}"', SONNET)
    b.thinking(1, "Three changes: parser flag, serialisation, tests. Keep stderr for diagnostics.")
    b.text(1, PLAN_ANSWER)
    b.usage(1, SONNET, 12_400, 980, 0.0519, cache_write=2_100)
    b.step_finished(1, output=PLAN_ANSWER)

    b.step_started(2, "Implement this plan", SONNET)
    b.thinking(2, "The plan is clear. Start with the parser flag, then run the CLI tests.")
    b.tool(2, "read", {"path": "core/commands/agents.py"}, "def handle(args):\n    ...\n")
    edit = {"path": "core/commands/agents.py", "old_text": "print(", "new_text": "emit("}
    call = b.tool_started(2, "edit", edit)
    b.approval(2, call, "edit", edit, decision="approve_run")
    b.tool_finished(2, call, "Edited core/commands/agents.py (+24 −3)")
    b.usage(2, SONNET, 15_800, 1_900, 0.0761, cache_read=11_000)
    b.tool(
        2,
        "bash",
        {"command": "python -m pytest -q tests/test_cli.py tests/test_agents.py"},
        "".join(PYTEST_LINES) + "\nexit code 0",
        output=PYTEST_LINES,
        seconds=1.9,
    )
    b.text(2, WORKER_ANSWER)
    b.usage(2, SONNET, 18_300, 720, 0.0612, cache_read=15_000)
    b.step_finished(2, output=WORKER_ANSWER)
    b.run_finished()
    return b.events


def failed_chain() -> list[Event]:
    """A chain whose planner fails after retries: step 3 is never run."""
    b = RunBuilder("run-20261203-113020")
    goal = "migrate settings to TOML"
    start_implement(b, goal)
    b.thinking(0, "Settings are YAML today; find every reader and writer of config.yaml.")
    b.tool(0, "find", {"pattern": "*settings*"}, "core/settings.py\ntests/test_settings.py")
    grep = [
        "core/settings.py:41:    CONFIG_NAME = 'config.yaml'\n",
        "core/settings.py:88:    data = yaml.safe_load(text) or {}\n",
        "core/settings.py:131:    text = yaml.safe_dump(data, sort_keys=False)\n",
        "tests/test_settings.py:17:    (tmp_path / 'config.yaml').write_text(...)\n",
    ]
    b.tool(0, "bash", {"command": "rg -n 'yaml' core/ tests/"}, "".join(grep), output=grep)
    b.tool(0, "read", {"path": "core/settings.py"}, "class Settings(BaseModel):\n    ...\n")
    answer = "## Files Retrieved\n\n1. `core/settings.py` - loading and saving `config.yaml`\n"
    b.text(0, answer)
    b.usage(0, HAIKU, 6_100, 380, 0.0029)
    b.step_finished(0, output=answer)
    b.step_started(1, f'Create an implementation plan for "{goal}"', SONNET)
    b.text(1, "## Goal\n\nMove the settings file from YAML to")
    b.retry(1, 1, "HTTP 500 from the provider: internal server error")
    b.text(1, "## Goal\n\nMove")
    b.retry(1, 2, "HTTP 500 from the provider: internal server error")
    error = "the provider answered HTTP 500 three times (internal server error)"
    b.log(1, "giving up after 3 attempts", "error")
    b.step_finished(1, "error", error=error)
    b.run_finished("error", f"Chain stopped at step 2 (planner): {error}")
    return b.events


def running_parallel(done: int = 2, running: int = 1, waiting: int = 0) -> list[Event]:
    """A parallel review still running: ``done`` tasks finished, ``running`` streaming,
    ``waiting`` paused on an approval."""
    b = RunBuilder("run-20261203-142211")
    areas = ["core/runner.py", "core/backends/", "gui/", "core/tools/"][: done + running + waiting]
    b.start(
        "parallel",
        [("reviewer", f"Review {area} for error handling gaps", SONNET) for area in areas],
    )
    for step, area in enumerate(areas):
        b.step_started(step, f"Review {area} for error handling gaps", SONNET)
    for step in range(done):
        b.tool(step, "grep", {"pattern": "except Exception", "path": areas[step]}, "2 matches")
        answer = (
            f"## Review of `{areas[step]}`\n\n- **Broad except** at line {40 + step * 17}: "
            "narrow it to `OSError`.\n- Errors reach the user as one sentence. Good.\n"
        )
        b.text(step, answer)
        b.usage(step, SONNET, 9_000 + step * 700, 520, 0.0301)
        b.step_finished(step, output=answer)
    for step in range(done, done + running):
        b.thinking(step, "Check that every subprocess is awaited and killed on cancel.")
        b.tool(step, "find", {"pattern": "*.py", "path": areas[step]}, "12 files")
        call = b.tool_started(step, "bash", {"command": f"rg -n 'create_subprocess' {areas[step]}"})
        for line in (
            "gui/app.py:88: proc = await asyncio.create_subprocess_exec(\n",
            "gui/model_probe.py:41: process = await asyncio.create_subprocess_exec(\n",
            "gui/window/welcome_panel.py:63: probe = await asyncio.create_subprocess_exec(\n",
        ):
            b.tool_output(step, call, line)
        b.text(step, "So far the subprocess handling looks careful; checking ")
        b.usage(step, SONNET, 7_400, 210, 0.0241)
    for step in range(done + running, done + running + waiting):
        b.tool(step, "grep", {"pattern": "subprocess", "path": areas[step]}, "4 matches")
        b.usage(step, SONNET, 6_900, 160, 0.0221)
        arguments = {"command": f"python -m pytest -q tests/tools -k {areas[step].strip('/')}"}
        call = b.tool_started(step, "bash", arguments)
        b.approval(step, call, "bash", arguments)
    return b.events


def waiting_for_approval() -> list[Event]:
    """A single worker paused on a bash approval."""
    b = RunBuilder("run-20261203-150102")
    b.start("single", [("worker", "Clean the build folder", SONNET)])
    b.step_started(0, "Clean the build folder", SONNET)
    arguments = {"command": "rm -rf build/"}
    call = b.tool_started(0, "bash", arguments)
    b.approval(0, call, "bash", arguments)
    return b.events


def many_items(count: int, step_finished: bool = True) -> list[Event]:
    """One step with ``count`` items (tool calls and text blocks alternating)."""
    b = RunBuilder("run-many")
    b.start("single", [("worker", "Touch many files", SONNET)])
    b.step_started(0, "Touch many files", SONNET)
    for i in range(count):
        if i % 2:
            b.text(0, f"Item {i}: done.", size=64)
        else:
            b.tool(0, "read", {"path": f"src/file_{i}.py"}, f"contents {i}")
    if step_finished:
        b.step_finished(0, output="done")
        b.run_finished()
    return b.events


def flood(total: int) -> list[Event]:
    """Exactly ``total`` events: a 3-step chain made of text deltas, thinking and tool calls
    with streamed output, the mix a long agent session produces."""
    b = RunBuilder("run-flood")
    steps = [("scout", "Map the code base", HAIKU), ("planner", "Plan", SONNET)]
    steps.append(("worker", "Do it", SONNET))
    b.start("chain", steps)
    content = total - 8  # run_started, 3 x (step_started, step_finished), run_finished
    paragraph = "The function `load` reads **settings** and validates them; see below. "
    for step in range(3):
        b.step_started(step, steps[step][1], steps[step][2])
        share = content // 3 if step < 2 else content - 2 * (content // 3)
        target = len(b.events) + share
        turn = 0
        while len(b.events) < target:
            left = target - len(b.events)
            turn += 1
            if turn % 4 == 0 and left >= 10:
                call = b.tool_started(step, "bash", {"command": f"pytest -q tests/t{turn}.py"})
                for line in range(min(20, left - 2)):
                    b.tool_output(step, call, f"tests/t{turn}.py::test_{line} PASSED\n")
                b.tool_finished(step, call, "20 passed")
            elif turn % 4 == 1 and left >= 30:
                b.thinking(step, paragraph * 2, size=20)
            else:
                text = f"\n\n### Part {turn}\n\n" + paragraph * 3
                for chunk in pieces(text, 8)[:left]:
                    b.events.append(
                        TextDelta(run_id=b.run_id, step=step, ts=b._ts(0.001), text=chunk)
                    )
        b.step_finished(step, output="done")
    b.run_finished()
    assert len(b.events) == total, len(b.events)
    return b.events
