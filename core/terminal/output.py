"""A live, readable transcript of a run on a terminal (``baton run`` without ``--json``).

Single and chain runs stream text as it arrives; each step says where it works when that is
not the run's folder, and when it was reused from an earlier run; a call a rule, the policy or
the run's setting let through says so ("allowed by the project rule …"); a structured result
is shown as a table (:mod:`core.terminal.result_table`). Parallel runs would interleave
several steps' text mid-sentence, so there each step's text is printed whole when the step
finishes. Tool calls are one line each, with a mark once they end. Colour only on a terminal
(and never when ``NO_COLOR`` is set).

A model call that fails mid-answer and is retried streams its answer again from the start.
Streamed text cannot be taken back, so the retry line says the partial answer above it is
superseded; a parallel step's buffered text simply drops the superseded attempt.
"""

from __future__ import annotations

import os
from typing import TextIO

from core.model.events import (
    ApprovalResolved,
    BestOfPicked,
    ContextLoaded,
    Event,
    GateDecided,
    GateWaiting,
    Log,
    LoopFinished,
    LoopIterationStarted,
    OutputFileWritten,
    Retry,
    RunFinished,
    RunStarted,
    StepFinished,
    StepSkipped,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from core.model.words import counted
from core.record.run_state import ToolCall
from core.terminal.result_table import result_table
from core.tools.approval_describe import resolution_text

_MARKS = {"ok": "✓", "error": "✗", "aborted": "⊘", "interrupted": "⊘"}


class TranscriptPrinter:
    """An event listener writing a human transcript to ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self._out = stream
        self._color = stream.isatty() and "NO_COLOR" not in os.environ
        self._parallel = False
        self._total_steps = 0
        self._agents: dict[int, str] = {}
        self._buffers: dict[int, list[str]] = {}
        self._attempt_start: dict[int, int] = {}
        """Per step: where the current model attempt's text begins in its buffer (a streamed
        step's buffer holds only the current attempt)."""
        self._calls: dict[str, ToolCall] = {}
        self._at_line_start = True
        self._cwd = ""

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._parallel = event.mode in ("parallel", "graph")  # branches may overlap
            self._total_steps = len(event.steps)
            self._cwd = event.cwd
            title = event.preset or event.mode
            self._line(
                self._style(f"▶ {title} · {counted(len(event.steps), 'step')} in {event.cwd}", "1")
            )
            if event.params:
                values = ", ".join(f"{name}={value}" for name, value in event.params.items())
                self._line(self._style(f"  params: {values}", "2"))
        elif isinstance(event, StepStarted) and event.step is not None:
            self._agents[event.step] = event.agent
            model = f" · {event.model}" if event.model else ""
            header = f"── step {event.step + 1}/{self._total_steps}: {event.agent}{model} "
            self._line("\n" + self._style(header.ljust(72, "─"), "1;36"))
            if event.cwd and event.cwd != self._cwd:  # a step working in its own folder
                self._line(self._style(f"  in {event.cwd}", "2"))
            if event.reused_from:
                self._line(self._style(f"  reused from run {event.reused_from} (no request)", "2"))
        elif isinstance(event, TextDelta) and event.step is not None:
            buffer = self._buffers.setdefault(event.step, [])
            buffer.append(event.text)
            if not self._parallel:
                self._write(event.text)
        elif isinstance(event, ToolCallStarted):
            call = ToolCall(event.call_id, event.tool, dict(event.arguments), event.ts)
            self._calls[event.call_id] = call
            if not self._parallel:
                self._line(self._style(f"  → {event.tool} {call.key_argument[:100]}", "2"))
        elif isinstance(event, ToolCallFinished):
            self._tool_finished(event)
            self._attempt_ended(event)
        elif isinstance(event, Usage):
            self._attempt_ended(event)
        elif isinstance(event, ApprovalResolved):
            self._resolved(event)
        elif isinstance(event, Retry):
            self._retry(event)
        elif isinstance(event, Log) and event.level in ("warning", "error"):
            self._line(self._style(f"  ! {event.message.strip()}", "33"))
        elif isinstance(event, ContextLoaded):
            if not self._parallel:
                self._line(self._style(f"  {event.line()}", "2"))
        elif isinstance(event, OutputFileWritten):
            if event.error:
                self._line(self._style(f"  ! answer not written: {event.error}", "33"))
            else:
                self._line(self._style(f"  answer also written to {event.path}", "2"))
        elif isinstance(event, StepFinished) and event.step is not None:
            self._step_finished(event)
        elif isinstance(event, StepSkipped | LoopIterationStarted | LoopFinished):
            self._line(self._style(_graph_line(event), "2"))
        elif isinstance(event, GateWaiting | GateDecided | BestOfPicked):
            self._line(self._style(_graph_line(event), "1;35"))
        elif isinstance(event, RunFinished):
            mark = _MARKS[event.status]
            text = f"\n{mark} run {event.status} in {event.ts:.1f} s"
            if event.usage.line():
                text += f" · {event.usage.line()}"
            self._line(self._style(text, "1"))
            if event.error:
                self._line(self._style(event.error, "31"))

    def _attempt_ended(self, event: Event) -> None:
        """A model response (or a tool call) completed: a later retry cannot supersede it."""
        if event.step is None:
            return
        buffer = self._buffers.setdefault(event.step, [])
        if not self._parallel:
            buffer.clear()  # streamed already: only the current attempt's text is kept
        self._attempt_start[event.step] = len(buffer)

    def _resolved(self, event: ApprovalResolved) -> None:
        """Who let a call run (or not) when nobody was asked here: a rule, the policy, the
        run's setting; and a person's edit or denial. A prompt's own answer needs no echo."""
        answered = event.decided_by == "person" and event.updated_arguments is None
        if answered and event.decision != "deny":
            return
        text = resolution_text(event)
        mark = "✗" if event.decision == "deny" else "✓"
        color = "31" if event.decision == "deny" else "2"
        self._line(self._style(f"  {mark} {text[:1].lower()}{text[1:]}", color))

    def _retry(self, event: Retry) -> None:
        limit = f"/{event.max_attempts}" if event.max_attempts else ""
        line = f"  ↻ retry {event.attempt}{limit}: {event.error}"
        if event.step is not None:
            buffer = self._buffers.get(event.step, [])
            start = self._attempt_start.get(event.step, 0)
            if any(buffer[start:]) and not self._parallel:
                line += " — the partial answer above is superseded; the retry starts over"
            del buffer[start:]
        self._line(self._style(line, "33"))

    def _tool_finished(self, event: ToolCallFinished) -> None:
        call = self._calls.pop(event.call_id, None)
        if call is None:
            return
        took = f" {event.duration_ms:.0f} ms" if event.duration_ms is not None else ""
        mark = _MARKS[event.status]
        color = "32" if event.status == "ok" else "31"
        agent = "" if not self._parallel else f"[{self._agents.get(event.step or 0, '')}] "
        line = f"  {mark} {agent}{call.tool} {call.key_argument[:80]}{took}"
        if event.status != "ok":
            first = event.result.strip().split("\n")[0][:120]
            line += f" — {first}"
        self._line(self._style(line, color))

    def _step_finished(self, event: StepFinished) -> None:
        assert event.step is not None
        if self._parallel:
            agent = self._agents.get(event.step, "")
            named = _execution_name(event)
            self._line(self._style(f"\n── task {event.step + 1}: {named or agent} ", "1;36"))
            self._write("".join(self._buffers.get(event.step, [])))
        self._buffers.pop(event.step, None)
        self._attempt_start.pop(event.step, None)
        summary = f"{_MARKS[event.status]} step {event.step + 1} {event.status}"
        if event.usage.line():
            summary += f" · {event.usage.line()}"
        self._line(self._style(summary, "2"))
        if event.structured:
            for line in result_table(event.structured):
                self._line(f"  {line}" if line else "")
        if event.error:
            self._line(self._style(f"  {event.error}", "31"))

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self._color else text

    def _write(self, text: str) -> None:
        if text:
            self._out.write(text)
            self._out.flush()
            self._at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        if not self._at_line_start:
            self._out.write("\n")
        self._out.write(text + "\n")
        self._out.flush()
        self._at_line_start = True


def _execution_name(event: StepFinished) -> str:
    """``fix (iteration 2)``, ``attempt#3``: a graph step as the person wrote it."""
    if event.node is None:
        return ""
    name = event.branch or event.node
    return f"{name} (iteration {event.iteration})" if event.iteration else name


def _graph_line(
    event: StepSkipped
    | LoopIterationStarted
    | LoopFinished
    | GateWaiting
    | GateDecided
    | BestOfPicked,
) -> str:
    if isinstance(event, StepSkipped):
        condition = f" ({event.condition})" if event.condition else ""
        return f"  ⊘ {event.node} skipped: {event.reason}{condition}"
    if isinstance(event, LoopIterationStarted):
        return f"↻ loop {event.loop}: iteration {event.iteration}"
    if isinstance(event, LoopFinished):
        return f"↻ loop {event.loop}: {event.summary}"
    if isinstance(event, GateWaiting):
        return f"⏸ gate before {event.node}: {event.question}"
    if isinstance(event, GateDecided):
        said = f": {event.note}" if event.note else ""
        return f"⏵ gate {event.gate_id}: {event.decision.replace('_', ' ')} ({event.by}){said}"
    return f"★ {event.node}: {event.winner} kept (picked by the {event.by})"
