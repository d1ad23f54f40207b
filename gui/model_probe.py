"""Asking an OpenAI-compatible server which models it serves (``GET {base_url}/models``).

The settings dialog's **Test connection** and the welcome panel's Ollama detection both use
:func:`list_models`. It is a coroutine on the GUI's asyncio loop (qasync), so the window never
freezes while a server takes its time; every failure becomes :class:`ProbeError` with one
sentence a person can act on. No Qt here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT_S = 10.0


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
    import httpx  # here, not at start-up: importing httpx costs ~0.3 s (it loads its CLI)

    url = base_url.strip().rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout_s, transport=transport) as client:
            response = await client.get(url, headers=headers)
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
