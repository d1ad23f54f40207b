"""An ACP agent's ``session/update`` notifications as Baton events (architecture: "Events").

Pure and stateful per step, like the CLI parsers: :class:`AcpEventTranslator` gets each update
(the SDK's typed models) and returns the events it stands for; the live backend
(:mod:`core.backends.acp_backend`) puts them on the step's stream. Rules:

* Text and thinking chunks become ``text_delta`` / ``thinking_delta``; the last message's text
  is the step's answer (a chunk with another ``message_id``, or the first after a tool call,
  starts a new message).
* **Tool calls arrive sparse**: a ``tool_call`` often has only a title, and its input, diff and
  locations come in later ``tool_call_update``s. Each call is kept and merged, and announced
  (``tool_call_started``) once it starts running or ends, or when the agent asks permission for
  it (the dialog needs a row) — whichever comes first: by then its input is usually complete
  (OpenCode's first ``rawInput`` of a bash call holds only the folder).
* A call's kind maps to Baton's tool names (``execute`` → ``bash``, ``edit`` → ``edit``…), so
  Baton's policy and rules govern it; its diffs become output shown in the row.
* ``completed`` / ``failed`` end the call with its text content (or raw output) as the result.
* A plan is shown as an ``info`` log, the entries with their status.
* ``usage_update`` (context used, cost) is kept for the end of the step.
"""

from __future__ import annotations

import difflib
import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
)

from core.backends.cli_events import StepEvents
from core.model.events import Event, TextDelta, ThinkingDelta, ToolCallFinished, ToolCallOutput
from core.model.events import ToolCallStarted as Started

KIND_TO_TOOL: dict[str, str] = {
    "read": "read",
    "edit": "edit",
    "delete": "edit",
    "move": "edit",
    "search": "grep",
    "execute": "bash",
    "fetch": "fetch",
    "think": "think",
}
"""ACP's tool kinds as the Baton tool whose policy governs them; others keep their kind."""

MAX_RESULT_CHARS = 20_000
_SNAKE = {"oldString": "old_string", "newString": "new_string", "replaceAll": "replace_all"}
"""OpenCode's edit input as Baton's (and Claude Code's) edit names it."""


@dataclass
class AcpCall:
    """One tool call as merged so far from ``tool_call`` and its updates."""

    call_id: str
    title: str = ""
    kind: str | None = None
    raw_input: Any = None
    raw_output: Any = None
    status: str | None = None
    locations: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    announced: bool = False
    shown_diffs: bool = False
    finished: bool = False
    started_at: float = 0.0

    @property
    def tool(self) -> str:
        if self.kind and self.kind != "other":
            return KIND_TO_TOOL.get(self.kind, self.kind)
        return self.title.split(" ", 1)[0].casefold() or "tool"

    def shown(self) -> dict[str, Any]:
        """What the row shows: the agent's own input (Codex's command list as a line), or its
        title and files when it sent no input."""
        raw = self.raw_input
        arguments: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        if raw is not None and not isinstance(raw, dict):
            arguments["input"] = raw
        command = arguments.get("command")
        if self.tool == "bash" and isinstance(command, list):  # Codex: [bash, -lc, line]
            words = [str(word) for word in command]
            shell = len(words) >= 3 and words[-2] in ("-c", "-lc")
            arguments["command"] = words[-1] if shell else shlex.join(words)
        if not arguments:
            arguments = {"title": self.title} if self.title else {}
            if self.locations:
                arguments["path"] = self.locations[0]
        return arguments

    def arguments(self) -> dict[str, Any]:
        """What the approval shows and rules are judged on: :meth:`shown`, plus the names
        Baton's rules and previews read (``command``, ``path``, ``old_string``…)."""
        raw = self.raw_input
        arguments = self.shown()
        if "command" not in arguments and self.tool == "bash" and isinstance(raw, dict):
            for key in ("cmd", "commandLine"):
                if isinstance(raw.get(key), str):
                    arguments["command"] = raw[key]
        if "path" not in arguments:
            path = next(
                (v for k, v in arguments.items() if "path" in k.casefold() and isinstance(v, str)),
                self.locations[0] if self.locations else None,
            )
            if path is not None:
                arguments["path"] = path
        for theirs, ours in _SNAKE.items():  # Baton's edit preview reads its own names
            if theirs in arguments and ours not in arguments:
                arguments[ours] = arguments[theirs]
        return arguments

    def paths(self) -> list[str]:
        """Every file the call names: locations, diffs and path-like input values."""
        found = [*self.locations, *self.diffs]
        if isinstance(self.raw_input, dict):
            found += [
                v
                for k, v in self.raw_input.items()
                if "path" in k.casefold() and isinstance(v, str)
            ]
        return found

    def merge(self, update: ToolCallStart | ToolCallProgress | ToolCallUpdate) -> None:
        if update.title:
            self.title = update.title
        if update.kind:
            self.kind = update.kind
        if isinstance(update.raw_input, dict) and isinstance(self.raw_input, dict):
            self.raw_input = {**self.raw_input, **update.raw_input}  # details come in pieces
        elif update.raw_input is not None:
            self.raw_input = update.raw_input
        if update.raw_output is not None:
            self.raw_output = update.raw_output
        if update.status:
            self.status = update.status
        for location in update.locations or []:
            if location.path not in self.locations:
                self.locations.append(location.path)
        if update.content is not None:
            self.text = []
            for item in update.content:
                if isinstance(item, FileEditToolCallContent):
                    self.diffs[item.path] = _diff(item.path, item.old_text, item.new_text)
                elif isinstance(item, ContentToolCallContent):
                    if isinstance(item.content, TextContentBlock):
                        self.text.append(item.content.text)
                elif isinstance(item, TerminalToolCallContent):
                    self.text.append(f"[terminal {item.terminal_id}]")

    def result(self) -> str:
        text = "\n".join(part for part in self.text if part)
        if not text and self.raw_output is not None:
            raw = self.raw_output
            if isinstance(raw, dict):
                raw = raw.get("output", raw.get("error", raw))
            text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        return text[-MAX_RESULT_CHARS:]


