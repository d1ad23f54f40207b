"""Reading an OpenAI-compatible Chat Completions stream: SSE lines in, one response out.

Two small pieces, both free of I/O so they can be tested line by line:

* :class:`SSEDecoder` turns text lines into ``data`` payloads (Server-Sent Events: ``data:``
  fields joined until a blank line; comments and ``event:``/``id:``/``retry:`` ignored).
* :class:`ResponseAccumulator` folds ``chat.completion.chunk`` objects into one response:
  text, reasoning, tool calls assembled by ``index`` from argument fragments, the finish
  reason, usage and the model. Each feed returns the text and reasoning pieces to show now.

Providers differ in small ways and both classes absorb them: reasoning arrives as
``reasoning_content`` (DeepSeek, vLLM) or ``reasoning`` (OpenRouter, Ollama); some servers
leave out a tool call's ``index`` or send a whole call in one chunk; some end without
``[DONE]`` after a ``finish_reason``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic_core

from core.model.events import UsageStats


class MalformedStreamError(Exception):
    """A line or chunk that is not what the protocol allows; the message quotes it."""


class ProviderStreamError(Exception):
    """The provider reported an error inside the stream (``data: {"error": ...}``)."""


_SSE_FIELDS = ("event", "id", "retry")


class SSEDecoder:
    """Feed lines without their line ending; get a payload back when an event is complete."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        if not line:
            return self.flush()
        if line.startswith(":"):
            return None  # a comment, often a keep-alive
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
            return None
        if name in _SSE_FIELDS:
            return None
        raise MalformedStreamError(_quote(line))

    def flush(self) -> str | None:
        """The pending payload (at a blank line, or when the stream ends without one)."""
        if not self._data:
            return None
        payload = "\n".join(self._data)
        self._data = []
        return payload


@dataclass
class ToolCallDraft:
    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""


PieceKind = Literal["text", "thinking"]
Piece = tuple[PieceKind, str]


@dataclass
class ResponseAccumulator:
    """One model response being assembled from stream chunks."""

    text: str = ""
    reasoning: str = ""
    calls: dict[int, ToolCallDraft] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None

    def feed_payload(self, payload: str) -> list[Piece]:
        try:
            chunk = _parsed(payload)
        except ValueError:
            raise MalformedStreamError(_quote(payload)) from None
        if not isinstance(chunk, dict):
            raise MalformedStreamError(_quote(payload))
        return self.feed(chunk)

    def feed(self, chunk: dict[str, Any]) -> list[Piece]:
        if chunk.get("error"):
            raise ProviderStreamError(error_message(chunk))
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        pieces: list[Piece] = []
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # Baton never asks for n > 1
            delta = choice.get("delta") or choice.get("message") or {}
            pieces += self._delta(delta)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return pieces

    def _delta(self, delta: dict[str, Any]) -> list[Piece]:
        pieces: list[Piece] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning += reasoning
            pieces.append(("thinking", reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text += content
            pieces.append(("text", content))
        for position, call in enumerate(delta.get("tool_calls") or []):
            if isinstance(call, dict):
                self._tool_call_piece(position, call)
        return pieces

    def _tool_call_piece(self, position: int, piece: dict[str, Any]) -> None:
        call_id = piece.get("id") or ""
        index = piece.get("index")
        if not isinstance(index, int):
            # No index: a new id starts a new call, otherwise it continues the latest one.
            known = [d.index for d in self.calls.values() if call_id and d.id == call_id]
            if known:
                index = known[0]
            elif call_id or not self.calls:
                index = max(self.calls, default=-1) + 1
            else:
                index = max(self.calls)
        draft = self.calls.setdefault(index, ToolCallDraft(index=index))
        if call_id:
            draft.id = call_id
        function = piece.get("function") or {}
        if function.get("name"):
            draft.name = str(function["name"])
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            draft.arguments += arguments
        elif isinstance(arguments, dict):  # a few servers send an object, not a string
            draft.arguments += json.dumps(arguments)

    @property
    def complete(self) -> bool:
        return self.finish_reason is not None

    def tool_calls(self) -> list[ToolCallDraft]:
        return [self.calls[index] for index in sorted(self.calls)]

    def usage_stats(self, requested_model: str) -> UsageStats:
        """Baton's usage of this response. ``input`` excludes cache reads (OpenAI's
        ``prompt_tokens`` includes them), the way pi counts, so both backends' usage lines
        mean the same thing."""
        usage = self.usage or {}
        prompt = _int(usage.get("prompt_tokens"))
        completion = _int(usage.get("completion_tokens"))
        details = usage.get("prompt_tokens_details") or {}
        cache_read = _int(details.get("cached_tokens") if isinstance(details, dict) else 0)
        cache_write = _int(usage.get("cache_creation_input_tokens"))
        if isinstance(details, dict):
            cache_write = cache_write or _int(details.get("cache_write_tokens"))
        cost = usage.get("cost")
        return UsageStats(
            turns=1,
            input=max(0, prompt - cache_read),
            output=completion,
            cache_read=cache_read,
            cache_write=cache_write,
            cost=float(cost) if isinstance(cost, int | float) else 0.0,
            context_tokens=prompt + completion,
            model=self.model or requested_model,
            priced=isinstance(cost, int | float),
        )


def error_message(data: Any) -> str:
    """The human part of an error body: OpenAI's ``{"error": {"message"}}`` and variants."""
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            for key in ("message", "detail", "error"):
                if isinstance(error.get(key), str) and error[key]:
                    return str(error[key])
        if isinstance(error, str) and error:
            return error
        if isinstance(data.get("detail"), str):
            return str(data["detail"])
    return ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _parsed(payload: str) -> Any:
    """One chunk's JSON. pydantic's parser (Rust) reads a chunk in a third of the standard
    library's time, and a step's answer comes in dozens to thousands of chunks; it refuses a
    lone surrogate (``"\\ud800"``) that the standard library reads, so a chunk it refuses is
    read by the standard library, which decides."""
    try:
        return pydantic_core.from_json(payload)
    except ValueError:
        return json.loads(payload)


def _quote(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
