"""Baton's own agent loop over any OpenAI-compatible Chat Completions endpoint (architecture:
"Backends").

One step is a conversation: ``system`` = the agent's body (with the project's context files and
the agent's skills once the project is trusted: :mod:`core.backends.system_prompt`), ``user`` =
the task. Each turn
streams one model response (SSE over httpx), then runs the tool calls it asked for — one after
the other, each through the approval gate — and sends the results back, until a response asks
for no tool, or the turn limit is reached. What a person types to the running step
(``ctx.inbox``, :mod:`core.backends.steering`) joins as user messages after the tool results, before
the next request; a message that arrives during the final answer earns one more request.

Failures, and what the step does about them:

* no provider or no model → :class:`BackendError` before any event (the message says how to
  configure one);
* HTTP 408/409/429/5xx, a refused or timed-out connection, a connection that drops mid-response
  → retried with capped exponential backoff and jitter (``Retry-After`` / ``retry-after-ms``
  honoured up to a minute), at most ``limits.max_retries`` times, each announced by a ``retry``
  event; what an abandoned attempt streamed is superseded;
* other HTTP errors, a malformed stream line, an error object inside the stream, the silence
  timeout (nothing received for ``limits.silence_timeout_s``) → ``step_finished(error)`` with
  one sentence, not retried (a silent provider would otherwise hold the step for minutes
  per attempt);
* a tool problem (unknown tool, arguments that are not JSON or fail validation, a denial, a
  :class:`~core.tools.base.ToolError`) → an error *result* the model reads; the step goes on.

Bounded whatever the model answers: with a budget, each request carries the most tokens the
answer may write without passing it (``max_tokens``); one answer runs at most
``limits.max_tool_calls_per_turn`` tool calls (the rest are refused back to the model, with the
reason); an answer larger than ``limits.max_answer_bytes`` ends the step.

Cancellation is the runner cancelling the task that iterates :meth:`run`
(``cancel_grace_s = 0``): the ``async with`` blocks close the HTTP stream and a running tool is
cancelled and awaited. Iterate with :func:`contextlib.aclosing` so an abandoned iteration also
closes at once. The API key only ever goes into the ``Authorization`` header; error texts are
scrubbed of it before they become events. Every secret Baton knows of
(:class:`core.safety.redaction.Redactor`) is scrubbed from what the model is sent — tool results
above
all (``printenv``, a ``.env`` read), and the task and earlier turns — so it never reaches the
provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing, suppress
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar

import httpx
from httpx._decoders import LineDecoder

from core.backends.base import BackendError, StepContext
from core.backends.sse import (
    MalformedStreamError,
    Piece,
    PieceKind,
    ProviderStreamError,
    ResponseAccumulator,
    SSEDecoder,
    ToolCallDraft,
    error_message,
)
from core.backends.system_prompt import build_system_prompt
from core.backends.tool_calls import ToolOutcome, run_tool_call
from core.config.http_stream import StreamClient, StreamedResponse, read_whole
from core.config.pricing import load_price_table, priced
from core.config.provider_http import ProbeError, only_model, provider_headers, step_client
from core.definitions.structured import StructuredOutputError, repair_prompt
from core.model.budget import BudgetReached, TokenPrices
from core.model.events import (
    Event,
    Log,
    MessagesDelivered,
    Retry,
    StepFinished,
    TextDelta,
    ThinkingDelta,
    Usage,
    UsageStats,
)
from core.safety.redaction import OutputJoiner, Redactor
from core.safety.secrets import api_key_for
from core.tools.base import Tool
from core.tools.mcp_hub import McpHub

RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
MAX_RETRY_AFTER_S = 60.0
"""A longer ``Retry-After`` ends the step instead of silently holding it."""
DRAIN_S = 0.5
"""How long the end of a response may take after ``[DONE]`` before its connection is
dropped rather than kept for the next request (a provider sends it at once)."""

Sleep = Callable[[float], Awaitable[None]]


class _StepFailure(Exception):
    """Ends the step with ``status="error"`` and this message."""


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class _Turn:
    """What one model request produced (the attempt that succeeded)."""

    response: ResponseAccumulator = field(default_factory=ResponseAccumulator)


class OpenAICompatBackend:
    name: ClassVar[str] = "openai"
    cancel_grace_s: ClassVar[float] = 0.0

    def __init__(
        self,
        tools: Mapping[str, Tool] | None = None,
        *,
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 30.0,
        sleep: Sleep = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """``tools`` defaults to Baton's built-in tools; the rest exists so tests can make
        backoff instant (``sleep``) and keep waits short without real seconds."""
        self._tools = dict(tools) if tools is not None else None
        self._retry_base_delay = retry_base_delay
        self._retry_max_delay = retry_max_delay
        self._sleep = sleep
        self._transport = transport

    # -- the loop -------------------------------------------------------------------------

    async def run(self, ctx: StepContext) -> AsyncGenerator[Event, None]:
        provider = ctx.settings.provider()
        if provider is None:
            raise BackendError(
                "No model provider is configured: add an OpenAI-compatible provider in "
                "Settings, or set OPENAI_BASE_URL (and OPENAI_API_KEY if it needs a key)."
            )
        key = api_key_for(provider)
        model = ctx.settings.resolve_model(ctx.model or ctx.settings.default_model)
        if not model:
            model = await self._only_model(ctx, provider.base_url, key)
        headers = provider_headers(key, Accept="text/event-stream")
        offered = self._offered_tools(ctx)
        async with contextlib.AsyncExitStack() as servers:
            hub = ctx.mcp
            if hub is None and ctx.agent.uses_mcp:  # no run to share them with
                hub = await servers.enter_async_context(McpHub())
            if hub is not None and ctx.agent.uses_mcp:
                from core.backends.mcp_offer import offer_step_mcp_tools  # only when asked for

                mcp_tools, warnings = await offer_step_mcp_tools(ctx, hub)
                offered.update(mcp_tools)
                for warning in warnings:
                    yield ctx.make(Log, level="warning", message=ctx.scrub(warning))
            async with aclosing(
                self._converse(ctx, provider, key, model, headers, offered)
            ) as steps:
                async for event in steps:
                    yield event

    async def _converse(
        self,
        ctx: StepContext,
        provider: Any,
        key: str | None,
        model: str,
        headers: dict[str, str],
        offered: dict[str, Tool],
    ) -> AsyncGenerator[Event, None]:
        redactor = ctx.redactor or Redactor.for_settings(ctx.settings)
        scrub = redactor.scrub
        outputs = OutputJoiner(redactor)  # a key printed in pieces over several calls
        messages: list[dict[str, Any]] = []
        spec = ctx.agent.output
        system = build_system_prompt(ctx)  # the body, and the project's context and skills
        ctx.skill_folders = system.skill_folders
        for note in system.notes:
            yield note
        if system.loaded is not None:
            yield system.loaded
        if system.text.strip():
            messages.append({"role": "system", "content": scrub(system.text)})
        if ctx.continues is not None:  # Continue: the finished conversation, then the follow-up
            messages.extend(dict(message) for message in ctx.continues.messages)
        messages.append({"role": "user", "content": scrub(ctx.task)})
        request: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if offered:
            request["tools"] = [tool.schema() for tool in offered.values()]
        effort = ctx.agent.reasoning_effort
        if effort and effort != "off":  # the agent's `thinking:`; off = ask for none
            request["reasoning_effort"] = effort
        if spec is not None and provider.json_schema_output:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": spec.json_schema},
            }
        limits = ctx.settings.limits
        repaired = False
        timeout = httpx.Timeout(
            connect=limits.connect_timeout_s,
            read=limits.silence_timeout_s,
            write=limits.silence_timeout_s,
            pool=limits.connect_timeout_s,
        )
        url = f"{provider.base_url}/chat/completions"
        await load_price_table()
        total = UsageStats()
        output = ""
        async with step_client(timeout, self._transport) as client:
            ctx.inbox.open()
            try:
                for turn_number in range(1, limits.max_turns + 1):
                    if ctx.cancelled.is_set():
                        yield ctx.make(StepFinished, status="aborted", output=output, usage=total)
                        return
                    if ctx.budget is not None:
                        try:
                            await ctx.budget.check(ctx.step)
                        except BudgetReached as reached:
                            raise _StepFailure(str(reached)) from None
                    # A person's messages: after the tool results, before the request.
                    said = ctx.inbox.take()
                    if said:
                        messages.extend({"role": "user", "content": scrub(t)} for t in said)
                        yield ctx.make(MessagesDelivered, count=len(said))
                    _bound_the_answer(ctx, request, provider.max_tokens_field, model)
                    turn = _Turn()
                    requesting = self._request(ctx, client, url, headers, request, turn, timeout)
                    async with aclosing(requesting) as events:
                        async for event in events:
                            yield event
                    response = turn.response
                    usage = priced(response.usage_stats(model), ctx.settings.prices)
                    total += usage
                    yield ctx.make(Usage, usage=usage)
                    if response.text:
                        output = response.text
                    calls = response.tool_calls()
                    if not calls and ctx.inbox.has_pending:
                        # Said while the answer streamed: the model hears it before the end.
                        messages.append({"role": "assistant", "content": scrub(response.text)})
                        continue
                    if not calls and spec is not None:
                        try:
                            structured = spec.validate_answer(output)
                        except StructuredOutputError as error:
                            if repaired:
                                raise _StepFailure(
                                    f"the answer is not the declared output, even after one "
                                    f"correction: {error}"
                                ) from None
                            repaired = True  # one repair request, then the step fails
                            messages.append({"role": "assistant", "content": scrub(response.text)})
                            messages.append({"role": "user", "content": repair_prompt(error)})
                            continue
                        yield ctx.make(
                            StepFinished,
                            status="ok",
                            output=output,
                            usage=total,
                            structured=structured,
                        )
                        return
                    if not calls:
                        yield ctx.make(StepFinished, status="ok", output=output, usage=total)
                        return
                    for draft in calls:
                        draft.id = draft.id or f"call_{turn_number}_{draft.index}"
                    calls, refused = (
                        calls[: limits.max_tool_calls_per_turn],
                        len(calls[limits.max_tool_calls_per_turn :]),
                    )
                    messages.append(_assistant_message(response.text, calls, scrub))
                    for draft in calls:
                        outcome = ToolOutcome()
                        calling = run_tool_call(
                            ctx, draft.id, draft.name, draft.arguments, offered, outcome
                        )
                        async with aclosing(calling) as events:
                            async for event in events:
                                yield event
                        messages.append(
                            {
                                "role": "tool",
                                "tool_call_id": draft.id,
                                "content": outputs.scrub(outcome.result),
                            }
                        )
                    if refused:
                        refusal = _refusal(refused, limits.max_tool_calls_per_turn)
                        messages.append({"role": "user", "content": refusal})
                yield ctx.make(
                    StepFinished,
                    status="error",
                    output=output,
                    error=f"stopped after {limits.max_turns} turns (turn limit)",
                    usage=total,
                )
            except _StepFailure as failure:
                message = scrub(str(failure))
                yield ctx.make(
                    StepFinished, status="error", output=output, error=message, usage=total
                )

    async def _only_model(self, ctx: StepContext, base_url: str, key: str | None) -> str:
        """No model was chosen anywhere: a server that serves exactly one model needs no
        set-up (an Ollama with one model, a vLLM); otherwise say where to choose."""
        try:
            return await only_model(
                base_url,
                key,
                timeout_s=ctx.settings.limits.connect_timeout_s,
                transport=self._transport,
            )
        except ProbeError as error:
            raise BackendError(
                f"No model: {error} Choose one in Settings (Default model), with --model, or "
                f"with a 'model:' line in the agent file of {ctx.agent.name}."
            ) from None

    def _offered_tools(self, ctx: StepContext) -> dict[str, Tool]:
        """The step's allowed tools that Baton has, in the step's order."""
        if self._tools is None:
            from core.tools.registry import builtin_tools  # only this backend needs them

            self._tools = builtin_tools()
        return {name: self._tools[name] for name in ctx.tools if name in self._tools}

    # -- one model request, with retries --------------------------------------------------

    async def _request(
        self,
        ctx: StepContext,
        client: StreamClient,
        url: str,
        headers: dict[str, str],
        body: dict[str, Any],
        turn: _Turn,
        http_timeout: httpx.Timeout,
    ) -> AsyncGenerator[Event, None]:
        max_retries = ctx.settings.limits.max_retries
        retries = 0
        while True:
            turn.response = ResponseAccumulator()
            try:
                attempt = self._attempt(
                    ctx, client, url, headers, body, turn.response, http_timeout
                )
                async with aclosing(attempt) as events:
                    async for event in events:
                        yield event
                return
            except _Retryable as failure:
                attempts = retries + 1
                if retries >= max_retries:
                    plural = "s" if attempts != 1 else ""
                    raise _StepFailure(f"{failure} (after {attempts} attempt{plural})") from None
                if failure.retry_after is not None and failure.retry_after > MAX_RETRY_AFTER_S:
                    raise _StepFailure(
                        f"{failure}; the provider asked to wait {failure.retry_after:g} s "
                        "before retrying"
                    ) from None
                retries += 1
                delay = self._backoff(retries, failure.retry_after)
                yield ctx.make(
                    Retry,
                    attempt=retries,
                    max_attempts=max_retries,
                    delay_ms=round(delay * 1000, 1),
                    error=str(failure),
                )
                await self._sleep(delay)

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, retry_after)
        ceiling = min(self._retry_max_delay, self._retry_base_delay * 2.0 ** (retry - 1))
        return ceiling * random.uniform(0.5, 1.0)

    async def _attempt(
        self,
        ctx: StepContext,
        client: StreamClient,
        url: str,
        headers: dict[str, str],
        body: dict[str, Any],
        response_acc: ResponseAccumulator,
        http_timeout: httpx.Timeout,
    ) -> AsyncGenerator[Event, None]:
        limits = ctx.settings.limits
        base_url = url.removesuffix("/chat/completions")
        try:
            async with client.stream(
                "POST", url, json=body, headers=headers, timeout=http_timeout
            ) as response:
                if response.status_code != 200:
                    raise _http_failure(response, await response.aread())
                chunks = _bounded(response.aiter_text(), limits.max_answer_bytes)
                if "json" in response.headers.get("content-type", ""):
                    # A server that ignores ``stream: true`` answers with one object.
                    raw = "".join([chunk async for chunk in chunks])
                    for piece in response_acc.feed_payload(raw):
                        yield _piece_event(ctx, piece)
                    response_acc.finish_reason = response_acc.finish_reason or "stop"
                    return
                decoder = SSEDecoder()
                done = False
                batches = _line_batches(chunks)
                async for lines in batches:
                    pieces, done, failure = _read_lines(lines, decoder, response_acc)
                    for piece in pieces:
                        yield _piece_event(ctx, piece)
                    if failure is not None:
                        raise failure
                    if done:
                        break
                tail = None if done else decoder.flush()
                if tail is not None and tail.strip() == "[DONE]":
                    done = True
                elif tail is not None:
                    for piece in response_acc.feed_payload(tail):
                        yield _piece_event(ctx, piece)
                if not done and not response_acc.complete:
                    raise _Retryable("the connection dropped mid-response")
                if done:
                    await _read_to_the_end(batches, arrived=read_whole(response))
        except httpx.ConnectTimeout:
            raise _Retryable(
                f"could not connect to {base_url} within {limits.connect_timeout_s:g} s"
            ) from None
        except httpx.ConnectError as error:
            raise _Retryable(f"cannot connect to {base_url}: {error}") from None
        except (httpx.ReadTimeout, httpx.WriteTimeout):
            raise _StepFailure(
                f"the provider sent nothing for {limits.silence_timeout_s:g} s (silence timeout)"
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
            raise _Retryable("the connection dropped mid-response") from None
        except httpx.PoolTimeout:
            raise _Retryable("timed out waiting for a free connection") from None
        except MalformedStreamError as error:
            raise _StepFailure(f"the provider sent a malformed stream line: {error}") from None
        except _AnswerTooLarge:
            raise _StepFailure(
                f"the model's answer passed {limits.max_answer_bytes / 1e6:g} MB "
                "(limits.max_answer_bytes); the step stops"
            ) from None
        except ProviderStreamError as error:
            raise _StepFailure(f"the provider reported an error: {error}") from None


# -- helpers ------------------------------------------------------------------------------


class _AnswerTooLarge(Exception):
    """The response passed ``limits.max_answer_bytes``."""


async def _bounded(chunks: AsyncIterator[str], limit: int) -> AsyncIterator[str]:
    """``chunks`` until their total passes ``limit`` characters (then :class:`_AnswerTooLarge`):
    counted as they arrive, so an endless answer — or one endless line — is never held whole."""
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise _AnswerTooLarge
        yield chunk


def _read_lines(
    lines: list[str], decoder: SSEDecoder, answer: ResponseAccumulator
) -> tuple[list[Piece], bool, Exception | None]:
    """One read's lines fed to ``answer``: the pieces they stream, joined where they follow
    each other in kind (one delta for what came in one read), whether ``[DONE]`` came, and
    the stream's error, if a line was one (raised after the pieces before it are passed on).

    A fast model's chunks arrive many to a read: each was an event to redact, record, fold
    and show, for text that reaches the window in the same turn anyway. Joined, a batch
    item's two answers make 10 events instead of 14 (benchmarks/batch.py); at a model's
    pace, a read holds one chunk and nothing changes."""
    runs: list[tuple[PieceKind, list[str]]] = []
    done, failure = False, None
    for line in lines:
        payload = decoder.feed(line)
        if payload is None:
            continue
        if payload.strip() == "[DONE]":
            done = True
            break
        try:
            fed = answer.feed_payload(payload)
        except (MalformedStreamError, ProviderStreamError) as error:
            failure = error
            break
        for kind, text in fed:
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(text)
            else:
                runs.append((kind, [text]))
    return [(kind, "".join(texts)) for kind, texts in runs], done, failure


async def _line_batches(chunks: AsyncIterator[str]) -> AsyncIterator[list[str]]:
    """The lines of ``chunks`` (``\\n``, ``\\r\\n`` or ``\\r``, as ``aiter_lines`` splits them),
    a read's lines at a time: resuming a generator for each line (an answer's every chunk is
    two lines) cost more than splitting them."""
    decoder = LineDecoder()
    async for chunk in chunks:
        lines = decoder.decode(chunk)
        if lines:
            yield lines
    rest = decoder.flush()
    if rest:
        yield rest


def _bound_the_answer(ctx: StepContext, request: dict[str, Any], field: str, model: str) -> None:
    """Put in ``request`` the most tokens the answer may write within the budget left (none
    without a budget). The prompt is estimated at four characters a token."""
    request.pop(field, None)
    if ctx.budget is None:
        return
    prompt_tokens = len(json.dumps(request["messages"])) // 4
    allowance = ctx.budget.output_allowance(
        ctx.step, prompt_tokens, _token_prices(model, ctx.settings.prices)
    )
    if allowance is not None:
        request[field] = allowance


def _token_prices(model: str, overrides: Mapping[str, Any]) -> TokenPrices | None:
    """Dollars per input and output token of ``model``; None when it has no price."""
    million = 1_000_000
    reading = priced(UsageStats(input=million, model=model, priced=False), overrides)
    writing = priced(UsageStats(output=million, model=model, priced=False), overrides)
    if not (reading.priced and writing.priced):
        return None
    return TokenPrices(input=reading.cost / million, output=writing.cost / million)


def _refusal(count: int, limit: int) -> str:
    """What the model is told about the tool calls of its answer past the limit."""
    plural = "s" if count != 1 else ""
    return (
        f"{count} more tool call{plural} in your last answer {'were' if plural else 'was'} "
        f"not run: at most {limit} tool calls run per answer (a setting, "
        "limits.max_tool_calls_per_turn). Ask again for the ones still needed."
    )


async def _read_to_the_end(rest: AsyncIterator[object], *, arrived: bool) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body), for at most
    :data:`DRAIN_S`: a response read to its end leaves its connection open for the next
    request, one closed early takes the connection with it — a new connection per request
    was a large part of a batch's CPU (benchmarks/batch.py). Anything there is ignored.
    ``arrived``: the whole body is in already (the usual case: the end comes in the same
    read as ``[DONE]``), so the rest is read without waiting and needs no timer."""
    with suppress(TimeoutError, httpx.HTTPError):
        async with asyncio.timeout(None if arrived else DRAIN_S):  # None: no timer at all
            async for _ in rest:
                pass


def _piece_event(ctx: StepContext, piece: tuple[str, str]) -> Event:
    kind, text = piece
    if kind == "thinking":
        return ctx.make(ThinkingDelta, text=text)
    return ctx.make(TextDelta, text=text)


def _assistant_message(
    text: str, calls: list[ToolCallDraft], scrub: Callable[[str], str]
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": scrub(text) or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": scrub(call.arguments or "{}")},
            }
            for call in calls
        ],
    }


def _http_failure(response: StreamedResponse, raw: bytes) -> Exception:
    status = response.status_code
    try:
        detail = error_message(json.loads(raw))
    except ValueError:
        detail = raw.decode("utf-8", "replace").strip()[:300]
    detail = detail or response.reason_phrase or "no details"
    if status in RETRYABLE_STATUS:
        return _Retryable(f"HTTP {status}: {detail}", _retry_after(response.headers))
    hint = ""
    if status in (401, 403):
        hint = " (check the provider's API key)"
    elif status == 404:
        hint = " (check the model name and the provider's base URL)"
    return _StepFailure(f"the provider refused the request with HTTP {status}: {detail}{hint}")


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` (OpenAI) or ``Retry-After`` (seconds or an
    HTTP date); None when absent or unreadable."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
