"""Claude Code's ``--output-format stream-json`` output, one line at a time, as Baton events.

Pure and stateful per step: :class:`ClaudeEventParser` gets each line the CLI printed (live, or
read back from a saved transcript) and returns the Baton events it stands for; at the end,
:meth:`ClaudeEventParser.finish` closes what was left open and returns the step's one
:class:`~core.model.events.StepFinished`. No I/O happens here, so the live backend
(:mod:`core.backends.claude_cli`) and the transcript importer
(:mod:`core.history.run_import.claude`) share every rule, and tests feed it the real
transcripts of ``reference/claude/``. Rules (see ``PROTOCOL.md`` there):

* Text and thinking come from the ``stream_event`` deltas when the CLI streams partial
  messages; the ``assistant`` lines (one per content block, grouped by ``message.id``) then only
  add tool calls. Without partial messages (a plain ``-p`` transcript) the ``assistant`` lines
  carry everything.
* A tool call is announced (``tool_call_started``) once its input is complete: at the
  ``content_block_stop`` of its streamed ``input_json_delta`` pieces or at its ``assistant``
  line, whichever comes first (2.0.76 prints the line first, 2.1.x the stop), or when a
  ``can_use_tool`` request asks about it (:meth:`ClaudeEventParser.announce`).
* Usage: one ``usage`` event per API message (from ``message_delta``, which has the real output
  count; without partial messages from the message's first ``assistant`` line). The final
  ``result`` has the authoritative totals — cost (which includes the CLI's side calls to a small
  model), cache tokens, ``num_turns`` — so :meth:`~ClaudeEventParser.finish` adds one correcting
  ``usage`` event that makes the step's sum equal the last ``result``'s totals.
* Failure is ``is_error`` on the last ``result`` (API failures arrive as ``subtype:
  "success"``) or an ``error_*`` subtype (2.0.76 and 1.0.128 end a turn-limited run with
  ``error_max_turns`` and ``is_error: false``); an interrupted run (``terminal_reason:
  aborted_*``) is aborted, not failed. Background subagents can print more than one
  ``result``: the last one wins.
* Subagent messages (``parent_tool_use_id`` set) keep it as the events' ``parent_call_id``:
  their text and tool calls belong to the Task call that started them, never to the step's
  own answer. Text carries its API message id, so two separate answers are never glued.
* Unknown line types and ``system`` subtypes are logged once (``debug``), never fatal; lines
  that are not JSON are logged as warnings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.backends.cli_events import StepEvents, error_tail, event_object, stopping_signal
from core.backends.cli_output import as_int, content_text, preview
from core.definitions.agents import CLAUDE_TOOL_NAMES
from core.model.events import (
    Event,
    Retry,
    StepFinished,
    StepStatus,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UsageStats,
)

_CONTROL_TYPES = frozenset(
    {"control_request", "control_response", "control_cancel_request", "keep_alive"}
)
_MAIN = ""
"""Key of the main conversation among the concurrently streamed ones (subagents use their
``parent_tool_use_id``)."""


def baton_tool_name(claude_name: str) -> str:
    """``Bash`` → ``bash``, ``Glob`` → ``find``; tools Baton has no name for keep theirs, so
    the approval policy of a Baton tool also governs Claude Code's equivalent."""
    return CLAUDE_TOOL_NAMES.get(claude_name.casefold(), claude_name)


def usage_of_message(usage: Any, model: str | None, output: int | None = None) -> UsageStats:
    """One API message's figures (``turns == 1``); cost is only known from ``result``."""
    usage = usage if isinstance(usage, dict) else {}
    figures = {
        "input": as_int(usage.get("input_tokens")),
        "output": as_int(usage.get("output_tokens")) if output is None else output,
        "cache_read": as_int(usage.get("cache_read_input_tokens")),
        "cache_write": as_int(usage.get("cache_creation_input_tokens")),
    }
    return UsageStats(turns=1, context_tokens=sum(figures.values()), model=model, **figures)


