"""The agent loop's streamed model requests on aiohttp's connection pool.

Each of a batch's items makes a streamed ``POST /chat/completions`` per turn, and through
httpx (httpx → httpcore → anyio → h11) one such request cost about 1.5 ms of the supervisor's
CPU at one request at a time and 3–4 ms with 32 in flight: 41 % of a batch item's, measured with
an instant model in ``benchmarks/batch.py``. aiohttp does the same request for 0.26–0.31 ms
(side by side against one local server, 2,000 requests, 32 in flight), with its HTTP parser in
C and one connection pool per event loop that keeps connections for the next request.

What it does not do here, it leaves to httpx (:class:`StreamClient` hands the request over): a
request through a proxy (``HTTPS_PROXY`` and friends, as httpx reads them, so both clients agree
on when one applies), or a caller's own transport (tests). Errors are httpx's exceptions
(``ConnectError``, ``ReadTimeout``, ``RemoteProtocolError`` …), so callers handle one set
whichever client answered.
"""

from __future__ import annotations

import codecs
import functools
import json
import os
import re
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp
import httpx
import pydantic_core
from httpx._utils import URLPattern, get_environment_proxies


class StreamedResponse(Protocol):
    """What a caller reads of a streamed answer (httpx's response has the same)."""

    @property
    def status_code(self) -> int: ...

    @property
    def reason_phrase(self) -> str: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def aiter_text(self) -> AsyncIterator[str]: ...

    async def aread(self) -> bytes: ...


def _client_timeout(timeout: httpx.Timeout | float | None) -> aiohttp.ClientTimeout:
    """httpx's per-phase limits as aiohttp's: no limit on the whole exchange (a model may
    stream for minutes), the connect and between-reads limits as httpx means them."""
    if isinstance(timeout, httpx.Timeout):
        return _limits(timeout.connect, timeout.read)
    return _limits(timeout, timeout)


@functools.lru_cache(maxsize=16)
def _limits(connect: float | None, read: float | None) -> aiohttp.ClientTimeout:
    """Made once per pair of limits (aiohttp's are frozen, so one serves every request)."""
    return aiohttp.ClientTimeout(sock_connect=connect, sock_read=read)


