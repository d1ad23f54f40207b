"""Two runs side by side, step by step: output diff, tool-call sequence, tokens, cost, duration
and files changed.

Steps are paired by position (step 1 with step 1 …): the runs being compared are normally the
same chain twice (a re-run, another model, a changed prompt), and a step missing on one side
is shown as missing rather than guessed at. Everything here is pure: it reads two folded runs
(:class:`core.record.run_state.RunState`) and returns data; ``baton runs compare`` prints it as
Markdown (:func:`comparison_markdown`) and the window's Compare view (:mod:`gui.compare`)
draws the same data.

Files changed come from the step's checkpoints (:mod:`core.workspace.checkpoints`: every file the
step
changed in its folder, ``bash`` included, with +/- line counts) when they were recorded; a run
without them (outside a working folder Baton could checkpoint, or recorded before checkpoints
existed) shows the paths its ``edit`` and ``write`` calls named instead.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from core.model.cost import format_cost, format_cost_delta
from core.model.events import UsageStats
from core.record.run_names import run_name
from core.record.run_state import RunState, StepState, TextBlock, ToolCall

FILE_TOOLS = ("edit", "write")
PATH_ARGUMENTS = ("path", "file_path")


@dataclass(frozen=True)
class StepSide:
    """One run's step, as compared."""

    agent: str
    phase: str
    output: str
    tools: list[str]
    """The tool-call sequence: ``bash: ls -la``, ``read: a.py`` …"""
    usage: UsageStats
    duration_s: float | None
    files: list[str] = field(default_factory=list)
    model: str = ""
    """The model the step ran with (what a re-run with another model changes)."""

    @property
    def tokens(self) -> int:
        return self.usage.input + self.usage.output


@dataclass(frozen=True)
class StepComparison:
    index: int
    left: StepSide | None
    right: StepSide | None
    output_diff: str
    """Unified diff of the two outputs ("" when they are the same or a side is missing)."""

    @property
    def same_output(self) -> bool:
        return self.left is not None and self.right is not None and not self.output_diff

    @property
    def same_tools(self) -> bool:
        return (
            self.left is not None
            and self.right is not None
            and (self.left.tools == self.right.tools)
        )


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    title: str
    status: str
    usage: UsageStats
    duration_s: float


@dataclass(frozen=True)
class RunComparison:
    left: RunSummary
    right: RunSummary
    steps: list[StepComparison]


def changed_files(step: StepState) -> list[str]:
    """``app.py +1 −1`` per file the step's checkpoints recorded; else the paths its file
    tools named."""
    if step.changes is not None:
        return [
            f"{change.path} +{change.added or 0} −{change.removed or 0}"
            if change.added is not None
            else f"{change.path} (binary)"
            for change in step.changes.files
        ]
    files: list[str] = []
    for call in step.items:
        if not isinstance(call, ToolCall) or call.superseded:
            continue
        if call.tool.lower() in FILE_TOOLS:
            path = next(
                (v for k in PATH_ARGUMENTS if isinstance(v := call.arguments.get(k), str)), None
            )
            if path and path not in files:
                files.append(path)
    return files


def step_side(step: StepState) -> StepSide:
    calls = [i for i in step.items if isinstance(i, ToolCall) and not i.superseded]
    answer = "".join(
        i.text
        for i in step.items
        if isinstance(i, TextBlock) and i.kind == "text" and not i.superseded
    )
    duration = (
        step.finished - step.started
        if step.started is not None and step.finished is not None
        else None
    )
    return StepSide(
        agent=step.agent,
        phase=step.phase,
        output=step.output or answer,
        tools=[f"{c.tool}: {c.key_argument}".rstrip(": ") for c in calls],
        usage=step.usage,
        duration_s=duration,
        files=changed_files(step),
        model=step.model or step.usage.model or "",
    )


def _summary(state: RunState) -> RunSummary:
    agents = [s.agent for s in state.steps]
    return RunSummary(
        run_id=state.run_id,
        title=run_name(state.mode, state.preset, state.args, agents) or state.run_id,
        status=state.status,
        usage=state.usage,
        duration_s=state.elapsed,
    )


def output_diff(left: str, right: str, left_name: str = "A", right_name: str = "B") -> str:
    """A unified diff of two outputs, line by line ("" when equal)."""
    return "".join(
        difflib.unified_diff(
            left.splitlines(keepends=True),
            right.splitlines(keepends=True),
            fromfile=left_name,
            tofile=right_name,
            n=2,
        )
    )


