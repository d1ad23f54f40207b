"""A run as a Markdown document: for sharing, pasting into an issue, or reading later.

Text of a model attempt that failed and was retried is left out (the retry notice stays, in
its place); the JSON export is the run file itself, where the ``retry`` event marks it.
"""

from __future__ import annotations

import json

from core.definitions.structured import as_handoff, review_table
from core.model.events import Event
from core.record.run_names import run_name
from core.record.run_state import Notice, RunState, StepState, TextBlock, ToolCall, fold

PHASE_LABEL = {
    "pending": "pending",
    "running": "running",
    "waiting": "waiting for approval",
    "ok": "ok",
    "error": "error",
    "aborted": "aborted",
    "not_run": "not run",
}
RESULT_PREVIEW_CHARS = 2_000


def _fence(text: str, info: str = "") -> str:
    """A code fence longer than any backtick run inside ``text``."""
    ticks = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


def _longest_backtick_run(text: str) -> int:
    best = current = 0
    for char in text:
        current = current + 1 if char == "`" else 0
        best = max(best, current)
    return best


def _title(state: RunState) -> str:
    agents = [s.agent for s in state.steps]
    return run_name(state.mode, state.preset, state.args, agents) or state.run_id


def _tool_call(call: ToolCall, delegated: bool = False) -> str:
    """``delegated``: a sub-agent ran inside this call; its words (the call's output) are
    shown before the result it handed back."""
    mark = {"ok": "✓", "error": "✗", "aborted": "⊘", "running": "…"}[call.status]
    took = f" ({call.duration_ms:.0f} ms)" if call.duration_ms is not None else ""
    inside = " *(in the sub-agent)*" if call.parent_call_id else ""
    dropped = " — *superseded: its model call was retried*" if call.superseded else ""
    lines = [f"- {mark} **{call.tool}** `{call.key_argument[:120]}`{took}{inside}{dropped}"]
    body = call.result or call.output
    if delegated and call.output and call.result:
        body = f"{call.output}\n\n{call.result}"
    if body:
        preview = body[:RESULT_PREVIEW_CHARS]
        if len(body) > RESULT_PREVIEW_CHARS:
            preview += f"\n… ({len(body) - RESULT_PREVIEW_CHARS:,} more characters)"
        lines.append("\n".join("  " + line for line in _fence(preview).split("\n")))
    return "\n".join(lines)


def run_to_markdown(events: list[Event]) -> str:
    return state_to_markdown(fold(events))


def state_to_markdown(state: RunState) -> str:
    """The Markdown of an already folded run (the GUI keeps the state, not the events)."""
    out = [f"# {_title(state)}", ""]
    out.append(f"- Run: `{state.run_id}` ({state.mode}), started {state.started_at}")
    out.append(f"- Folder: `{state.cwd}`")
    out.append(f"- Status: **{state.status}** after {state.elapsed:.1f} s")
    if state.usage.line():
        out.append(f"- Usage: {state.usage.line()}")
    if state.error:
        out.append(f"- Error: {state.error}")
    for step in state.steps:
        out += ["", f"## Step {step.index + 1}: {_who(step)} — {PHASE_LABEL[step.phase]}", ""]
        if step.usage.line():
            out += [f"*{step.usage.line()}*", ""]
        out += ["**Task**", "", "> " + step.task.replace("\n", "\n> "), ""]
        parents = {i.parent_call_id for i in step.items if isinstance(i, ToolCall)}
        for item in step.items:
            if isinstance(item, ToolCall):
                out.append(_tool_call(item, item.call_id in parents))
            elif isinstance(item, Notice):
                out.append(f"- *{item.kind}: {item.text}*")
            elif isinstance(item, TextBlock) and item.superseded:
                continue  # an attempt that was retried: the retry notice says so
            elif isinstance(item, TextBlock) and item.kind == "thinking":
                out += ["", "<details><summary>Thinking</summary>", "", item.text, "</details>", ""]
            elif isinstance(item, TextBlock):
                out += ["", item.text.strip(), ""]
        if step.structured is not None:
            table = review_table(step.structured) if "issues" in step.structured else None
            out += ["", table or "```json\n" + as_handoff(step.structured) + "\n```", ""]
        if step.error and step.phase == "not_run" and step.error.startswith("skipped: "):
            out += ["", f"**Skipped:** {step.error.removeprefix('skipped: ')}"]
        elif step.error:
            out += ["", f"**Error:** {step.error}"]
    return "\n".join(out).rstrip() + "\n"


def _who(step: StepState) -> str:
    """``worker``, or in a graph run ``fix (worker), iteration 2`` / ``attempt#2 (worker)``."""
    if step.node is None:
        return step.agent
    named = f"{step.branch or step.node} ({step.agent})"
    return f"{named}, iteration {step.iteration}" if step.iteration else named


def run_to_json(events: list[Event]) -> str:
    """The run as one JSON array of events (the NDJSON file, wrapped)."""
    return json.dumps([e.model_dump(mode="json") for e in events], ensure_ascii=False, indent=1)
