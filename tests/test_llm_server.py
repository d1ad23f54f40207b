"""The scripted LLM server itself: what it streams, its fault modes, its bookkeeping."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx
import pytest

from tests.llm_server import LLMServer, Reply, Tokens, ToolCall, iter_sse_payloads


def _chat(server: LLMServer, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hi"}],
    }
    body.update(extra)
    return body


def _chunks(response: httpx.Response) -> list[Any]:
    payloads = list(iter_sse_payloads(response.content))
    assert payloads[-1] == "[DONE]"
    return [json.loads(p) for p in payloads[:-1]]


def test_text_reply_streams_in_pieces_with_usage(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.answer("Hello there, world", reasoning="hmm", tokens=Tokens(50, 7, 20)))
    body = _chat(llm_server, stream=True, stream_options={"include_usage": True})
    response = httpx.post(f"{llm_server.base_url}/chat/completions", json=body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = _chunks(response)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    text = [d["content"] for d in deltas if d.get("content")]
    assert len(text) == 3
    assert "".join(text) == "Hello there, world"
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "hmm"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["prompt_tokens"] == 50
    assert chunks[-1]["usage"]["completion_tokens"] == 7
    assert chunks[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] == 20


def test_without_include_usage_there_is_no_usage_chunk(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.answer("ok"))
    response = httpx.post(
        f"{llm_server.base_url}/chat/completions", json=_chat(llm_server, stream=True)
    )
    assert all("usage" not in chunk for chunk in _chunks(response))


def test_tool_calls_stream_like_openai(llm_server: LLMServer) -> None:
    llm_server.queue(
        Reply.tools(
            ToolCall("read", {"path": "a.txt"}, id="call_a"),
            ToolCall("ls", {"path": "."}),
        )
    )
    response = httpx.post(
        f"{llm_server.base_url}/chat/completions", json=_chat(llm_server, stream=True)
    )
    pieces = [
        call
        for chunk in _chunks(response)
        for choice in chunk["choices"]
        for call in choice["delta"].get("tool_calls", [])
    ]
    first = [p for p in pieces if p["index"] == 0]
    assert first[0]["id"] == "call_a"
    assert first[0]["function"]["name"] == "read"
    assert all("id" not in p and "name" not in p["function"] for p in first[1:])
    assert len(first) > 2  # the arguments come in several fragments
    assert json.loads("".join(p["function"]["arguments"] for p in first)) == {"path": "a.txt"}
    second = [p for p in pieces if p["index"] == 1]
    assert second[0]["id"] and second[0]["id"] != "call_a"
    assert _chunks(response)[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_plain_json_when_not_streaming(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.tool("read", {"path": "x"}, text="Let me look."))
    response = httpx.post(f"{llm_server.base_url}/chat/completions", json=_chat(llm_server))
    data = response.json()
    message = data["choices"][0]["message"]
    assert message["content"] == "Let me look."
    assert message["tool_calls"][0]["function"]["arguments"] == '{"path": "x"}'
    assert data["usage"]["prompt_tokens"] > 0


def test_models_endpoint() -> None:
    with LLMServer(models=("a", "b")) as server:
        response = httpx.get(f"{server.base_url}/models")
    assert [m["id"] for m in response.json()["data"]] == ["a", "b"]


def test_records_requests_and_uses_responder_when_queue_is_empty(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.answer("from the queue"))
    llm_server.responder = lambda body: Reply.answer("echo " + body["messages"][-1]["content"])
    url = f"{llm_server.base_url}/chat/completions"
    first = httpx.post(url, json=_chat(llm_server), headers={"Authorization": "Bearer k"})
    second = httpx.post(url, json=_chat(llm_server))
    assert first.json()["choices"][0]["message"]["content"] == "from the queue"
    assert second.json()["choices"][0]["message"]["content"] == "echo hi"
    recorded = llm_server.wait_requests(2)
    assert recorded[0].headers["authorization"] == "Bearer k"
    assert recorded[1].user_text == "hi"
    assert recorded[0].arrived <= recorded[1].arrived


def test_no_reply_left_is_a_500_and_a_problem(llm_server: LLMServer) -> None:
    response = httpx.post(f"{llm_server.base_url}/chat/completions", json=_chat(llm_server))
    assert response.status_code == 500
    assert "no scripted reply" in response.json()["error"]["message"]
    assert llm_server.problems


def test_rejects_conversations_openai_would_reject(llm_server: LLMServer) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "and?"},
    ]
    llm_server.queue(Reply.answer("never sent"))
    response = httpx.post(
        f"{llm_server.base_url}/chat/completions", json=_chat(llm_server, messages=messages)
    )
    assert response.status_code == 400
    assert "not answered" in response.json()["error"]["message"]


def test_error_and_rate_limit_replies(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.error(503, "overloaded"), Reply.rate_limited(2))
    url = f"{llm_server.base_url}/chat/completions"
    failed = httpx.post(url, json=_chat(llm_server, stream=True))
    limited = httpx.post(url, json=_chat(llm_server, stream=True))
    assert failed.status_code == 503
    assert failed.json()["error"]["message"] == "overloaded"
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "2"


def test_dropped_stream_breaks_the_chunked_body(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.dropped("partial answer here", after=2))
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(f"{llm_server.base_url}/chat/completions", json=_chat(llm_server, stream=True))


def test_clean_drop_ends_the_body_without_done(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.dropped("partial", after=2, clean=True))
    response = httpx.post(
        f"{llm_server.base_url}/chat/completions", json=_chat(llm_server, stream=True)
    )
    payloads = list(iter_sse_payloads(response.content))
    assert len(payloads) == 2
    assert "[DONE]" not in payloads


def test_malformed_chunk(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.malformed("abc", after=1))
    response = httpx.post(
        f"{llm_server.base_url}/chat/completions", json=_chat(llm_server, stream=True)
    )
    assert "{not json" in list(iter_sse_payloads(response.content))


def test_held_requests_overlap_and_are_counted(llm_server: LLMServer) -> None:
    gate = threading.Event()
    llm_server.responder = lambda body: Reply.answer(body["messages"][-1]["content"], hold=gate)
    url = f"{llm_server.base_url}/chat/completions"
    answers: dict[str, str] = {}

    def ask(word: str) -> None:
        body = _chat(llm_server, messages=[{"role": "user", "content": word}])
        answers[word] = httpx.post(url, json=body).json()["choices"][0]["message"]["content"]

    clients = [threading.Thread(target=ask, args=(w,)) for w in ("one", "two", "three")]
    for client in clients:
        client.start()
    llm_server.wait_until(lambda: llm_server.in_flight == 3)
    gate.set()
    for client in clients:
        client.join(5)
    assert answers == {"one": "one", "two": "two", "three": "three"}
    assert llm_server.max_concurrent == 3
    # a handler counts itself out just after its last write reaches the client
    llm_server.wait_until(lambda: llm_server.in_flight == 0)


def test_hang_is_released_by_its_event(llm_server: LLMServer) -> None:
    release = threading.Event()
    llm_server.queue(Reply.hang(release=release))
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            httpx.post(
                f"{llm_server.base_url}/chat/completions", json=_chat(llm_server, stream=True)
            )
        except httpx.HTTPError as error:
            errors.append(error)

    client = threading.Thread(target=ask)
    client.start()
    (request,) = llm_server.wait_requests(1)
    assert not request.closed.is_set()
    release.set()
    client.join(5)
    assert request.closed.wait(5)
    assert isinstance(errors[0], httpx.RemoteProtocolError)


async def test_hang_notices_the_client_going_away(llm_server: LLMServer) -> None:
    llm_server.queue(Reply.hang())
    async with httpx.AsyncClient() as client:
        body = _chat(llm_server, stream=True)
        task = asyncio.create_task(
            client.post(f"{llm_server.base_url}/chat/completions", json=body)
        )
        (request,) = await llm_server.wait_requests_async(1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    await llm_server.wait_until_async(request.closed.is_set)
    assert request.client_disconnected


def test_stop_releases_hung_handlers_and_joins_every_thread() -> None:
    server = LLMServer([Reply.hang(), Reply.answer("held", hold=threading.Event())]).start()
    results: list[BaseException] = []

    def ask() -> None:
        try:
            httpx.post(f"{server.base_url}/chat/completions", json=_chat(server, stream=True))
        except httpx.HTTPError as error:
            results.append(error)

    clients = [threading.Thread(target=ask) for _ in range(2)]
    for client in clients:
        client.start()
    server.wait_until(lambda: server.in_flight == 2)
    server.stop()
    for client in clients:
        client.join(5)
    assert not any(t.name.startswith("llm-server") for t in threading.enumerate())
    assert all(not client.is_alive() for client in clients)


async def test_async_wait_times_out_cleanly(llm_server: LLMServer) -> None:
    with pytest.raises(TimeoutError, match="0 of 1 requests"):
        await llm_server.wait_requests_async(1, timeout=0)  # gives up at once: no clock


def test_fragmented_events_still_parse(llm_server: LLMServer) -> None:
    reply = Reply.answer("split me up")
    reply.fragmented = True
    llm_server.queue(reply)
    response = httpx.post(
        f"{llm_server.base_url}/chat/completions", json=_chat(llm_server, stream=True)
    )
    deltas = [c["choices"][0]["delta"].get("content", "") for c in _chunks(response)]
    assert "".join(deltas) == "split me up"