def compare_runs(left: RunState, right: RunState) -> RunComparison:
    steps: list[StepComparison] = []
    for index in range(max(len(left.steps), len(right.steps))):
        a = step_side(left.steps[index]) if index < len(left.steps) else None
        b = step_side(right.steps[index]) if index < len(right.steps) else None
        diff = (
            output_diff(
                _with_newline(a.output),
                _with_newline(b.output),
                f"{left.run_id} step {index + 1}",
                f"{right.run_id} step {index + 1}",
            )
            if a is not None and b is not None
            else ""
        )
        steps.append(StepComparison(index, a, b, diff))
    return RunComparison(_summary(left), _summary(right), steps)


def _with_newline(text: str) -> str:
    """Outputs end without a newline; one is added so the diff has no "no newline" notes."""
    return text if not text or text.endswith("\n") else text + "\n"


# -- Markdown -------------------------------------------------------------------------------


def _cost(usage: UsageStats) -> str:
    return format_cost(usage.cost, usage.priced)


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} s"


def _delta(a: float | None, b: float | None, unit: str = "") -> str:
    if a is None or b is None:
        return ""
    change = b - a
    if not change:
        return "="
    return format_cost_delta(change) if unit == "$" else f"{change:+,.0f}{unit}"


def comparison_markdown(comparison: RunComparison) -> str:
    """The comparison as Markdown: a totals table, then per step a table and the output diff."""
    a, b = comparison.left, comparison.right
    out = [
        f"# Comparing {a.run_id} and {b.run_id}",
        "",
        "| | A | B |",
        "|---|---|---|",
        f"| Run | `{a.run_id}` {a.title} | `{b.run_id}` {b.title} |",
        f"| Status | {a.status} | {b.status} |",
        f"| Tokens | {a.usage.input + a.usage.output:,} | {b.usage.input + b.usage.output:,} |",
        f"| Cost | {_cost(a.usage)} | {_cost(b.usage)} |",
        f"| Duration | {_seconds(a.duration_s)} | {_seconds(b.duration_s)} |",
    ]
    for step in comparison.steps:
        out += ["", f"## Step {step.index + 1}", ""]
        left, right = step.left, step.right
        if left is None or right is None:
            present, side = (left, "A") if left is not None else (right, "B")
            assert present is not None
            out.append(f"Only in {side}: {present.agent} ({present.phase}).")
            continue
        out += [
            "| | A | B | B − A |",
            "|---|---|---|---|",
            f"| Agent | {left.agent} | {right.agent} | |",
            f"| Model | {left.model or '—'} | {right.model or '—'} | |",
            f"| Status | {left.phase} | {right.phase} | |",
            f"| Tokens | {left.tokens:,} | {right.tokens:,} |"
            f" {_delta(left.tokens, right.tokens)} |",
            f"| Cost | {_cost(left.usage)} | {_cost(right.usage)} |"
            f" {_delta(left.usage.cost, right.usage.cost, '$')} |",
            f"| Duration | {_seconds(left.duration_s)} | {_seconds(right.duration_s)} |"
            f" {_delta(left.duration_s, right.duration_s, ' s')} |",
            f"| Tool calls | {len(left.tools)} | {len(right.tools)} |"
            f" {'same sequence' if step.same_tools else 'different'} |",
            f"| Files changed | {_files(left.files)} | {_files(right.files)} | |",
        ]
        if not step.same_tools:
            out += ["", "Tool calls:", "", "```diff", _tools_diff(left.tools, right.tools), "```"]
        out += [""]
        if step.same_output:
            out.append("Output: identical.")
        else:
            out += ["Output diff:", "", _fenced_diff(step.output_diff)]
    return "\n".join(out).rstrip() + "\n"


def _files(files: list[str]) -> str:
    return ", ".join(f"`{f}`" for f in files) if files else "—"


def _tools_diff(left: list[str], right: list[str]) -> str:
    lines = difflib.unified_diff(
        [f"{t}\n" for t in left], [f"{t}\n" for t in right], "A", "B", n=len(left) + len(right)
    )
    return "".join(lines).rstrip("\n")


def _fenced_diff(diff: str) -> str:
    ticks = "```"
    while ticks in diff:
        ticks += "`"
    return f"{ticks}diff\n{diff.rstrip()}\n{ticks}"
