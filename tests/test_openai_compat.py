"""Baton's own agent loop against the scripted server: streaming, tools, approvals, faults.

Every test drives :class:`OpenAICompatBackend` directly with a real :class:`StepContext` and
:class:`ApprovalGate`; the only fake is the model (``tests/llm_server.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path
from typing import Any, ClassVar

import keyring
import pytest
from keyring.backend import KeyringBackend
from pydantic import BaseModel

from core.backends.base import BackendError, RunClock, StepContext
from core.backends.openai_compat import OpenAICompatBackend
from core.backends.sse import ResponseAccumulator, SSEDecoder
from core.config.settings import Limits, Provider, Settings
from core.definitions.agents import AgentDefinition
from core.model.events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    Log,
    Retry,
    StepFinished,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    Usage,
    event_to_json,
)
from core.safety.approvals import (
    ApprovalAnswer,
    ApprovalGate,
    ApprovalRequest,
    Responder,
    approve_all,
)
from core.safety.secrets import (
    SecretsError,
    api_key_for,
    delete_api_key,
    keyring_available,
    store_api_key,
)
from core.tools.base import Tool, ToolContext, ToolError
from tests.llm_server import LLMServer, Reply, Tokens, ToolCall
from tests.test_http_stream import RawServer

# -- test tools ---------------------------------------------------------------------------


class Echo(Tool):
    name: ClassVar[str] = "echo"
    description: ClassVar[str] = "Repeat a text."

    class Params(BaseModel):
        text: str

    async def run(self, params: Any, ctx: ToolContext) -> str:
        return f"echo: {params.text}"


class Broken(Tool):
    name: ClassVar[str] = "broken"
    description: ClassVar[str] = "Always fails."

    class Params(BaseModel):
        crash: bool = False

    async def run(self, params: Any, ctx: ToolContext) -> str:
        if params.crash:
            raise RuntimeError("kaboom")
        raise ToolError("no such file: missing.txt")


class Streamer(Tool):
    """Emits output, then waits until the test has *seen* that output as an event: proves
    output reaches the stream while the tool is still running."""

    name: ClassVar[str] = "streamer"
    description: ClassVar[str] = "Streams output."
    release: asyncio.Event
    cancelled: bool = False

    class Params(BaseModel):
        pass

    async def run(self, params: Any, ctx: ToolContext) -> str:
        ctx.emit_output("line 1\n")
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            # cleanup that takes a while, like killing a process: a worker thread's answer
            await asyncio.to_thread(lambda: None)
            Streamer.cancelled = True
            raise
        ctx.emit_output("line 2\n")
        return "line 1\nline 2\n"


class Danger(Tool):
    name: ClassVar[str] = "danger"
    description: ClassVar[str] = "Needs approval."
    ran_with: ClassVar[list[str]] = []

    class Params(BaseModel):
        command: str

    async def run(self, params: Any, ctx: ToolContext) -> str:
        Danger.ran_with.append(params.command)
        return f"ran {params.command}"


POLICY: dict[str, Any] = {"echo": "allow", "broken": "allow", "streamer": "allow", "danger": "ask"}
ALL_TOOLS = ("echo", "broken", "streamer", "danger")


# -- harness ------------------------------------------------------------------------------


async def _no_wait(delay: float) -> None:
    """The back-off, not waited for."""


class Harness:
    def __init__(self, server: LLMServer, tmp_path: Path) -> None:
        self.server = server
        self.cwd = tmp_path
        self.sleeps: list[float] = []
        self.events: list[Event] = []
        self.streamer = Streamer()
        self.streamer.release = asyncio.Event()
        self.tools: dict[str, Tool] = {
            "echo": Echo(),
            "broken": Broken(),
            "streamer": self.streamer,
            "danger": Danger(),
        }

    async def sleep(self, delay: float) -> None:
        """The back-off, recorded instead of waited for."""
        self.sleeps.append(delay)

    def backend(self) -> OpenAICompatBackend:
        return OpenAICompatBackend(self.tools, retry_base_delay=0.001, sleep=self.sleep)

    def context(
        self,
        settings: Settings | None = None,
        *,
        tools: tuple[str, ...] = ALL_TOOLS,
        responder: Responder = approve_all,
        system_prompt: str = "You are a careful test agent.",
        model: str | None = "test-model",
        task: str = "Do the thing.",
    ) -> StepContext:
        clock = RunClock()
        return StepContext(
            run_id="run-1",
            step=0,
            agent=AgentDefinition(name="tester", description="t", system_prompt=system_prompt),
            task=task,
            cwd=self.cwd,
            model=model,
            tools=tools,
            settings=settings or self.server.settings(),
            approvals=ApprovalGate(POLICY, responder, self.events.append, clock.now),
            clock=clock,
        )

    async def run(self, ctx: StepContext | None = None) -> list[Event]:
        # a bound, not a wait: a backend that hangs fails the test instead of the suite
        async with (
            asyncio.timeout(10),
            aclosing(self.backend().run(ctx or self.context())) as stream,
        ):
            async for event in stream:
                self.events.append(event)
        return self.events

    def of(self, kind: type[Any] | tuple[type[Any], ...]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def finished(self) -> StepFinished:
        assert isinstance(self.events[-1], StepFinished)
        return self.events[-1]


@pytest.fixture
def h(llm_server: LLMServer, tmp_path: Path) -> Iterator[Harness]:
    Danger.ran_with = []
    Streamer.cancelled = False
    yield Harness(llm_server, tmp_path)


def _limits(**values: Any) -> Limits:
    return Limits.model_validate(values)


# -- answers and tools --------------------------------------------------------------------


async def test_plain_answer_streams_in_pieces(h: Harness) -> None:
    h.server.queue(Reply.answer("The answer is 42.", reasoning="Let me think.", pieces=4))
    await h.run(h.context(tools=("echo",)))
    # A delta per read (the four chunks come in four reads or fewer), none of them empty.
    assert all(delta.text for delta in h.of(TextDelta))
    assert "".join(e.text for e in h.of(TextDelta)) == "The answer is 42."
    assert "".join(e.text for e in h.of(ThinkingDelta)) == "Let me think."
    assert h.finished.status == "ok"
    assert h.finished.output == "The answer is 42."
    assert [type(e) for e in h.events[-2:]] == [Usage, StepFinished]
    (request,) = h.server.requests
    assert request.body["model"] == "test-model"
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.messages == [
        {"role": "system", "content": "You are a careful test agent."},
        {"role": "user", "content": "Do the thing."},
    ]
    assert request.tool_names == ["echo"]
    assert request.body["tools"][0]["function"]["parameters"]["required"] == ["text"]


async def test_chunks_read_together_make_one_delta_of_each_kind(h: Harness) -> None:
    answer = Reply.answer("The answer is 42.", reasoning="Let me think.", pieces=8)
    h.server.queue(dataclasses.replace(answer, burst=True))
    await h.run(h.context())
    assert [(type(e), e.text) for e in h.of((ThinkingDelta, TextDelta))] == [
        (ThinkingDelta, "Let me think."),
        (TextDelta, "The answer is 42."),
    ]
    assert h.finished.output == "The answer is 42."


async def test_no_system_message_and_no_tools_key_when_empty(h: Harness) -> None:
    h.server.queue(Reply.answer("ok"))
    await h.run(h.context(tools=("nonexistent",), system_prompt="  "))
    (request,) = h.server.requests
    assert [m["role"] for m in request.messages] == ["user"]
    assert "tools" not in request.body


async def test_tool_round_trip(h: Harness) -> None:
    h.server.queue(Reply.tool("echo", {"text": "hi"}, text="Checking."), Reply.answer("Done."))
    await h.run()
    (started,) = h.of(ToolCallStarted)
    assert (started.tool, started.arguments) == ("echo", {"text": "hi"})
    (finished,) = h.of(ToolCallFinished)
    assert (finished.call_id, finished.status, finished.result) == (
        started.call_id,
        "ok",
        "echo: hi",
    )
    assert finished.duration_ms is not None
    assert h.finished.output == "Done."
    _, second = h.server.requests
    assistant, tool_message = second.messages[-2:]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "Checking."
    assert assistant["tool_calls"][0]["id"] == started.call_id
    assert tool_message == {"role": "tool", "tool_call_id": started.call_id, "content": "echo: hi"}


async def test_two_tool_calls_in_one_response_run_in_order(h: Harness) -> None:
    h.server.queue(
        Reply.tools(ToolCall("echo", {"text": "a"}), ToolCall("echo", {"text": "b"})),
        Reply.answer("Both done."),
    )
    await h.run()
    assert [e.result for e in h.of(ToolCallFinished)] == ["echo: a", "echo: b"]
    kinds = [
        type(e).__name__ for e in h.events if isinstance(e, ToolCallStarted | ToolCallFinished)
    ]
    assert kinds == ["ToolCallStarted", "ToolCallFinished"] * 2
    contents = [m["content"] for m in h.server.requests[1].tool_messages]
    assert contents == ["echo: a", "echo: b"]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (ToolCall("rm_rf", {}), "unknown tool 'rm_rf' (available tools: echo, broken"),
        (ToolCall("echo", '{"text": "unterminated'), "arguments are not valid JSON"),
        (ToolCall("echo", "[1, 2]"), "arguments must be a JSON object"),
        (ToolCall("echo", {"txt": "typo"}), "invalid arguments for echo"),
        (ToolCall("broken", {}), "no such file: missing.txt"),
    ],
)
async def test_tool_problems_become_error_results_and_the_loop_goes_on(
    h: Harness, call: ToolCall, expected: str
) -> None:
    h.server.queue(Reply.tools(call), Reply.answer("I adapted."))
    await h.run()
    (finished,) = h.of(ToolCallFinished)
    assert finished.status == "error"
    assert expected in finished.result
    assert expected in h.server.requests[1].tool_messages[0]["content"]
    assert h.finished.status == "ok"
    assert h.finished.output == "I adapted."


async def test_unparseable_arguments_are_shown_raw(h: Harness) -> None:
    h.server.queue(Reply.tool("echo", "{oops"), Reply.answer("ok"))
    await h.run()
    assert h.of(ToolCallStarted)[0].arguments == {"_raw": "{oops"}


async def test_a_crashing_tool_is_an_error_result_and_a_log(h: Harness) -> None:
    h.server.queue(Reply.tool("broken", {"crash": True}), Reply.answer("ok"))
    await h.run()
    (finished,) = h.of(ToolCallFinished)
    assert finished.status == "error"
    assert "RuntimeError: kaboom" in finished.result
    assert "kaboom" in h.of(Log)[0].message


async def test_tool_output_is_streamed_while_the_tool_runs(h: Harness) -> None:
    h.server.queue(Reply.tool("streamer"), Reply.answer("ok"))
    ctx = h.context()
    async with asyncio.timeout(10), aclosing(h.backend().run(ctx)) as stream:
        async for event in stream:
            h.events.append(event)
            if isinstance(event, ToolCallOutput) and event.chunk == "line 1\n":
                assert not h.of(ToolCallFinished)
                h.streamer.release.set()
    assert [e.chunk for e in h.of(ToolCallOutput)] == ["line 1\n", "line 2\n"]
    assert h.of(ToolCallFinished)[0].result == "line 1\nline 2\n"


async def test_default_tools_are_baton_builtins(h: Harness) -> None:
    (h.cwd / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    h.server.queue(Reply.tool("read", {"path": "notes.txt"}), Reply.answer("Read it."))
    ctx = h.context(tools=("read", "ls", "no-such-tool"))
    async with aclosing(OpenAICompatBackend(sleep=_no_wait).run(ctx)) as stream:
        h.events += [event async for event in stream]
    assert h.server.requests[0].tool_names == ["read", "ls"]
    (finished,) = h.of(ToolCallFinished)
    assert finished.status == "ok"
    assert "beta" in h.server.requests[1].tool_messages[0]["content"]


# -- approvals ----------------------------------------------------------------------------


async def test_denial_reaches_the_model_and_the_step_goes_on(h: Harness) -> None:
    async def deny(request: ApprovalRequest) -> ApprovalAnswer:
        assert (request.tool, request.arguments) == ("danger", {"command": "rm -rf /"})
        assert request.cwd == str(h.cwd)
        return ApprovalAnswer(decision="deny", reason="too dangerous, list files instead")

    h.server.queue(Reply.tool("danger", {"command": "rm -rf /"}), Reply.answer("Understood."))
    await h.run(h.context(responder=deny))
    assert Danger.ran_with == []
    (finished,) = h.of(ToolCallFinished)
    assert finished.result == "Denied by the user: too dangerous, list files instead"
    tool_message = h.server.requests[1].tool_messages[0]
    assert "too dangerous, list files instead" in tool_message["content"]
    requested = h.of(ApprovalRequested)[0]
    assert requested.call_id == finished.call_id
    assert h.of(ApprovalResolved)[0].decision == "deny"
    assert h.finished.status == "ok"


async def test_approval_with_edited_arguments_runs_the_edit(h: Harness) -> None:
    async def edit(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(decision="approve", updated_arguments={"command": "ls"})

    h.server.queue(Reply.tool("danger", {"command": "rm -rf /"}), Reply.answer("ok"))
    await h.run(h.context(responder=edit))
    assert Danger.ran_with == ["ls"]
    assert h.of(ToolCallFinished)[0].result == "ran ls"


# -- limits and usage ---------------------------------------------------------------------


async def test_turn_limit(h: Harness) -> None:
    h.server.responder = lambda body: Reply.tool("echo", {"text": "again"}, text="Still going.")
    settings = h.server.settings(limits=_limits(max_turns=3))
    await h.run(h.context(settings))
    assert h.finished.status == "error"
    assert h.finished.error == "stopped after 3 turns (turn limit)"
    assert h.finished.output == "Still going."
    assert len(h.server.requests) == 3
    assert len(h.of(Usage)) == 3


async def test_usage_is_reported_per_response_and_summed(h: Harness) -> None:
    h.server.queue(
        Reply.tool("echo", {"text": "x"}, tokens=Tokens(prompt=100, completion=10, cached=40)),
        Reply.answer("ok", tokens=Tokens(prompt=200, completion=20)),
    )
    await h.run()
    first, second = (e.usage for e in h.of(Usage))
    assert (first.turns, first.input, first.output, first.cache_read) == (1, 60, 10, 40)
    assert (first.context_tokens, first.model) == (110, "test-model")
    total = h.finished.usage
    assert (total.turns, total.input, total.output, total.cache_read) == (2, 260, 30, 40)
    assert total.context_tokens == 220
    assert total == first + second


async def test_usage_of_a_known_model_is_priced_from_the_table(h: Harness) -> None:
    h.server.queue(Reply.answer("ok", tokens=Tokens(prompt=1_000_000, completion=1_000_000)))
    await h.run(h.context(model="gpt-4o-mini"))
    # gpt-4o-mini: $0.15 per million input tokens, $0.60 per million output tokens.
    assert h.finished.usage.cost == pytest.approx(0.75)
    assert h.finished.usage.priced


async def test_usage_of_an_unknown_model_is_unpriced_unless_configured(h: Harness) -> None:
    h.server.queue(Reply.answer("a", tokens=Tokens(prompt=1000, completion=10)))
    await h.run()
    assert (h.finished.usage.cost, h.finished.usage.priced) == (0.0, False)
    h.events.clear()
    h.server.queue(Reply.answer("b", tokens=Tokens(prompt=2_000_000, completion=0)))
    settings = h.server.settings(prices={"test-model": {"input": 0.5, "output": 1.0}})
    await h.run(h.context(settings))
    assert (h.finished.usage.cost, h.finished.usage.priced) == (1.0, True)


# -- faults -------------------------------------------------------------------------------


async def test_server_error_is_retried(h: Harness) -> None:
    h.server.queue(Reply.error(500, "upstream exploded"), Reply.answer("Recovered."))
    await h.run()
    (retry,) = h.of(Retry)
    assert (retry.attempt, retry.max_attempts) == (1, 4)
    assert retry.error == "HTTP 500: upstream exploded"
    assert h.finished.status == "ok"
    assert h.finished.output == "Recovered."
    assert len(h.sleeps) == 1


async def test_rate_limit_honours_retry_after(h: Harness) -> None:
    h.server.queue(Reply.rate_limited(retry_after=1), Reply.answer("ok"))
    await h.run()
    (retry,) = h.of(Retry)
    assert retry.delay_ms == 1000
    assert h.sleeps == [1.0]
    assert "HTTP 429" in retry.error
    assert h.finished.status == "ok"


async def test_backoff_grows_and_retries_run_out(h: Harness) -> None:
    h.server.queue(*[Reply.error(502, "bad gateway")] * 4)
    await h.run(h.context(h.server.settings(limits=_limits(max_retries=3))))
    assert [r.attempt for r in h.of(Retry)] == [1, 2, 3]
    assert h.sleeps[0] <= 0.001 < h.sleeps[2] <= 0.004
    assert h.finished.status == "error"
    assert h.finished.error == "HTTP 502: bad gateway (after 4 attempts)"


async def test_a_too_long_retry_after_ends_the_step(h: Harness) -> None:
    h.server.queue(Reply.rate_limited(retry_after=3600))
    await h.run()
    assert h.finished.status == "error"
    assert "asked to wait 3600 s" in (h.finished.error or "")
    assert h.sleeps == []


@pytest.mark.parametrize(
    ("status", "hint"), [(400, ""), (401, "check the provider's API key"), (404, "model name")]
)
async def test_client_errors_are_not_retried(h: Harness, status: int, hint: str) -> None:
    h.server.queue(Reply.error(status, "You did it wrong."))
    await h.run()
    assert h.of(Retry) == []
    assert h.finished.status == "error"
    error = h.finished.error or ""
    assert f"HTTP {status}: You did it wrong." in error
    assert hint in error
    assert len(h.server.requests) == 1


@pytest.mark.parametrize("clean", [False, True])
async def test_dropped_stream_is_retried(h: Harness, clean: bool) -> None:
    h.server.queue(Reply.dropped("Half an ans", after=3, clean=clean), Reply.answer("Whole."))
    await h.run()
    (retry,) = h.of(Retry)
    assert retry.error == "the connection dropped mid-response"
    assert h.finished.status == "ok"
    assert h.finished.output == "Whole."
    # the superseded attempt's text came before the retry event
    texts = [e for e in h.events if isinstance(e, TextDelta | Retry)]
    assert isinstance(texts[0], TextDelta)


async def test_dropped_stream_without_retries_is_a_clear_error(h: Harness) -> None:
    h.server.queue(Reply.dropped())
    await h.run(h.context(h.server.settings(limits=_limits(max_retries=0))))
    assert h.finished.status == "error"
    assert h.finished.error == "the connection dropped mid-response (after 1 attempt)"


async def test_malformed_chunk_is_a_step_error(h: Harness) -> None:
    h.server.queue(Reply.malformed("some text", after=2), Reply.answer("never"))
    await h.run()
    assert h.finished.status == "error"
    assert h.finished.error == "the provider sent a malformed stream line: {not json"
    assert h.of(Retry) == []
    assert len(h.server.requests) == 1


async def test_silence_timeout(h: Harness) -> None:
    h.server.queue(Reply.hang())
    await h.run(h.context(h.server.settings(limits=_limits(silence_timeout_s=0.2))))
    assert h.finished.status == "error"
    assert h.finished.error == "the provider sent nothing for 0.2 s (silence timeout)"


async def test_connection_refused_is_retried_then_reported(h: Harness) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(
        providers=[Provider(name="dead", base_url=f"http://127.0.0.1:{port}/v1")],
        limits=_limits(max_retries=1),
    )
    await h.run(h.context(settings))
    assert len(h.of(Retry)) == 1
    assert h.finished.status == "error"
    assert f"cannot connect to http://127.0.0.1:{port}/v1" in (h.finished.error or "")


async def test_cancel_while_the_server_hangs_closes_the_connection(h: Harness) -> None:
    h.server.queue(Reply.hang())
    task = asyncio.create_task(h.run())
    (request,) = await h.server.wait_requests_async(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await h.server.wait_until_async(request.closed.is_set)
    assert request.client_disconnected


async def test_cancel_while_a_tool_runs_cancels_the_tool(h: Harness) -> None:
    h.server.queue(Reply.tool("streamer"))
    ctx = h.context()
    output_seen = asyncio.Event()

    async def consume() -> None:
        async with aclosing(h.backend().run(ctx)) as stream:
            async for event in stream:
                if isinstance(event, ToolCallOutput):
                    output_seen.set()

    task = asyncio.create_task(consume())
    await output_seen.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert Streamer.cancelled


# -- configuration and secrets ------------------------------------------------------------


async def test_no_provider_is_a_backend_error(h: Harness) -> None:
    with pytest.raises(BackendError, match="OPENAI_BASE_URL"):
        await h.run(h.context(Settings()))
    assert h.server.requests == []


async def test_no_model_chosen_uses_the_servers_only_model(h: Harness) -> None:
    h.server.models = ["only-one:7b"]
    h.server.queue(Reply.answer("ok"))
    await h.run(h.context(Settings(providers=[h.server.provider()]), model=None))
    assert h.server.requests[0].body["model"] == "only-one:7b"
    assert h.finished.status == "ok"


async def test_no_model_and_several_served_is_an_error_naming_them(h: Harness) -> None:
    h.server.models = ["alpha", "beta", "gamma"]
    settings = Settings(providers=[h.server.provider()])
    with pytest.raises(BackendError, match="No model") as caught:
        await h.run(h.context(settings, model=None))
    assert "serves 3 models (alpha, beta, gamma)" in str(caught.value)
    assert "--model" in str(caught.value)
    assert h.server.requests == []


async def test_model_falls_back_to_default_and_aliases_apply(h: Harness) -> None:
    h.server.queue(Reply.answer("ok"))
    settings = h.server.settings(default_model="short", model_aliases={"short": "long-name-v1"})
    await h.run(h.context(settings, model=None))
    assert h.server.requests[0].body["model"] == "long-name-v1"


async def test_environment_provider_and_key(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", h.server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key")
    h.server.queue(Reply.answer("ok"))
    await h.run(h.context(Settings()))
    assert h.server.requests[0].headers["authorization"] == "Bearer sk-env-key"


async def test_api_key_is_sent_but_never_in_an_event(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-very-secret-123"
    monkeypatch.setenv("TEST_PROVIDER_KEY", secret)
    settings = Settings(
        providers=[h.server.provider(api_key_env="TEST_PROVIDER_KEY")],
        default_model="test-model",
    )
    h.server.queue(
        Reply.tool("echo", {"text": "hi"}),
        Reply.error(500, "retry me"),
        Reply.error(403, f"key {secret} is not allowed here"),
    )
    await h.run(h.context(settings))
    assert all(r.headers["authorization"] == f"Bearer {secret}" for r in h.server.requests)
    assert h.finished.error is not None
    assert "key [redacted] is not allowed" in h.finished.error
    assert h.of(Retry)
    assert not any(secret in event_to_json(e) for e in h.events)


async def test_secrets_in_tool_results_and_earlier_turns_never_reach_the_model(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "ghp_0123456789abcdefABCDEF"
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    h.server.queue(
        Reply.tool("echo", {"text": f"GITHUB_TOKEN={secret}"}),
        Reply.answer("done"),
    )
    await h.run(h.context(h.server.settings(), task=f"the token is {secret}"))
    assert h.finished.status == "ok"
    second = h.server.requests[1]
    assert secret not in json.dumps(second.body)
    assert second.tool_messages[0]["content"] == "echo: GITHUB_TOKEN=[redacted]"
    assert second.messages[1]["content"] == "the token is [redacted]"


async def test_no_key_no_authorization_header(h: Harness) -> None:
    h.server.queue(Reply.answer("ok"))
    await h.run()
    assert "authorization" not in h.server.requests[0].headers


def test_api_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "  sk-1  ")
    assert api_key_for(Provider(name="p", base_url="http://x", api_key_env="MY_KEY")) == "sk-1"
    assert api_key_for(Provider(name="p", base_url="http://x", api_key_env="UNSET_KEY")) is None


def test_without_a_keyring_reads_give_none_and_writes_explain() -> None:
    provider = Provider(name="p", base_url="http://x", api_key_in_keyring=True)
    assert api_key_for(provider) is None
    assert not keyring_available()
    with pytest.raises(SecretsError, match="No system keyring"):
        store_api_key("p", "sk-1")
    with pytest.raises(SecretsError, match="No system keyring"):
        delete_api_key("p")


class _MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self) -> None:
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            from keyring.errors import PasswordDeleteError

            raise PasswordDeleteError(username)
        del self.store[(service, username)]


@pytest.fixture
def memory_keyring() -> Iterator[_MemoryKeyring]:
    previous = keyring.get_keyring()
    ring = _MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


def test_keyring_round_trip_and_environment_wins(
    memory_keyring: _MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = Provider(
        name="work", base_url="http://x", api_key_env="WORK_KEY", api_key_in_keyring=True
    )
    assert keyring_available()
    store_api_key("work", "sk-ring")
    assert memory_keyring.store == {("baton", "work"): "sk-ring"}
    assert api_key_for(provider) == "sk-ring"
    monkeypatch.setenv("WORK_KEY", "sk-env")
    assert api_key_for(provider) == "sk-env"
    delete_api_key("work")
    delete_api_key("work")  # deleting twice is fine
    monkeypatch.delenv("WORK_KEY")
    assert api_key_for(provider) is None


# -- stream parsing details ---------------------------------------------------------------


def test_sse_decoder_joins_data_lines_and_ignores_comments() -> None:
    decoder = SSEDecoder()
    lines = [": keep-alive", "event: message", 'data: {"a":', "data: 1}", "", "data: [DONE]"]
    payloads = [p for line in lines if (p := decoder.feed(line)) is not None]
    assert payloads == ['{"a":\n1}']
    assert decoder.flush() == "[DONE]"


def test_accumulator_handles_calls_without_index_and_reasoning_field() -> None:
    response = ResponseAccumulator()
    pieces = response.feed(
        {
            "model": "m-1",
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "reasoning": "hmm",
                        "tool_calls": [
                            {"id": "a", "function": {"name": "ls", "arguments": "{}"}},
                            {"id": "b", "function": {"name": "read", "arguments": '{"p":'}},
                        ],
                    },
                }
            ],
        }
    )
    response.feed(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"function": {"arguments": "1}"}}]},
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    assert pieces == [("thinking", "hmm")]
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls()] == [
        ("a", "ls", "{}"),
        ("b", "read", '{"p":1}'),
    ]
    assert response.complete
    assert response.usage_stats("requested").model == "m-1"


def _sse(*payloads: object) -> bytes:
    return b"".join(b"data: %s\n\n" % json.dumps(p).encode() for p in payloads)


@pytest.mark.parametrize("end", ["with [DONE]", "in a write of its own"])
async def test_a_steps_requests_share_one_connection_however_the_body_ends(
    h: Harness, end: str
) -> None:
    """After ``[DONE]`` the rest of the body is read — at once when it came in the same read
    (no timer), else waited for — and the connection serves the step's next request. (Which
    of the two a read sees is the network's: both framings are sent, the answer and the one
    connection asserted for each.)"""
    call = {"index": 0, "id": "c1", "function": {"name": "echo", "arguments": '{"text": "hi"}'}}
    turns = [
        _sse({"choices": [{"delta": {"tool_calls": [call]}, "finish_reason": "tool_calls"}]}),
        _sse({"choices": [{"delta": {"content": "done"}, "finish_reason": "stop"}]}),
    ]

    async def answer(
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        fields: dict[str, str],
        body: bytes,
    ) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
        writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
        events = turns.pop(0) + b"data: [DONE]\n\n"
        writer.write(b"%x\r\n%s\r\n" % (len(events), events))
        if end != "with [DONE]":
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async with RawServer(answer).running() as server:
        provider = Provider(name="raw", base_url=server.url.removesuffix("/chat/completions"))
        settings = Settings.model_validate({"providers": [provider], "default_model": "m"})
        await h.run(h.context(settings))

    assert h.finished.status == "ok" and h.finished.output == "done"
    assert len(server.requests) == 2
    assert server.connections == 1
