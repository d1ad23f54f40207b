"""The agent loop's HTTP client (aiohttp's pool), against raw servers on 127.0.0.1: each answer
framing a server may use, connections kept or dropped, hostile answers, and the hand-over to
httpx when a proxy applies."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from core.config.http_stream import StreamClient, _json_bytes, _proxied
from core.config.provider_http import stream_client

Handler = Callable[
    [asyncio.StreamReader, asyncio.StreamWriter, dict[str, str], bytes], Awaitable[None]
]


class RawServer:
    """A TCP server that reads each request (head and body) and lets ``handler`` answer."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.port = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return
                lines = head.decode("latin-1").split("\r\n")
                fields = {
                    name.strip().lower(): value.strip()
                    for name, _, value in (line.partition(":") for line in lines[1:] if line)
                }
                fields[":request"] = lines[0]
                body = await reader.readexactly(int(fields.get("content-length", "0")))
                self.requests.append((fields, body))
                await self.handler(reader, writer, fields, body)
                if writer.is_closing():
                    return
        finally:
            writer.close()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[RawServer]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/chat/completions"


def chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


async def answer_chunked(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, fields: dict[str, str], body: bytes
) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
    writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
    accented = "data: d\u00e9j\u00e0\n\n".encode()
    writer.write(chunked(b"data: one\n\n", accented[:8], accented[8:]))  # 8: inside the é
    await writer.drain()


async def read_text(client: StreamClient, url: str, payload: object = None) -> tuple[int, str]:
    async with client.stream("POST", url, json=payload or {"a": 1}, headers={"X-Key": "k"}) as r:
        return r.status_code, "".join([t async for t in r.aiter_text()])


async def test_a_chunked_answer_is_read_whole_and_its_connection_kept_for_the_next() -> None:
    async with RawServer(answer_chunked).running() as server:
        client = stream_client(5.0)
        try:
            assert await read_text(client, server.url) == (200, "data: one\n\ndata: déjà\n\n")
            assert await read_text(client, server.url) == (200, "data: one\n\ndata: déjà\n\n")
        finally:
            await client.aclose()
    assert server.connections == 1
    fields, body = server.requests[0]
    assert fields[":request"] == "POST /v1/chat/completions HTTP/1.1"
    assert fields["host"] == f"127.0.0.1:{server.port}" and fields["x-key"] == "k"
    assert json.loads(body) == {"a": 1}


async def test_sized_gzip_and_until_closed_answers() -> None:
    packed = gzip.compress(b'{"ok": true}')

    async def respond(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, f: dict[str, str], b: bytes
    ) -> None:
        kind = json.loads(b)["kind"]
        if kind == "sized":
            writer.write(
                b"HTTP/1.1 429 Too Many\r\nRetry-After: 3\r\nContent-Length: 4\r\n\r\nslow"
            )
        elif kind == "gzip":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n")
            writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(packed), packed))
        else:
            writer.write(b"HTTP/1.0 200 OK\r\n\r\nto the end")
            await writer.drain()
            writer.close()
        await writer.drain()

    async with RawServer(respond).running() as server:
        client = stream_client(5.0)
        try:
            async with client.stream("POST", server.url, json={"kind": "sized"}, headers={}) as r:
                assert (r.status_code, r.reason_phrase) == (429, "Too Many")
                assert r.headers.get("retry-after") == "3" and await r.aread() == b"slow"
            assert await read_text(client, server.url, {"kind": "gzip"}) == (200, '{"ok": true}')
            assert await read_text(client, server.url, {"kind": "eof"}) == (200, "to the end")
            assert await read_text(client, server.url, {"kind": "gzip"}) == (200, '{"ok": true}')
        finally:
            await client.aclose()
    assert server.connections == 2  # the answer read to the close took its connection along


async def test_an_idle_connection_the_server_closed_is_replaced_not_reported() -> None:
    async def once_then_close(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, f: dict[str, str], b: bytes
    ) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()  # keep-alive promised, but gone before the next request

    async with RawServer(once_then_close).running() as server:
        client = stream_client(5.0)
        try:
            for _ in range(3):
                assert await read_text(client, server.url) == (200, "ok")
        finally:
            await client.aclose()
    assert server.connections == 3


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            httpx.RemoteProtocolError,
        ),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", httpx.RemoteProtocolError),
        (b"SSH-2.0-OpenSSH\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", httpx.RemoteProtocolError),
    ],
    ids=["chunk-cut", "chunk-header", "short-body", "not-http", "head-too-long"],
)
async def test_a_broken_or_hostile_answer_is_an_httpx_error(
    answer: bytes, error: type[Exception]
) -> None:
    async def respond(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, f: dict[str, str], b: bytes
    ) -> None:
        writer.write(answer)
        await writer.drain()
        writer.close()

    async with RawServer(respond).running() as server:
        client = stream_client(5.0)
        try:
            with pytest.raises(error):
                await read_text(client, server.url)
        finally:
            await client.aclose()


