"""A lean HTTP/1.1 client for the agent loop's streamed model requests.

Each of a batch's items makes a streamed ``POST /chat/completions`` per turn, and through
httpx (httpx → httpcore → anyio → h11) one such request cost about 1.5 ms of the supervisor's
CPU: 41 % of a batch item's, measured with an instant model in ``benchmarks/batch.py``. This
client does the same request on asyncio's own streams — a head written in one piece, the
answer read as it comes (chunked, ``Content-Length`` or until the connection closes) — for a
fraction of that, keeping each connection open for the next request when the answer was read
to its end.

What it does not do, it leaves to httpx (:class:`StreamClient` hands the request over): a
request through a proxy (``HTTPS_PROXY`` and friends, as httpx reads them), or a caller's own
transport (tests). Errors are httpx's exceptions (``ConnectError``, ``ReadTimeout``,
``RemoteProtocolError`` …), so callers handle one set whichever client answered.
"""

from __future__ import annotations

import asyncio
import codecs
import functools
import json
import os
import ssl
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
from httpx._utils import URLPattern, get_environment_proxies

MAX_HEAD = 64 * 1024
"""The most a response's status line and headers may take (more: a protocol error)."""
READ_SIZE = 64 * 1024
MAX_IDLE = 8
"""Connections a client keeps open per server for the next request."""


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


class _Timeouts:
    __slots__ = ("connect", "read", "write")

    def __init__(self, timeout: httpx.Timeout | float | None) -> None:
        if isinstance(timeout, httpx.Timeout):
            self.connect, self.read, self.write = timeout.connect, timeout.read, timeout.write
        else:
            self.connect = self.read = self.write = timeout


class _Connection:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def usable(self) -> bool:
        """Still open both ways (a server that closed an idle connection has sent its end)."""
        return not (self.writer.is_closing() or self.reader.at_eof())

    async def close(self) -> None:
        self.writer.close()
        with suppress(OSError, TimeoutError, ssl.SSLError):
            async with asyncio.timeout(1.0):  # a TLS peer that never answers the goodbye
                await self.writer.wait_closed()


class _Response:
    """One answer: its head parsed, its body read on demand from the connection."""

    def __init__(
        self,
        connection: _Connection,
        status: int,
        reason: str,
        headers: dict[str, str],
        keep_alive: bool,
        read_timeout: float | None,
        done: Callable[[_Connection, bool], None],
    ) -> None:
        self.status_code = status
        self.reason_phrase = reason
        self.headers = headers
        self._connection = connection
        self._keep_alive = keep_alive
        self._read_timeout = read_timeout
        self._done = done
        self._finished = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        encoding = self.headers.get("content-encoding", "identity").strip().lower()
        decompress = _decompressor(encoding)
        async for data in self._raw():
            if decompress is None:
                yield data
                continue
            while data:
                piece = decompress.decompress(data, READ_SIZE)
                data = decompress.unconsumed_tail
                if piece:
                    yield piece

    async def aiter_text(self) -> AsyncIterator[str]:
        charset = _charset(self.headers.get("content-type", ""))
        decoder = codecs.getincrementaldecoder(charset)(errors="replace")
        async for data in self.aiter_bytes():
            text = decoder.decode(data)
            if text:
                yield text
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail

    async def aread(self) -> bytes:
        return b"".join([data async for data in self.aiter_bytes()])

    def release(self) -> None:
        """Hand the connection back: kept for the next request when the body was read to its
        end, closed otherwise (what is left of an answer cannot be skipped cheaply)."""
        self._done(self._connection, self._finished and self._keep_alive)

    async def _raw(self) -> AsyncIterator[bytes]:
        if self._finished:
            return
        length = self.headers.get("content-length")
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            body = self._chunked()
        elif length is not None:
            try:
                size = int(length)
            except ValueError:
                raise httpx.RemoteProtocolError(f"bad Content-Length {length!r}") from None
            body = self._sized(size)
        else:
            self._keep_alive = False
            body = self._until_closed()
        async for data in body:
            yield data
        self._finished = True

    async def _read(self, size: int) -> bytes:
        try:
            async with asyncio.timeout(self._read_timeout):
                return await self._connection.reader.read(size)
        except TimeoutError:
            raise httpx.ReadTimeout("the server sent nothing in time") from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.ReadError(str(error) or type(error).__name__) from None

    async def _line(self) -> bytes:
        try:
            async with asyncio.timeout(self._read_timeout):
                return await self._connection.reader.readuntil(b"\r\n")
        except TimeoutError:
            raise httpx.ReadTimeout("the server sent nothing in time") from None
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("the connection closed mid-body") from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("a chunk header too long") from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.ReadError(str(error) or type(error).__name__) from None

    async def _sized(self, size: int) -> AsyncIterator[bytes]:
        while size > 0:
            data = await self._read(min(size, READ_SIZE))
            if not data:
                raise httpx.RemoteProtocolError("the connection closed mid-body")
            size -= len(data)
            yield data

    async def _chunked(self) -> AsyncIterator[bytes]:
        reader = self._connection.reader
        while True:
            try:
                # One deadline for a chunk's header, data and CRLF when it is small (an SSE
                # event is one chunk): a timer each cost more than the reading.
                async with asyncio.timeout(self._read_timeout):
                    line = await reader.readuntil(b"\r\n")
                    size = _chunk_size(line)
                    small = 0 < size <= READ_SIZE
                    data = await reader.readexactly(size + 2) if small else b""
            except TimeoutError:
                raise httpx.ReadTimeout("the server sent nothing in time") from None
            except asyncio.IncompleteReadError:
                raise httpx.RemoteProtocolError("the connection closed mid-body") from None
            except asyncio.LimitOverrunError:
                raise httpx.RemoteProtocolError("a chunk header too long") from None
            except (OSError, ssl.SSLError) as error:
                raise httpx.ReadError(str(error) or type(error).__name__) from None
            if size == 0:
                while await self._line() != b"\r\n":  # trailers, then the empty line
                    pass
                return
            if small:
                if data[-2:] != b"\r\n":
                    raise httpx.RemoteProtocolError("a chunk not followed by CRLF")
                yield data[:-2]
                continue
            async for piece in self._sized(size):
                yield piece
            if await self._line() != b"\r\n":
                raise httpx.RemoteProtocolError("a chunk not followed by CRLF")

    async def _until_closed(self) -> AsyncIterator[bytes]:
        while data := await self._read(READ_SIZE):
            yield data