class AcpEventTranslator:
    """Turns one session's updates into Baton events of one step (see the module docstring)."""

    def __init__(self, run_id: str, step: int, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._events = StepEvents(run_id, step, clock)
        self.calls: dict[str, AcpCall] = {}
        self.cost: float | None = None
        """The cost the agent last reported (``usage_update``), in US dollars."""
        self.context_tokens: int | None = None
        self._message: str | None = None
        self._answer: list[str] = []
        self._turn_text: list[str] = []
        self._after_call = False

    @property
    def answer(self) -> str:
        """The last message's text: what a chain hands to the next step."""
        return "".join(self._answer).strip()

    def new_turn(self) -> None:
        """A further prompt starts: its answer replaces the previous one once it has text."""
        self._turn_text = []

    def feed(self, update: Any) -> list[Event]:
        out: list[Event] = []
        if isinstance(update, AgentMessageChunk | AgentThoughtChunk):
            content = update.content
            if not isinstance(content, TextContentBlock) or not content.text:
                return out
            message = update.message_id
            if isinstance(update, AgentThoughtChunk):
                out.append(self._events.make(ThinkingDelta, text=content.text, message_id=message))
                return out
            if message != self._message or not self._turn_text or self._after_call:
                self._answer = []
            self._after_call = False
            self._message = message
            self._answer.append(content.text)
            self._turn_text.append(content.text)
            out.append(self._events.make(TextDelta, text=content.text, message_id=message))
        elif isinstance(update, ToolCallStart | ToolCallProgress):
            self._after_call = True
            out += self.merge_call(update)
            if update.status in ("completed", "failed"):
                out += self.finish_call(update.tool_call_id, update.status == "completed")
        elif isinstance(update, AgentPlanUpdate):
            marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
            lines = [f"{marks.get(e.status, '[ ]')} {e.content}" for e in update.entries]
            out.append(self._events.log("info", "plan:\n" + "\n".join(lines)))
        elif isinstance(update, UsageUpdate):
            self.context_tokens = update.used
            if update.cost is not None and update.cost.currency.upper() == "USD":
                self.cost = update.cost.amount
        return out

    def merge_call(
        self, update: ToolCallStart | ToolCallProgress | ToolCallUpdate, *, announce: bool = False
    ) -> list[Event]:
        """Merge what the update says into its call; announce it when it is due (or
        ``announce``: a permission question is about it). Diffs not shown yet are output."""
        call = self.calls.get(update.tool_call_id)
        if call is None:
            call = self.calls[update.tool_call_id] = AcpCall(update.tool_call_id)
        known_diffs = dict(call.diffs)
        call.merge(update)
        out: list[Event] = []
        due = announce or call.status not in (None, "pending")
        if due and not call.announced:
            call.announced = True
            call.started_at = self._clock()
            out.append(self._started(call))
        if call.announced:
            for path, diff in call.diffs.items():
                if known_diffs.get(path) != diff or not call.shown_diffs:
                    out.append(self._events.make(ToolCallOutput, call_id=call.call_id, chunk=diff))
            call.shown_diffs = True
        return out

    def _started(self, call: AcpCall) -> Started:
        return self._events.make(
            Started, call_id=call.call_id, tool=call.tool, arguments=call.shown()
        )

    def finish_call(self, call_id: str, ok: bool, result: str | None = None) -> list[Event]:
        call = self.calls.get(call_id)
        if call is None or call.finished or not call.announced:
            return []
        call.finished = True
        duration = (self._clock() - call.started_at) * 1000
        return [
            self._events.make(
                ToolCallFinished,
                call_id=call_id,
                status="ok" if ok else "error",
                result=call.result() if result is None else result,
                duration_ms=round(duration, 3),
            )
        ]

    def close_open_calls(self, status: str) -> list[Event]:
        """At the end of the step: calls never announced are announced, open ones end
        (``aborted`` after a cancel, else with what the agent last said about them)."""
        out: list[Event] = []
        for call in self.calls.values():
            if not call.announced:
                call.announced = True
                call.started_at = self._clock()
                out.append(self._started(call))
            if not call.finished:
                call.finished = True
                out.append(
                    self._events.make(
                        ToolCallFinished,
                        call_id=call.call_id,
                        status="aborted" if status == "aborted" else "error",
                        result=call.result() or "the agent never said how this call ended",
                    )
                )
        return out


def _diff(path: str, old: str | None, new: str) -> str:
    """A unified diff of one edit the agent reported (a new file when ``old`` is None)."""
    before = (old or "").splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    origin = path if old is not None else "/dev/null"
    lines = difflib.unified_diff(before, after, origin, path)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