async def test_a_silent_server_is_a_read_timeout() -> None:
    stop = asyncio.Event()

    async def silent(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, f: dict[str, str], b: bytes
    ) -> None:
        await stop.wait()

    async with RawServer(silent).running() as server:
        client = stream_client(httpx.Timeout(5.0, read=0.2))
        try:
            with pytest.raises(httpx.ReadTimeout):
                await read_text(client, server.url)
        finally:
            stop.set()
            await client.aclose()


async def test_nothing_listening_is_a_connect_error() -> None:
    async with RawServer(answer_chunked).running() as server:
        url = server.url
    client = stream_client(5.0)
    try:
        with pytest.raises(httpx.ConnectError):
            await read_text(client, url)
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    "header",
    [
        {"X-Key": "k\r\n\r\nGET /evil HTTP/1.1"},
        {"X-Key": "k\nX-Injected: 1"},
        {"X-Key": "k\0"},
        {"X-Key: 1\r\nX-Other": "k"},
        {"X-Key:": "k"},
    ],
)
async def test_a_header_cannot_smuggle_a_second_request_or_header(header: dict[str, str]) -> None:
    async with RawServer(answer_chunked).running() as server:
        client = stream_client(5.0)
        try:
            with pytest.raises(httpx.LocalProtocolError):
                async with client.stream("POST", server.url, json={}, headers=header):
                    pass
        finally:
            await client.aclose()
    assert server.requests == []


def test_a_proxy_in_the_environment_hands_the_request_to_httpx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    assert not _proxied("https://api.example.com/v1/chat/completions")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert _proxied("https://api.example.com/v1/chat/completions")
    assert not _proxied("http://api.example.com/v1/chat/completions")
    assert not _proxied("https://127.0.0.1:8080/v1/chat/completions")


async def test_through_a_proxy_the_request_reaches_the_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The environment's proxy is used as httpx uses it: the request goes to the proxy."""
    async with RawServer(answer_chunked).running() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        client = stream_client(5.0)
        try:
            status, _ = await read_text(client, "http://model.invalid/v1/chat/completions")
        finally:
            await client.aclose()
    assert status == 200
    assert proxy.requests[0][0][":request"].startswith("POST http://model.invalid/v1/")


@pytest.mark.parametrize(
    "body",
    [
        {
            "model": "m",
            "stream": True,
            "temperature": 0.2,
            "messages": [
                {"role": "user", "content": 'héllo ✓ "quoted" \\ \n\t\u0001 NaN Infinity'}
            ],
            "tools": [{"type": "function", "function": {"parameters": {"n": [1, -2, 3.5e-7]}}}],
            "big": 2**70,
            "none": None,
            "flags": [True, False],
        },
        {"tools": [{"type": "function", "function": {"name": "read"}}]},
        {"tools": [{"type": "function"}], "model": "m", "stream": True},
        {"model": "m", "tools": [{"description": "NaN and Infinity, in words"}]},
        [],
        "plain",
    ],
)
def test_a_body_is_sent_byte_for_byte_as_httpx_would_send_it(body: object) -> None:
    assert _json_bytes(body) == httpx.Request("POST", "http://x/", json=body).content
    assert _json_bytes(body) == httpx.Request("POST", "http://x/", json=body).content  # again


def test_each_list_of_tools_is_sent_as_it_is_though_their_encoding_is_kept() -> None:
    read = {"type": "function", "function": {"name": "read"}}
    body = {"model": "m", "tools": [read]}
    assert json.loads(_json_bytes(body))["tools"] == [read]
    for step in range(40):  # new declarations each step (an MCP server's), more than are kept
        declared = [{"type": "function", "function": {"name": f"tool_{step}"}}]
        sent = json.loads(_json_bytes({"model": "m", "tools": declared}))
        assert sent["tools"] == declared
    assert json.loads(_json_bytes({"model": "m", "tools": [read, read]}))["tools"] == [read, read]


@pytest.mark.parametrize("number", [float("nan"), float("inf"), -float("inf")])
def test_a_body_with_a_number_json_cannot_hold_is_refused_as_httpx_refuses_it(
    number: float,
) -> None:
    with pytest.raises(ValueError):
        httpx.Request("POST", "http://x/", json={"temperature": number})
    with pytest.raises(ValueError):
        _json_bytes({"temperature": number})
    with pytest.raises(ValueError):  # in a tool's declaration, whose encoding is kept
        _json_bytes({"model": "m", "tools": [{"parameters": {"default": number}}]})


async def test_a_client_reads_the_proxy_setting_once_as_httpx_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A proxy set after a client's first request applies to clients made after it (httpx
    reads the environment when a client is made), not to that client's next requests."""
    for name in ("HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    async with (
        RawServer(answer_chunked).running() as model,
        RawServer(answer_chunked).running() as proxy,
    ):
        client = stream_client(5.0)
        try:
            await read_text(client, model.url)
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
            await read_text(client, model.url)
        finally:
            await client.aclose()
        later = stream_client(5.0)
        try:
            await read_text(later, model.url)
        finally:
            await later.aclose()
    assert len(model.requests) == 2
    assert len(proxy.requests) == 1