def _as_httpx_error(error: Exception) -> httpx.HTTPError:
    """aiohttp's failure as the httpx exception callers already handle. (Raised from plain
    ``try`` blocks: a context manager per read of the answer cost a generator each time.)"""
    if isinstance(error, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(str(error) or "no connection in time")
    if isinstance(error, aiohttp.SocketTimeoutError):
        return httpx.ReadTimeout(str(error) or "the server sent nothing in time")
    if isinstance(error, aiohttp.InvalidURL):
        return httpx.UnsupportedProtocol(f"cannot request {error}")
    if isinstance(error, aiohttp.ClientConnectorError):
        return httpx.ConnectError(str(error) or type(error).__name__)
    if isinstance(error, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError):
        return httpx.RemoteProtocolError(str(error) or "the connection closed mid-answer")
    if isinstance(error, aiohttp.ClientResponseError):
        return httpx.RemoteProtocolError(error.message or "a malformed answer")
    if isinstance(error, aiohttp.ClientError):
        return httpx.ReadError(str(error) or type(error).__name__)
    return httpx.ReadTimeout("the server sent nothing in time")  # asyncio's TimeoutError


_AIOHTTP_ERRORS = (aiohttp.ClientError, TimeoutError)
"""What :func:`_as_httpx_error` translates."""


class _Response:
    """One answer as the callers read httpx's: status, headers, the body as text or bytes."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status
        self.reason_phrase = response.reason or ""
        self.headers: Mapping[str, str] = response.headers

    async def aiter_text(self) -> AsyncIterator[str]:
        decoder = codecs.getincrementaldecoder(_charset(self._response))(errors="replace")
        chunks = self._response.content.iter_any()
        while True:
            try:
                data = await anext(chunks, None)
            except _AIOHTTP_ERRORS as error:
                raise _as_httpx_error(error) from None
            if data is None:
                break
            text = decoder.decode(data)
            if text:
                yield text
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail

    async def aread(self) -> bytes:
        try:
            return await self._response.read()
        except _AIOHTTP_ERRORS as error:
            raise _as_httpx_error(error) from None


def read_whole(response: StreamedResponse) -> bool:
    """Whether all of ``response``'s body has arrived and been read (its connection is free
    for the next request); False when it cannot be told (an answer through httpx: a
    proxy's)."""
    return isinstance(response, _Response) and response._response.content.at_eof()


_UNSAFE_IN_VALUE = re.compile("[\r\n\0]")
_UNSAFE_IN_NAME = re.compile("[\r\n\0:]")
"""What would split or smuggle a header (httpx refuses the same)."""


def _charset(response: aiohttp.ClientResponse) -> str:
    return _codec_name(response.charset or "utf-8")


@functools.lru_cache(maxsize=16)
def _codec_name(charset: str) -> str:
    try:
        return codecs.lookup(charset).name
    except LookupError:
        return "utf-8"


class _SessionPool:
    """One aiohttp session per event loop (a session belongs to the loop it was made on), made
    on first need and closed with the client."""

    def __init__(self, tls: Callable[[], ssl.SSLContext]) -> None:
        self._tls = tls
        self._session: aiohttp.ClientSession | None = None
        self.closed = False

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                ssl=self._tls(), limit=0, limit_per_host=0, keepalive_timeout=15
            )
            # trust_env=False: whether a proxy applies is decided before (httpx takes those).
            self._session = aiohttp.ClientSession(
                connector=connector, trust_env=False, auto_decompress=True
            )
        return self._session

    async def post(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        limit: httpx.Timeout | float | None,
    ) -> aiohttp.ClientResponse:
        """POST ``body`` (JSON) to ``url``; the caller reads the answer and releases it. (Not
        a context manager of its own: one more generator per request for nothing.)"""
        if urlsplit(url).scheme.lower() not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"cannot request {url!r}")
        sent = {"Content-Type": "application/json", **headers}
        for name, value in sent.items():
            if _UNSAFE_IN_NAME.search(name) or _UNSAFE_IN_VALUE.search(value):
                raise httpx.LocalProtocolError(f"an invalid header {name!r}")
        try:
            return await self._send(url, body, sent, _client_timeout(limit))
        except _AIOHTTP_ERRORS as error:
            raise _as_httpx_error(error) from None

    async def _send(
        self, url: str, body: bytes, headers: Mapping[str, str], limit: aiohttp.ClientTimeout
    ) -> aiohttp.ClientResponse:
        """Once more on a new connection when a kept one turns out closed before any answer
        came (a server that drops idle connections), as httpx and urllib3 do; a connection
        refused is not tried again."""
        try:
            return await self.session().post(url, data=body, headers=headers, timeout=limit)
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as error:
            if isinstance(error, aiohttp.ClientConnectorError):
                raise
        return await self.session().post(url, data=body, headers=headers, timeout=limit)

    async def aclose(self) -> None:
        self.closed = True
        if self._session is not None:
            await self._session.close()


class StreamClient:
    """A step's client: requests on aiohttp's pooled connections, or through an httpx
    client (``httpx_client``, made on first need and closed with this one) when a proxy
    applies or ``always_httpx`` (a caller's own transport)."""

    def __init__(
        self,
        timeout: httpx.Timeout | float,
        tls: Callable[[], ssl.SSLContext],
        httpx_client: Callable[[], httpx.AsyncClient],
        *,
        always_httpx: bool = False,
    ) -> None:
        self._timeout = timeout
        self._make_httpx = httpx_client
        self._always_httpx = always_httpx
        self._httpx: httpx.AsyncClient | None = None
        self._lean = _SessionPool(tls)
        self.is_closed = False
        self._through_proxy: dict[str, bool] = {}
        """Per URL, whether a proxy applies: the environment is read once per client, as
        httpx reads it once when a client is made (eight variables a request were read for
        every request of a batch)."""

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        json: Any,
        headers: Mapping[str, str],
        timeout: httpx.Timeout | float | None = None,  # noqa: ASYNC109 - httpx's signature
    ) -> AsyncIterator[StreamedResponse]:
        """``method`` ``url`` with ``json`` as the body; the block reads the answer."""
        limit = self._timeout if timeout is None else timeout
        if method != "POST" or self._always_httpx or self._uses_proxy(url):
            if self._httpx is None:
                self._httpx = self._make_httpx()
            async with self._httpx.stream(
                method, url, json=json, headers=headers, timeout=limit
            ) as response:
                yield response
            return
        answer = await self._lean.post(url, _json_bytes(json), headers, limit)
        try:
            yield _Response(answer)
        finally:
            answer.release()

    def _uses_proxy(self, url: str) -> bool:
        known = self._through_proxy.get(url)
        if known is None:
            if len(self._through_proxy) >= MAX_URLS_REMEMBERED:
                self._through_proxy.clear()
            known = self._through_proxy[url] = _proxied(url)
        return known

    async def aclose(self) -> None:
        self.is_closed = True
        await self._lean.aclose()
        if self._httpx is not None:
            await self._httpx.aclose()