def usage_of_result(result: dict[str, Any], model: str | None) -> UsageStats:
    """The step's totals as the ``result`` line states them."""
    usage = result.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    cost = result.get("total_cost_usd")
    return UsageStats(
        turns=as_int(result.get("num_turns")),
        input=as_int(usage.get("input_tokens")),
        output=as_int(usage.get("output_tokens")),
        cache_read=as_int(usage.get("cache_read_input_tokens")),
        cache_write=as_int(usage.get("cache_creation_input_tokens")),
        cost=float(cost) if isinstance(cost, int | float) else 0.0,
        model=model,
    )


@dataclass
class _Block:
    kind: str
    text: str = ""
    tool_id: str = ""
    tool_name: str = ""
    json: str = ""


@dataclass
class _Message:
    """An API message being streamed (``message_start`` … ``message_stop``)."""

    id: str
    model: str | None
    usage: dict[str, Any]
    blocks: dict[int, _Block] = field(default_factory=dict)


@dataclass
class _Call:
    started: float


class ClaudeEventParser:
    """Turns Claude Code's stream-json lines of one step into Baton events.

    ``clock`` gives the events' ``ts`` (the run clock of a live step; a transcript importer
    passes the transcript's own time) and measures tool durations.
    """

    def __init__(self, run_id: str, step: int, clock: Callable[[], float] | None = None) -> None:
        self.run_id = run_id
        self.step = step
        self._clock = clock or (lambda: 0.0)
        self.model: str | None = None
        """From ``system/init``, then from each API message."""
        self.session_id: str | None = None
        self.version: str | None = None
        self.cwd: str | None = None
        self.results: list[dict[str, Any]] = []
        """Every ``result`` line; the last one decides the step."""
        self.emitted = UsageStats()
        """Sum of the ``usage`` events returned so far."""
        self._streams: dict[str, _Message] = {}
        self._streamed_ids: set[str] = set()
        self._usage_ids: set[str] = set()
        self._calls: dict[str, _Call] = {}
        self._announced: set[str] = set()
        self._last_text = ""
        self._logged: set[str] = set()
        self._events = StepEvents(run_id, step, self._clock)

    # ------------------------------------------------------------------------ public API

    @property
    def result(self) -> dict[str, Any] | None:
        return self.results[-1] if self.results else None

    @property
    def final_output(self) -> str:
        """The last ``result``'s text, else the last text block of the main conversation."""
        text = self.result.get("result") if self.result else None
        return text if isinstance(text, str) else self._last_text

    def feed(self, line: str | bytes) -> list[Event]:
        """Events for one printed line (garbage is logged, never raised)."""
        if isinstance(line, bytes):
            line = line.decode("utf-8", errors="replace")
        if not line.strip():
            return []
        data = event_object(line)
        if data is None:
            return [
                self._events.log(
                    "warning", f"ignored a line that is not a Claude Code event: {preview(line)}"
                )
            ]
        return self.feed_object(data)

    def feed_object(self, data: dict[str, Any]) -> list[Event]:
        return self._events.read(self._dispatch, data, f"a '{data.get('type')}' line")

    def announce(
        self, call_id: str, claude_tool: str, arguments: Any, parent: str | None = None
    ) -> list[Event]:
        """``tool_call_started`` for a call not announced yet (a ``can_use_tool`` request may
        arrive before the call's own line, and the dialog must have a row to belong to).
        ``parent``: the Task call of the sub-agent making this call."""
        if not call_id or call_id in self._announced:
            return []
        self._announced.add(call_id)
        self._calls[call_id] = _Call(self._clock())
        args = arguments if isinstance(arguments, dict) else {"input": arguments}
        tool = baton_tool_name(claude_tool)
        return [
            self._events.make(
                ToolCallStarted, call_id=call_id, tool=tool, arguments=args, parent_call_id=parent
            )
        ]

    def finish(
        self, exit_code: int | None = None, stderr_tail: str = "", *, cancelled: bool = False
    ) -> list[Event]:
        """Close open tool calls, correct the usage to the last ``result``'s totals, and end
        with the step's :class:`StepFinished`. ``exit_code`` is ``None`` for a transcript;
        negative values are signals, as asyncio reports them."""
        out: list[Event] = []
        for call_id, call in list(self._calls.items()):
            out.append(
                self._finished(
                    call_id, call, "aborted", "(aborted: the step ended before this call finished)"
                )
            )
        self._calls.clear()
        if self.result is not None:
            correction = _difference(usage_of_result(self.result, self.model), self.emitted)
            if correction is not None:
                out.append(self._usage(correction))
        status, error = self._status(exit_code, stderr_tail, cancelled)
        out.append(
            self._events.make(
                StepFinished,
                status=status,
                output=self.final_output,
                error=error,
                usage=self.emitted,
            )
        )
        return out

    # ------------------------------------------------------------------------ dispatch

    def _dispatch(self, data: dict[str, Any], out: list[Event]) -> None:
        kind = data["type"]
        if kind == "stream_event":
            self._stream_event(data, out)
        elif kind == "assistant":
            self._assistant(data, out)
        elif kind == "user":
            self._user(data, out)
        elif kind == "system":
            self._system(data, out)
        elif kind == "result":
            self.results.append(data)
            if len(self.results) > 1:
                out.append(
                    self._events.log(
                        "info",
                        "Claude Code reported another result "
                        "(background work finished); the last one counts",
                    )
                )
        elif kind not in _CONTROL_TYPES:
            self._log_once(f"Claude Code line type '{kind}' is not shown by Baton", out)

    def _system(self, data: dict[str, Any], out: list[Event]) -> None:
        subtype = data.get("subtype")
        if subtype == "init":
            self.model = data.get("model") or self.model
            self.session_id = data.get("session_id") or self.session_id
            self.version = data.get("claude_code_version") or self.version
            self.cwd = data.get("cwd") or self.cwd
            out.append(
                self._events.log(
                    "debug",
                    f"Claude Code {self.version or '?'}, model "
                    f"{self.model or '?'}, session {self.session_id or '?'}",
                )
            )
        elif subtype == "api_retry":
            self._streams.clear()  # what streamed belongs to the superseded attempt
            status, error = data.get("error_status"), data.get("error")
            reason = " ".join(str(p) for p in (status, error) if p) or "the model call failed"
            delay, limit = data.get("retry_delay_ms"), data.get("max_retries")
            out.append(
                self._events.make(
                    Retry,
                    attempt=as_int(data.get("attempt")) or 1,
                    max_attempts=limit if isinstance(limit, int) else None,
                    delay_ms=float(delay) if isinstance(delay, int | float) else None,
                    error=reason,
                )
            )
        elif subtype == "permission_denied":
            message = data.get("message") or f"{data.get('tool_name', 'a tool')} was denied"
            out.append(self._events.log("info", f"Claude Code denied a tool call: {message}"))
        elif subtype == "compact_boundary":
            out.append(self._events.log("info", "Claude Code compacted the conversation"))
        else:
            self._log_once(f"Claude Code system event '{subtype}' is not shown by Baton", out)

    # ------------------------------------------------------------------------ streaming

    def _stream_event(self, data: dict[str, Any], out: list[Event]) -> None:
        event = data.get("event") or {}
        kind = event.get("type")
        key = data.get("parent_tool_use_id") or _MAIN
        if kind == "message_start":
            message = event.get("message") or {}
            message_id = str(message.get("id") or data.get("api_message_id") or "")
            model = message.get("model") if message.get("model") != "<synthetic>" else None
            self._streams[key] = _Message(message_id, model, message.get("usage") or {})
            self._streamed_ids.add(message_id)
            if key == _MAIN:  # a sub-agent's model is its own, not the step's
                self.model = model or self.model
            return
        current = self._streams.get(key)
        if current is None:
            if kind not in ("message_stop", "message_delta"):
                self._log_once("Claude Code streamed a block outside a message", out)
            return
        index = as_int(event.get("index"))
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            current.blocks[index] = _Block(
                kind=str(block.get("type")),
                tool_id=str(block.get("id") or ""),
                tool_name=str(block.get("name") or ""),
            )
        elif kind == "content_block_delta":
            self._delta(current.blocks.get(index), event.get("delta") or {}, key, out)
        elif kind == "content_block_stop":
            block = current.blocks.get(index)
            if block is not None and block.kind == "tool_use":
                self._announce_streamed(block, out, None if key == _MAIN else key)
            elif block is not None and block.kind == "text" and key == _MAIN:
                self._last_text = block.text
        elif kind == "message_delta":
            usage = {**current.usage, **(event.get("usage") or {})}
            self._message_usage(current.id, usage, current.model, out, key or None)
        elif kind == "message_stop":
            self._streams.pop(key, None)
        else:
            self._log_once(f"Claude Code stream event '{kind}' is not shown by Baton", out)

    def _delta(
        self, block: _Block | None, delta: dict[str, Any], key: str, out: list[Event]
    ) -> None:
        kind = delta.get("type")
        if block is None:
            return
        ids = {"message_id": self._streams[key].id or None, "parent_call_id": key or None}
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            block.text += delta["text"]
            if delta["text"]:
                out.append(self._events.make(TextDelta, text=delta["text"], **ids))
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            block.text += delta["thinking"]
            if delta["thinking"]:
                out.append(self._events.make(ThinkingDelta, text=delta["thinking"], **ids))
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            block.json += delta["partial_json"]

    def _announce_streamed(self, block: _Block, out: list[Event], parent: str | None) -> None:
        try:
            arguments = json.loads(block.json) if block.json.strip() else {}
        except ValueError:
            return  # the assistant line carries the full input
        out.extend(self.announce(block.tool_id, block.tool_name, arguments, parent))

    def _message_usage(
        self,
        message_id: str,
        usage: dict[str, Any],
        model: str | None,
        out: list[Event],
        parent: str | None = None,
    ) -> None:
        """One usage event per API message; a sub-agent's names the Task call (``parent``)."""
        if message_id in self._usage_ids:
            return
        self._usage_ids.add(message_id)
        out.append(self._usage(usage_of_message(usage, model), parent))

    # ------------------------------------------------------------------------ whole lines

    def _assistant(self, data: dict[str, Any], out: list[Event]) -> None:
        message = data.get("message") or {}
        parent = str(data["parent_tool_use_id"]) if data.get("parent_tool_use_id") else None
        main = parent is None
        if message.get("model") == "<synthetic>":  # the CLI's own words, e.g. an API error
            text = content_text(message.get("content"))
            out.append(self._events.log("warning" if data.get("error") else "info", text))
            return
        message_id = str(message.get("id") or "")
        model = message.get("model") if isinstance(message.get("model"), str) else None
        if main:
            self.model = model or self.model
        streamed = message_id in self._streamed_ids
        for block in message.get("content") or []:
            kind = block.get("type") if isinstance(block, dict) else None
            ids = {"message_id": message_id or None, "parent_call_id": parent}
            if kind == "tool_use":
                call_id, name = str(block.get("id")), str(block.get("name"))
                out.extend(self.announce(call_id, name, block.get("input"), parent))
            elif kind == "text" and isinstance(block.get("text"), str):
                if main:
                    self._last_text = block["text"]
                if not streamed and block["text"]:
                    out.append(self._events.make(TextDelta, text=block["text"], **ids))
            elif kind == "thinking" and not streamed and block.get("thinking"):
                out.append(self._events.make(ThinkingDelta, text=str(block["thinking"]), **ids))
        if not streamed and message_id:
            self._message_usage(message_id, message.get("usage") or {}, model, out, parent)

    def _user(self, data: dict[str, Any], out: list[Event]) -> None:
        content = (data.get("message") or {}).get("content")
        if isinstance(content, str):
            out.append(self._events.log("info", preview(content)))
            return
        extra = data.get("tool_use_result")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id") or "")
                call = self._calls.pop(call_id, None) or _Call(self._clock())
                interrupted = isinstance(extra, dict) and extra.get("interrupted") is True
                status: Literal["ok", "error", "aborted"] = (
                    "aborted" if interrupted else "error" if block.get("is_error") else "ok"
                )
                out.append(
                    self._finished(call_id, call, status, content_text(block.get("content")))
                )
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                out.append(self._events.log("info", preview(block["text"])))

    # ------------------------------------------------------------------------ the end

    def _status(
        self, exit_code: int | None, stderr_tail: str, cancelled: bool
    ) -> tuple[StepStatus, str | None]:
        if cancelled:
            return "aborted", "cancelled"
        result = self.result
        if result is not None:
            reason = result.get("terminal_reason")
            if isinstance(reason, str) and reason.startswith("aborted"):
                # A person interrupted the CLI (Esc, SIGINT): cancelled, not a failure.
                what = "tools were running" if reason == "aborted_tools" else "it was answering"
                return "aborted", f"interrupted: Claude Code was stopped while {what}"
            subtype = str(result.get("subtype") or "")
            # 2.0.76 and 1.0.128 end a turn-limited run with error_max_turns and is_error false
            if result.get("is_error") is not True and not subtype.startswith("error"):
                return "ok", None
            return "error", _result_error(result)
        name = stopping_signal(exit_code)
        if name is not None:
            return "aborted", f"Claude Code was stopped by {name} before it finished"
        tail = error_tail(stderr_tail)
        if exit_code is None:
            return "aborted", "the transcript ends before Claude Code's result"
        if exit_code != 0:
            reason = tail or "no reason printed"
            return "error", f"Claude Code exited with status {exit_code}: {reason}"
        return "error", "Claude Code ended without a result" + (f": {tail}" if tail else "")

    # ------------------------------------------------------------------------ helpers

    def _finished(
        self, call_id: str, call: _Call, status: Literal["ok", "error", "aborted"], text: str
    ) -> ToolCallFinished:
        duration = round(max(0.0, self._clock() - call.started) * 1000, 3)
        return self._events.make(
            ToolCallFinished, call_id=call_id, status=status, result=text, duration_ms=duration
        )

    def _usage(self, usage: UsageStats, parent: str | None = None) -> Usage:
        self.emitted = self.emitted + (usage if parent is None else usage.without_latest())
        return self._events.make(Usage, usage=usage, parent_call_id=parent)

    def _log_once(self, message: str, out: list[Event]) -> None:
        if message not in self._logged:
            self._logged.add(message)
            out.append(self._events.log("debug", message))


def _result_error(result: dict[str, Any]) -> str:
    errors = result.get("errors")
    if isinstance(errors, list) and errors:
        return "; ".join(str(e) for e in errors)
    if result.get("subtype") == "error_max_turns":
        turns = result.get("num_turns")
        return "Claude Code stopped at the turn limit" + (f" ({turns} turns)" if turns else "")
    text = result.get("result")
    if isinstance(text, str) and text.strip() and result.get("is_error") is True:
        return text.strip()
    return f"Claude Code failed ({result.get('subtype') or 'no reason given'})"


def _difference(total: UsageStats, emitted: UsageStats) -> UsageStats | None:
    """What to add to ``emitted`` to reach ``total`` (None when nothing is missing)."""
    delta = UsageStats(
        turns=total.turns - emitted.turns,
        input=total.input - emitted.input,
        output=total.output - emitted.output,
        cache_read=total.cache_read - emitted.cache_read,
        cache_write=total.cache_write - emitted.cache_write,
        cost=round(total.cost - emitted.cost, 10),
        model=total.model if emitted.model is None else None,
    )
    figures = (delta.turns, delta.input, delta.output, delta.cache_read, delta.cache_write)
    return None if not any(figures) and not delta.cost else delta