class LeanPool:
    """Open connections per server, lent to one request at a time (one event loop's)."""

    def __init__(self, tls: Callable[[], ssl.SSLContext]) -> None:
        self._tls = tls
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._busy: set[_Connection] = set()
        self.closed = False

    async def _connect(
        self, scheme: str, host: str, port: int, connect_s: float | None
    ) -> _Connection:
        secure = scheme == "https"
        tls = self._tls() if secure else None
        try:
            async with asyncio.timeout(connect_s):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=tls, server_hostname=host if secure else None, limit=MAX_HEAD
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} in time") from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.ConnectError(str(error) or type(error).__name__) from None
        return _Connection(reader, writer)

    def _take(self, key: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if connection.usable():
                return connection
            connection.writer.close()
        return None

    def _give_back(self, key: tuple[str, str, int], connection: _Connection, keep: bool) -> None:
        self._busy.discard(connection)
        idle = self._idle.setdefault(key, [])
        if keep and not self.closed and len(idle) < MAX_IDLE and connection.usable():
            idle.append(connection)
        else:
            connection.writer.close()

    @asynccontextmanager
    async def post(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        limit: httpx.Timeout | float | None,
    ) -> AsyncIterator[_Response]:
        """POST ``body`` (JSON) to ``url``; the response's body is read by the block."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise httpx.UnsupportedProtocol(f"cannot request {url!r}")
        host = parts.hostname
        port = parts.port or (443 if scheme == "https" else 80)
        key = (scheme, host, port)
        limits = _Timeouts(limit)
        default_port = port == (443 if scheme == "https" else 80)
        host_header = (f"[{host}]" if ":" in host else host) + ("" if default_port else f":{port}")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        head = _head(target, host_header, len(body), headers)
        reused = self._take(key)
        connection = reused or await self._connect(scheme, host, port, limits.connect)
        self._busy.add(connection)
        try:
            response = await self._exchange(connection, head + body, limits, key)
        except (httpx.RemoteProtocolError, httpx.WriteError, httpx.ReadError):
            self._give_back(key, connection, False)
            if reused is None:
                raise
            # An idle connection the server had closed meanwhile: once more, on a new one.
            connection = await self._connect(scheme, host, port, limits.connect)
            self._busy.add(connection)
            try:
                response = await self._exchange(connection, head + body, limits, key)
            except BaseException:
                self._give_back(key, connection, False)
                raise
        except BaseException:
            self._give_back(key, connection, False)
            raise
        try:
            yield response
        finally:
            response.release()

    async def _exchange(
        self,
        connection: _Connection,
        request: bytes,
        limits: _Timeouts,
        key: tuple[str, str, int],
    ) -> _Response:
        try:
            connection.writer.write(request)
            async with asyncio.timeout(limits.write):
                await connection.writer.drain()
        except TimeoutError:
            raise httpx.WriteTimeout("the request could not be sent in time") from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.WriteError(str(error) or type(error).__name__) from None
        while True:
            status, reason, fields, version = await self._read_head(connection, limits.read)
            if not 100 <= status < 200:
                break
        connection_field = fields.get("connection", "").lower()
        keep_alive = "close" not in connection_field and (
            version != "HTTP/1.0" or "keep-alive" in connection_field
        )

        def done(used: _Connection, keep: bool) -> None:
            self._give_back(key, used, keep)

        return _Response(connection, status, reason, fields, keep_alive, limits.read, done)

    async def _read_head(
        self, connection: _Connection, read_s: float | None
    ) -> tuple[int, str, dict[str, str], str]:
        try:
            async with asyncio.timeout(read_s):
                raw = await connection.reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise httpx.ReadTimeout("the server sent nothing in time") from None
        except asyncio.IncompleteReadError:
            raise httpx.RemoteProtocolError("the server closed the connection") from None
        except asyncio.LimitOverrunError:
            raise httpx.RemoteProtocolError("the response head is too long") from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.ReadError(str(error) or type(error).__name__) from None
        lines = raw.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise httpx.RemoteProtocolError(f"not an HTTP/1 response: {lines[0][:80]!r}")
        fields: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, colon, value = line.partition(":")
            if not colon:
                raise httpx.RemoteProtocolError("a malformed header line")
            name = name.strip().lower()
            value = value.strip()
            fields[name] = f"{fields[name]}, {value}" if name in fields else value
        return int(code), reason, fields, version

    async def aclose(self) -> None:
        self.closed = True
        idle = [c for connections in self._idle.values() for c in connections]
        self._idle.clear()
        for connection in [*idle, *self._busy]:
            await connection.close()
        self._busy.clear()


class StreamClient:
    """A step's client: requests on :class:`LeanPool`'s connections, or through an httpx
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
        self._lean = LeanPool(tls)
        self.is_closed = False

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
        if method != "POST" or self._always_httpx or _proxied(url):
            if self._httpx is None:
                self._httpx = self._make_httpx()
            async with self._httpx.stream(
                method, url, json=json, headers=headers, timeout=limit
            ) as response:
                yield response
            return
        body = _json_bytes(json)
        async with self._lean.post(url, body, headers, limit) as lean:
            yield lean

    async def aclose(self) -> None:
        self.is_closed = True
        await self._lean.aclose()
        if self._httpx is not None:
            await self._httpx.aclose()


def _json_bytes(value: Any) -> bytes:
    """The body as httpx's ``json=`` would send it (compact, UTF-8)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _head(target: str, host: str, length: int, headers: Mapping[str, str]) -> bytes:
    lines = [
        f"POST {target} HTTP/1.1",
        f"Host: {host}",
        "Accept-Encoding: gzip, deflate",
        "Content-Type: application/json",
        f"Content-Length: {length}",
    ]
    for name, value in headers.items():
        if name.lower() in ("host", "content-length", "content-type", "accept-encoding"):
            continue
        if any(c in name or c in value for c in "\r\n\0") or ":" in name:
            raise httpx.LocalProtocolError(f"an invalid header {name!r}")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict")


def _chunk_size(line: bytes) -> int:
    try:
        size = int(line.split(b";", 1)[0].strip(), 16)
    except ValueError:
        raise httpx.RemoteProtocolError("a malformed chunk header") from None
    if size < 0:
        raise httpx.RemoteProtocolError("a malformed chunk header")
    return size


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            try:
                return codecs.lookup(value.strip('"')).name
            except LookupError:
                break
    return "utf-8"


def _decompressor(encoding: str) -> Any:
    if encoding in ("", "identity"):
        return None
    if encoding == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj(zlib.MAX_WBITS)
    raise httpx.DecodingError(f"an answer in an unknown encoding ({encoding})")


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