def _json_bytes(value: Any) -> bytes:
    """The body as httpx's ``json=`` would send it (compact, UTF-8), byte for byte.

    pydantic's encoder (Rust) makes it: the standard library's took 35–70 µs for a step's
    ~6 KB body, a twentieth of a batch item's CPU (benchmarks/batch.py), pydantic's 11–13 µs.
    It writes ``NaN`` and ``Infinity`` where httpx refuses them: a body with either word
    (almost always inside a string) is encoded by the standard library, which raises for a
    real one. It also encodes some values httpx refuses (bytes, dates): Baton's bodies are
    made of JSON's own types.

    The tools' declarations are four fifths of a step's body and the same in every request
    of every step with the same tools: they are encoded, and looked at for those two words,
    once (:func:`_tools_json`), and put in their place between the rest — a compact JSON
    object is its members' encodings joined by commas, so the bytes are the same (22 → 8.5 µs
    a request; the search for the two words in 6 KB was a third of the 22)."""
    tools = value.get("tools") if type(value) is dict else None
    if type(tools) is not list or not tools:
        body = pydantic_core.to_json(value)
        return _stdlib_json_bytes(value) if _may_hold_nan(body) else body
    encoded_tools, tools_may_hold_nan = _tools_json(tools)
    keys = list(value)
    at = keys.index("tools")
    head = pydantic_core.to_json({key: value[key] for key in keys[:at]})
    tail = pydantic_core.to_json({key: value[key] for key in keys[at + 1 :]})
    if tools_may_hold_nan or _may_hold_nan(head) or _may_hold_nan(tail):
        return _stdlib_json_bytes(value)
    return b"".join(
        (
            head[:-1],  # "{" and the members before, without the closing brace
            b"," if at else b"",
            b'"tools":',
            encoded_tools,
            b"," + tail[1:] if at + 1 < len(keys) else b"}",
        )
    )


def _may_hold_nan(encoded: bytes) -> bool:
    return b"NaN" in encoded or b"Infinity" in encoded


_TOOLS_REMEMBERED = 16
"""Tool lists whose encoding is kept: an agent's tool set, or a few (MCP tools vary by step)."""
_tools_encoded: dict[tuple[int, ...], tuple[list[Any], bytes, bool]] = {}


def _tools_json(tools: list[Any]) -> tuple[bytes, bool]:
    """``tools`` encoded, and whether the encoding may hold ``NaN`` or ``Infinity``; once for
    each list of the same declaration objects (Baton's are built once per tool class and
    never changed). Kept with the objects themselves, so an identity in the key cannot be
    taken over by another object while it is remembered."""
    key = tuple(map(id, tools))
    found = _tools_encoded.get(key)
    if found is None:
        encoded = pydantic_core.to_json(tools)
        if len(_tools_encoded) >= _TOOLS_REMEMBERED:
            _tools_encoded.clear()  # rare: many steps with tool sets of their own
        found = _tools_encoded[key] = (list(tools), encoded, _may_hold_nan(encoded))
    return found[1], found[2]


def _stdlib_json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


MAX_URLS_REMEMBERED = 16
"""A client's requests go to one provider's URL or a few; more are forgotten first."""

_PROXY_VARIABLES = tuple(
    name
    for base in ("http", "https", "all", "no")
    for name in (f"{base}_proxy", f"{base.upper()}_PROXY")
)


def _proxied(url: str) -> bool:
    """Whether httpx would send ``url`` through a proxy (its own reading of ``HTTP_PROXY``,
    ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY``, so both clients agree)."""
    parts = urlsplit(url)
    setting = tuple(os.environ.get(name) for name in _PROXY_VARIABLES)
    return _proxied_by(setting, parts.scheme, parts.netloc) if any(setting) else False


@functools.lru_cache(maxsize=64)
def _proxied_by(setting: tuple[str | None, ...], scheme: str, netloc: str) -> bool:
    """Decided once per server and proxy setting: httpx reads the whole environment to tell
    (0.4 ms a request, measured)."""
    proxies = get_environment_proxies()
    target = httpx.URL(f"{scheme}://{netloc}/")
    for pattern in sorted(URLPattern(key) for key in proxies):
        if pattern.matches(target):
            return proxies[pattern.pattern] is not None
    return False
