"""Talking to an OpenAI-compatible provider over HTTP: one client set-up for every caller.

Baton's own agent loop (:mod:`core.backends.openai_compat`), Settings' **Test connection**, the
welcome panel's Ollama detection and the model fallback of ``baton run`` all reach providers
through :func:`provider_client`, so they share one TLS context (certifi's CA bundle, loaded once)
and one User-Agent, and a key is sent the same way everywhere. A step gets its client from
:func:`step_client`: inside :func:`shared_provider_clients` (a batch; a Ray worker's items, with
the worker's own :class:`ProviderClients`) steps reuse clients and their open connections
instead of making one each. A step's streamed requests go through
:mod:`core.config.http_stream` (a lean HTTP/1.1 client on asyncio's streams; httpx when a proxy
applies).

:func:`list_models` asks a server which models it serves (``GET {base_url}/models``); every
failure becomes :class:`ProbeError` with one sentence a person can act on.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar

import certifi
import httpx

from core import __version__
from core.config.http_stream import StreamClient

DEFAULT_TIMEOUT_S = 10.0
USER_AGENT = f"baton/{__version__}"


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One TLS context for every request of the process.

    Building one loads the whole CA bundle (about 50 ms, measured): it was most of a step's
    start-up before the first request. Contexts are safe to share between clients.
    """
    return ssl.create_default_context(cafile=certifi.where())


def provider_headers(api_key: str | None, **extra: str) -> dict[str, str]:
    headers = {"User-Agent": USER_AGENT, **extra}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def provider_client(
    timeout: httpx.Timeout | float, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """An ``async with`` client for provider requests (the caller sets per-request headers)."""
    return httpx.AsyncClient(timeout=timeout, transport=transport, verify=shared_ssl_context())


def stream_client(
    timeout: httpx.Timeout | float, transport: httpx.AsyncBaseTransport | None = None
) -> StreamClient:
    """A client for streamed model requests (lean; httpx set up as here when it hands over)."""
    return StreamClient(
        timeout,
        shared_ssl_context,
        lambda: provider_client(timeout, transport),
        always_httpx=transport is not None,
    )


class ProviderClients:
    """Clients lent to one step at a time and kept, with their connections, for the next.

    A client per running step keeps its connection alive for the step's next request and
    the next step's, and each client's pool small (httpx's pool looked at every connection it
    held on each request: 10 ms per request at 64 at once, measured, when all shared one).

    Made on the event loop its steps run on. Whoever makes it closes it (:meth:`aclose`):
    :func:`shared_provider_clients` at the end of its block, or a process that outlives its
    runs — a Ray worker keeps one for every item it runs, closed when the worker ends.
    """

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        """Clients and their connections belong to the loop that made them."""
        self._free: list[StreamClient] = []
        self._made: list[StreamClient] = []

    def borrow(self, http_timeout: httpx.Timeout | float) -> StreamClient:
        """A free client, or a new one; hand it back with :meth:`give_back`."""
        if self._free:
            return self._free.pop()
        client = stream_client(http_timeout)
        self._made.append(client)
        return client

    def give_back(self, client: StreamClient) -> None:
        self._free.append(client)

    @property
    def made(self) -> int:
        """How many clients were made (each with its own connections) and not yet closed."""
        return len(self._made)

    async def aclose(self) -> None:
        for client in self._made:
            await client.aclose()
        self._made.clear()
        self._free.clear()


_shared_clients: ContextVar[ProviderClients | None] = ContextVar(
    "baton_shared_provider_clients", default=None
)


@asynccontextmanager
async def shared_provider_clients(
    clients: ProviderClients | None = None,
) -> AsyncIterator[ProviderClients]:
    """Steps started inside this block — in the tasks it starts too — reuse provider clients
    (and their open connections) instead of making one each; all are closed at its end,
    unless they are the owner's ``clients`` (kept open for the owner's next block).

    A step otherwise makes its own client: a new pool, a new connection per step. A batch runs
    hundreds of steps against one provider, and that was the largest part of the supervisor's
    CPU per item (benchmarks/batch.py). Requests carry their own headers (key, User-Agent)
    and timeouts, so steps of different providers can use the same client one after another.
    """
    pool = clients if clients is not None else ProviderClients()
    token = _shared_clients.set(pool)
    try:
        yield pool
    finally:
        _shared_clients.reset(token)
        if clients is None:
            await pool.aclose()


@asynccontextmanager
async def step_client(
    http_timeout: httpx.Timeout | float, transport: httpx.AsyncBaseTransport | None = None
) -> AsyncIterator[StreamClient]:
    """The client for one step: a reused one inside :func:`shared_provider_clients`, else a
    client of its own, closed at the end of the block. A custom ``transport`` always gets its
    own, and so does a step on another event loop (a thread's). Pass the timeout to each
    request too: a reused client was made with another step's."""
    pool = _shared_clients.get()
    if pool is not None and transport is None and pool.loop is asyncio.get_running_loop():
        lent = pool.borrow(http_timeout)
        try:
            yield lent
        finally:
            pool.give_back(lent)
        return
    client = stream_client(http_timeout, transport)
    try:
        yield client
    finally:
        await client.aclose()


class ProbeError(Exception):
    """The server could not be asked or gave no model list; ``str()`` is the sentence."""


async def list_models(
    base_url: str,
    api_key: str | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[str]:
    """The model ids the server lists, sorted; raises :class:`ProbeError`."""
    url = base_url.strip().rstrip("/") + "/models"
    try:
        async with provider_client(timeout_s, transport) as client:
            response = await client.get(url, headers=provider_headers(api_key))
    except (httpx.InvalidURL, httpx.UnsupportedProtocol):
        raise ProbeError(f"{base_url} is not a valid http:// or https:// address.") from None
    except httpx.ConnectError:
        raise ProbeError(f"Could not connect to {base_url}: nothing answers there.") from None
    except httpx.TimeoutException:
        raise ProbeError(f"{base_url} did not answer within {timeout_s:g} s.") from None
    except httpx.HTTPError as error:
        raise ProbeError(f"The connection to {base_url} failed: {error}.") from None
    if response.status_code in (401, 403):
        raise ProbeError(
            f"The server refused the API key (HTTP {response.status_code}); check the key."
        )
    if response.status_code == 404:
        raise ProbeError(
            f"The server has no model list at {url} (HTTP 404); the base URL usually ends in /v1."
        )
    if response.status_code >= 400:
        raise ProbeError(f"The server answered HTTP {response.status_code} to {url}.")
    try:
        data = response.json()["data"]
        models = sorted({str(entry["id"]) for entry in data})
    except (ValueError, KeyError, TypeError):
        raise ProbeError(f"{url} did not answer with an OpenAI-compatible model list.") from None
    return models


async def only_model(
    base_url: str,
    api_key: str | None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    transport: httpx.AsyncBaseTransport | None = None,
) -> str:
    """The model to use when none was chosen: the server's only one. Raises :class:`ProbeError`
    saying what to do when it serves none or several (naming a few), or cannot be asked."""
    models = await list_models(base_url, api_key, timeout_s=timeout_s, transport=transport)
    if len(models) == 1:
        return models[0]
    if not models:
        raise ProbeError(f"{base_url} serves no models.")
    shown = ", ".join(models[:5]) + (f" and {len(models) - 5} more" if len(models) > 5 else "")
    raise ProbeError(f"{base_url} serves {len(models)} models ({shown}).")
