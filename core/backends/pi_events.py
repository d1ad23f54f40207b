"""pi's event lines (``--mode json``, and the same events in ``--mode rpc``) as Baton events.

Pure and stateful per step: :class:`PiEventParser` gets each line pi printed (as it arrives, or
read back from a saved transcript) and returns the Baton events it stands for; at the end,
:meth:`PiEventParser.finish` closes whatever pi left open and returns the step's one
:class:`~core.model.events.StepFinished`. No I/O happens here, so the live backend
(:mod:`core.backends.pi_cli`) and the transcript importer (:mod:`core.history.run_import`) share
every
rule, and tests feed it the real transcripts of ``reference/pi/``.

Both wire generations give the same Baton events (``PROTOCOL.md`` beside the transcripts):

* Text and thinking are built from the *deltas*. pi 0.73.1 repeats the whole message on every
  ``message_update`` and its snapshots may already hold later deltas, so they are never read;
  ``text_end``/``thinking_end`` and the final ``message_end`` then only add what the deltas
  missed (a message streamed without deltas arrives whole at ``message_end``). Those lines
  are not even decoded in full: the delta is scanned from the line's head (a 50 KB answer,
  about 500 MB of 0.73.1 output, reads in 0.12 s instead of 1.2 s).
* ``tool_execution_update.partialResult`` is the whole output so far: it becomes a
  ``tool_call_output`` with ``replace=True``.
* ``durationMs`` exists only in 1.6.0; for 0.73.1 the duration is measured on the clock the
  parser was given (a transcript has no timestamps on tool events: ``None`` there).
* Provider errors are made readable: 1.6.0 writes ``500: {"message": …}``, 0.73.1
  ``500 …``; both become ``500 …``.
* Exit status 0 does not mean success: the last assistant ``message_end`` with stopReason
  ``error``/``aborted``, or ``auto_retry_end`` with ``success: false``, fails the step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Literal

from core.backends.cli_events import StepEvents, error_tail, event_object, stopping_signal
from core.backends.cli_output import as_int, content_text, preview
from core.backends.pi_subagents import PI_SUBAGENT_TOOL, pi_subagent_usages
from core.model.events import (
    Event,
    Retry,
    StepFinished,
    StepStatus,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    Usage,
    UsageStats,
)

# Events that carry nothing Baton shows (turn bookkeeping, 1.6.0's session entries).
_QUIET_EVENTS = frozenset(
    {"agent_start", "turn_start", "turn_end", "entry_appended", "auto_retry_end", "queue_update"}
)
_HTTP_JSON_ERROR = re.compile(r"^(\d{3}):?\s*(\{.*\})\s*$", re.DOTALL)
# pi 0.73.1's message_update lines, in the key order it writes them. Each repeats the whole
# message twice (the quadratic growth); all Baton needs precedes those snapshots.
_UPDATE_PREFIX = re.compile(
    r'\{"type":"message_update","assistantMessageEvent":\{"type":"(text|thinking|toolcall)_'
    r'(start|delta|end)","contentIndex":(\d+)'
)


def readable_error(message: str) -> str:
    """``500: {"message": "boom", ...}`` → ``500 boom``; anything else unchanged."""
    match = _HTTP_JSON_ERROR.match(message.strip())
    if not match:
        return message.strip()
    try:
        body = json.loads(match.group(2))
    except ValueError:
        return message.strip()
    inner = body.get("error", body) if isinstance(body, dict) else None
    text = inner.get("message") if isinstance(inner, dict) else None
    if not isinstance(text, str) and isinstance(inner, str):
        text = inner
    return f"{match.group(1)} {text}" if isinstance(text, str) else message.strip()


def _epoch_ms(value: Any) -> float | None:
    """pi's timestamps: epoch milliseconds on messages, ISO 8601 on the session line."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000
        except ValueError:
            return None
    return None


def usage_from_message(message: dict[str, Any]) -> UsageStats:
    """One assistant message's ``usage`` as Baton's figures (``turns == 1``)."""
    usage = message.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    cost = usage.get("cost")
    total_cost = cost.get("total") if isinstance(cost, dict) else None
    model = message.get("model")
    return UsageStats(
        turns=1,
        input=as_int(usage.get("input")),
        output=as_int(usage.get("output")),
        cache_read=as_int(usage.get("cacheRead")),
        cache_write=as_int(usage.get("cacheWrite")),
        cost=float(total_cost) if isinstance(total_cost, int | float) else 0.0,
        context_tokens=as_int(usage.get("totalTokens")),
        model=model if isinstance(model, str) and model else None,
    )


@dataclass
class _Block:
    """One text or thinking part of the assistant message being streamed."""

    kind: Literal["text", "thinking"]
    streamed: str = ""


@dataclass
class _Call:
    tool: str
    started: float
    last_output: str = ""


@dataclass
class _Outcome:
    """What decides the step's status once pi is done."""

    assistant_messages: int = 0
    last_stop_reason: str | None = None
    last_error: str | None = None
    retry_error: str | None = None
    settled_aborted: bool = False
    agent_ended: bool = False
    final_output: str = ""
    usage: UsageStats = field(default_factory=UsageStats)


class PiEventParser:
    """Turns pi's NDJSON lines of one step into Baton events.

    ``clock`` gives the events' ``ts`` (the run clock of a live step) and measures tool
    durations pi 0.73.1 does not report. Without one (importing a transcript), ``ts`` follows
    the transcript's own timestamps, counted from its ``session`` line, and unreported
    durations stay ``None``.
    """

    fast_updates = True
    """Read 0.73.1's huge ``message_update`` lines without decoding their snapshots (tests
    switch it off to check both paths agree)."""

    def __init__(self, run_id: str, step: int, clock: Callable[[], float] | None = None) -> None:
        self.run_id = run_id
        self.step = step
        self._clock = clock
        self._origin_ms: float | None = None
        self._latest_ms: float | None = None
        self.session: dict[str, Any] = {}
        """pi's ``session`` line (``id``, ``cwd``, ``timestamp``, ``version``), once seen."""
        self.model: str | None = None
        """The model of the latest assistant message."""
        self.prompt: str | None = None
        """The text of the first user message (pi's ``Task: ...``)."""
        self._blocks: dict[int, _Block] = {}
        self._in_message = False
        self._calls: dict[str, _Call] = {}
        self._outcome = _Outcome()
        self._unknown_types: set[str] = set()
        self.lines = 0
        self._events = StepEvents(run_id, step, self._now)

    # ------------------------------------------------------------------------ public API

    @property
    def usage(self) -> UsageStats:
        """Sum over the assistant messages so far (turns = their count)."""
        return self._outcome.usage

    @property
    def final_output(self) -> str:
        """The first text part of the last assistant message that has text (pi's rule)."""
        return self._outcome.final_output

    @property
    def started_at_ms(self) -> float | None:
        """Epoch milliseconds of the transcript's first timestamp (its ``session`` line)."""
        return self._origin_ms

    def feed(self, line: str | bytes, *, complete: bool = True) -> list[Event]:
        """Events for one line. ``complete=False``: the last line ended without a newline
        (pi was cut off); it is read if it happens to be whole JSON, otherwise logged."""
        out: list[Event] = []
        if isinstance(line, bytes):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                text = line.decode("utf-8", errors="replace")
                out.append(
                    self._events.log(
                        "warning", "pi wrote bytes that are not UTF-8; replaced with �"
                    )
                )
        else:
            text = line
        if not text or text.isspace():
            return out
        self.lines += 1
        if complete and self.fast_updates:
            quick = self._quick_update(text)
            if quick is not None:
                return out + quick
        data = event_object(text)
        if data is None:
            what = "an incomplete last line" if not complete else "a line that is not a pi event"
            out.append(self._events.log("warning", f"ignored {what}: {preview(text)}"))
            return out
        return out + self._read(data)

    def feed_object(self, data: dict[str, Any]) -> list[Event]:
        """Events for one line the caller already decoded (pi's RPC mode reads each object
        first to answer the gate's questions)."""
        self.lines += 1
        if not isinstance(data.get("type"), str):
            return [
                self._events.log("warning", f"ignored a line that is not a pi event: {data!r:.200}")
            ]
        return self._read(data)

    def _read(self, data: dict[str, Any]) -> list[Event]:
        return self._events.read(self._dispatch, data, f"pi's '{data['type']}' event")

    def finish(self, exit_code: int | None = None, stderr_tail: str = "") -> list[Event]:
        """Close what pi left open and end with the step's :class:`StepFinished`.

        ``exit_code`` is ``None`` for a transcript (nobody saw pi exit); negative values are
        signals, as asyncio reports them.
        """
        out: list[Event] = []
        cut_mid_message = self._in_message or bool(self._calls)
        self._in_message = False
        for call_id, call in list(self._calls.items()):
            out.append(
                self._events.make(
                    ToolCallFinished,
                    call_id=call_id,
                    status="aborted",
                    result="(aborted: pi stopped before this call finished)",
                    duration_ms=self._measured(call),
                )
            )
        self._calls.clear()
        status, error = self._status(exit_code, stderr_tail, cut_mid_message)
        out.append(
            self._events.make(
                StepFinished,
                status=status,
                output=self._outcome.final_output,
                error=error,
                usage=self._outcome.usage,
            )
        )
        return out

    # ------------------------------------------------------------------------ dispatch

    def _quick_update(self, text: str) -> list[Event] | None:
        """A 0.73.1 ``message_update`` read without parsing its two message snapshots: the
        event type, the block index and the delta (or final content) come first, so a JSON
        string scan there replaces decoding a line that can be megabytes long. ``None``: not
        such a line; the caller parses it fully."""
        match = _UPDATE_PREFIX.match(text)
        if match is None:
            return None
        family, phase, index = match.group(1), match.group(2), int(match.group(3))
        if family == "toolcall":
            return []  # the arguments are shown when the tool starts
        kind: Literal["text", "thinking"] = "text" if family == "text" else "thinking"
        block = self._block(index, kind)
        if phase == "start":
            return []
        key = ',"delta":"' if phase == "delta" else ',"content":"'
        if not text.startswith(key, match.end()):
            return None
        try:
            value, _ = scanstring(text, match.end() + len(key))
        except ValueError:
            return None
        out: list[Event] = []
        if phase == "end":
            self._reconcile(block, value, out)
        elif value:
            block.streamed += value
            out.append(self._delta(kind, value))
        return out

    def _dispatch(self, data: dict[str, Any], out: list[Event]) -> None:
        kind = data["type"]
        if kind == "session":
            self.session = data
            self._see_time(data.get("timestamp"))
        elif kind == "message_start":
            self._message_start(data.get("message") or {})
        elif kind == "message_update":
            self._message_update(data.get("assistantMessageEvent") or {}, out)
        elif kind == "message_end":
            self._message_end(data.get("message") or {}, out)
        elif kind == "tool_execution_start":
            self._tool_start(data, out)
        elif kind == "tool_execution_update":
            self._tool_update(data, out)
        elif kind == "tool_execution_end":
            self._tool_end(data, out)
        elif kind == "auto_retry_start":
            self._retry(data, out)
        elif kind == "auto_retry_end":
            if data.get("success") is False:
                final = data.get("finalError")
                self._outcome.retry_error = readable_error(
                    final if isinstance(final, str) and final else "the model call failed"
                )
        elif kind == "agent_end":
            self._outcome.agent_ended = True
        elif kind == "agent_settled":
            self._outcome.settled_aborted = data.get("aborted") is True
        elif kind not in _QUIET_EVENTS and kind not in self._unknown_types:
            self._unknown_types.add(kind)
            out.append(self._events.log("debug", f"pi event '{kind}' is not shown by Baton"))

    def _message_start(self, message: dict[str, Any]) -> None:
        self._see_time(message.get("timestamp"))
        if message.get("role") == "assistant":
            self._blocks = {}
            self._in_message = True

    def _message_update(self, update: dict[str, Any], out: list[Event]) -> None:
        kind = update.get("type")
        index = update.get("contentIndex")
        if not isinstance(kind, str) or not isinstance(index, int):
            return
        block_kind: Literal["text", "thinking"]
        if kind.startswith("text_"):
            block_kind = "text"
        elif kind.startswith("thinking_"):
            block_kind = "thinking"
        else:
            return  # toolcall_*: the arguments are shown when the tool starts
        block = self._blocks.get(index)
        if block is None or block.kind != block_kind:
            block = self._blocks[index] = _Block(block_kind)
        if kind.endswith("_delta"):
            delta = update.get("delta")
            if isinstance(delta, str) and delta:
                block.streamed += delta
                out.append(self._delta(block_kind, delta))
        elif kind.endswith("_end"):
            content = update.get("content")
            if isinstance(content, str):
                self._reconcile(block, content, out)

    def _message_end(self, message: dict[str, Any], out: list[Event]) -> None:
        self._see_time(message.get("timestamp"))
        if message.get("role") == "user" and self.prompt is None:
            self.prompt = content_text(message.get("content"))
            return
        if message.get("role") == "toolResult":
            self._tool_result_message(message, out)
            return
        if message.get("role") != "assistant":
            return
        self._in_message = False
        first_text: str | None = None
        content = message.get("content")
        for index, part in enumerate(content if isinstance(content, list) else []):
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                first_text = part["text"] if first_text is None else first_text
                self._reconcile(self._block(index, "text"), part["text"], out)
            elif part.get("type") == "thinking" and isinstance(part.get("thinking"), str):
                self._reconcile(self._block(index, "thinking"), part["thinking"], out)
        self._blocks = {}
        usage = usage_from_message(message)
        self.model = usage.model or self.model
        outcome = self._outcome
        outcome.assistant_messages += 1
        outcome.usage = outcome.usage + usage
        out.append(self._events.make(Usage, usage=usage))
        stop = message.get("stopReason")
        outcome.last_stop_reason = stop if isinstance(stop, str) else None
        error = message.get("errorMessage")
        outcome.last_error = readable_error(error) if isinstance(error, str) and error else None
        if stop not in ("error", "aborted") and first_text is not None:
            outcome.final_output = first_text
        if stop == "length":
            out.append(
                self._events.log("warning", "the answer was cut off at the model's output limit")
            )

    def _block(self, index: int, kind: Literal["text", "thinking"]) -> _Block:
        block = self._blocks.get(index)
        if block is None or block.kind != kind:
            block = self._blocks[index] = _Block(kind)
        return block

    def _reconcile(self, block: _Block, final: str, out: list[Event]) -> None:
        """pi's final text is the truth: stream what the deltas missed; a text that contradicts
        what was streamed cannot be unsaid, so it is logged (the step output uses the final)."""
        if final == block.streamed:
            return
        if final.startswith(block.streamed):
            out.append(self._delta(block.kind, final[len(block.streamed) :]))
        else:
            out.append(
                self._events.log(
                    "warning",
                    f"pi's final {block.kind} differs from what it streamed; "
                    f"the step's output uses the final text",
                )
            )
        block.streamed = final

    def _delta(self, kind: Literal["text", "thinking"], text: str) -> Event:
        if kind == "text":
            return self._events.make(TextDelta, text=text)
        return self._events.make(ThinkingDelta, text=text)

    # ------------------------------------------------------------------------ tools

    def _tool_start(self, data: dict[str, Any], out: list[Event]) -> None:
        call_id = str(data.get("toolCallId") or "")
        if not call_id or call_id in self._calls:
            return
        tool = str(data.get("toolName") or "tool")
        args = data.get("args")
        arguments = args if isinstance(args, dict) else ({} if args is None else {"value": args})
        self._calls[call_id] = _Call(tool, self._now())
        out.append(
            self._events.make(ToolCallStarted, call_id=call_id, tool=tool, arguments=arguments)
        )

    def _tool_update(self, data: dict[str, Any], out: list[Event]) -> None:
        call = self._calls.get(str(data.get("toolCallId") or ""))
        partial = data.get("partialResult")
        if call is None or not isinstance(partial, dict):
            return
        text = content_text(partial.get("content"))
        if text == call.last_output:
            return
        call.last_output = text
        out.append(
            self._events.make(
                ToolCallOutput, call_id=str(data["toolCallId"]), chunk=text, replace=True
            )
        )

    def _tool_end(self, data: dict[str, Any], out: list[Event]) -> None:
        call_id = str(data.get("toolCallId") or "")
        if not call_id:
            return
        if call_id not in self._calls:
            self._tool_start(data, out)  # an end without a start: still show the call
        result = data.get("result")
        text = content_text(result.get("content")) if isinstance(result, dict) else ""
        call = self._calls.get(call_id)
        if call is not None and call.tool == PI_SUBAGENT_TOOL and isinstance(result, dict):
            self._subagents(call_id, result.get("details"), out)
        self._close_call(call_id, data.get("isError") is True, text, data.get("durationMs"), out)

    def _subagents(self, call_id: str, details: Any, out: list[Event]) -> None:
        """What each agent the ``subagent`` tool ran cost: counted in the step (they are
        separate pi processes, so the step's own messages do not include it)."""
        for agent in pi_subagent_usages(details):
            self._outcome.usage = self._outcome.usage + agent.usage.without_latest()
            out.append(
                self._events.make(
                    Usage,
                    usage=agent.usage,
                    parent_call_id=call_id,
                    subagent=agent.name,
                    tool_calls=agent.tool_calls,
                )
            )

    def _tool_result_message(self, message: dict[str, Any], out: list[Event]) -> None:
        """A ``toolResult`` message repeats ``tool_execution_end``; it only matters when the
        end event was lost."""
        call_id = str(message.get("toolCallId") or "")
        if call_id in self._calls:
            text = content_text(message.get("content"))
            is_error = message.get("isError") is True
            self._close_call(call_id, is_error, text, message.get("durationMs"), out)

    def _close_call(
        self, call_id: str, is_error: bool, text: str, duration: Any, out: list[Event]
    ) -> None:
        call = self._calls.pop(call_id, None)
        if isinstance(duration, int | float) and not isinstance(duration, bool):
            duration_ms: float | None = float(duration)
        else:
            duration_ms = self._measured(call) if call else None
        out.append(
            self._events.make(
                ToolCallFinished,
                call_id=call_id,
                status="error" if is_error else "ok",
                result=text,
                duration_ms=duration_ms,
            )
        )

    def _measured(self, call: _Call) -> float | None:
        if self._clock is None:
            return None
        return round(max(0.0, self._clock() - call.started) * 1000, 3)

    # ------------------------------------------------------------------------ retries, end

    def _retry(self, data: dict[str, Any], out: list[Event]) -> None:
        self._blocks = {}
        self._in_message = False
        error = data.get("errorMessage")
        max_attempts = data.get("maxAttempts")
        delay = data.get("delayMs")
        out.append(
            self._events.make(
                Retry,
                attempt=as_int(data.get("attempt")) or 1,
                max_attempts=max_attempts if isinstance(max_attempts, int) else None,
                delay_ms=float(delay) if isinstance(delay, int | float) else None,
                error=readable_error(error) if isinstance(error, str) else "the call failed",
            )
        )

    def _status(
        self, exit_code: int | None, stderr_tail: str, cut_mid_message: bool
    ) -> tuple[StepStatus, str | None]:
        outcome = self._outcome
        signal_name = stopping_signal(exit_code)
        if signal_name is not None:
            return "aborted", f"pi was stopped by {signal_name} before it finished"
        if exit_code not in (None, 0):
            tail = error_tail(stderr_tail)
            if tail:
                return "error", f"pi exited with status {exit_code}: {tail}"
            return "error", f"pi exited with status {exit_code} and printed no reason"
        if outcome.retry_error is not None:
            return "error", outcome.retry_error
        if cut_mid_message:
            if exit_code is None:
                return "aborted", "the transcript ends in the middle of a message"
            return "error", "pi's output ended in the middle of a message"
        if outcome.last_stop_reason == "error":
            return "error", outcome.last_error or "the model call failed"
        if outcome.last_stop_reason == "aborted" or outcome.settled_aborted:
            return "aborted", outcome.last_error or "pi aborted the step"
        if outcome.assistant_messages == 0:
            if exit_code is None:
                return "error", "the transcript holds no answer from the model"
            return "error", "pi finished without an answer from the model"
        return "ok", None

    # ------------------------------------------------------------------------ helpers

    def _see_time(self, value: Any) -> None:
        ms = _epoch_ms(value)
        if ms is None:
            return
        if self._origin_ms is None:
            self._origin_ms = ms
        if self._latest_ms is None or ms > self._latest_ms:
            self._latest_ms = ms

    def _now(self) -> float:
        if self._clock is not None:
            return self._clock()
        if self._origin_ms is None or self._latest_ms is None:
            return 0.0
        return round((self._latest_ms - self._origin_ms) / 1000, 6)
