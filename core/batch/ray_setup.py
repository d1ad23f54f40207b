"""Meeting a Ray cluster: is it one, why it refused, where Ray's own words go, and the
token of a Ray that Baton starts. Plain Python (no Ray import), so it is tested without Ray.

* :func:`check_speaks_ray`: Ray's head node and its client server speak gRPC (HTTP/2). Given
  an address where something else listens, ``ray.init`` retries for minutes, prints its own
  warnings, then exits the process; a two-second HTTP/2 greeting tells the person at once.
* :func:`explain_connect_error`: the cause in words (authentication, another Ray or Python
  version), not only Ray's "Failed to connect".
* :class:`RayLogFile`: Ray's Python loggers write to ``<data>/logs/ray.log`` while a batch
  uses Ray, never to the person's terminal (``--json`` output must stay NDJSON).
* :func:`local_ray_token`: a Ray started on this machine enables token authentication and,
  by default, writes the token to ``~/.ray/auth_token``, where every later ``ray start`` on
  the machine finds it and then demands it from its clients. Baton gives its own local Ray a
  token through the environment instead, so nothing is left behind.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import socket
from pathlib import Path

from core.config import paths
from core.model.errors import RunError

_HTTP2_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""HTTP/2's connection preface and an empty SETTINGS frame (what a gRPC client opens with)."""
_SETTINGS = 0x04
GREETING_S = 2.0
"""How long a cluster gets to answer the greeting; one that stays silent is given the benefit
of the doubt (a loaded head node), and Ray's own connect decides."""


def check_speaks_ray(target: tuple[str, int], address: str, timeout_s: float = GREETING_S) -> None:
    """Raise :class:`RunError` when what listens at ``target`` answers, but not as Ray does.

    Skipped with TLS (``RAY_USE_TLS``): the greeting would then be refused by a real cluster."""
    if os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true"):
        return
    try:
        with socket.create_connection(target, timeout=timeout_s) as connection:
            connection.sendall(_HTTP2_GREETING)
            reply = _read(connection, 9)
    except TimeoutError:
        return
    except OSError:
        return  # gone meanwhile: Ray's own connect says so
    if len(reply) < 9 or reply[3] != _SETTINGS:
        raise RunError(
            f"{address} answers, but not as a Ray cluster (no gRPC there); check the "
            "address: a head node listens on port 6379, its client server (ray://) on 10001"
        )


def _read(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


_VERSIONS = re.compile(r"Ray:\s*(\S+)\s+Python:\s*(\S+)")


def explain_connect_error(where: str, error: BaseException) -> str:
    """Why ``ray.init`` could not use ``where`` (a cluster's address, or "a local Ray"), as a
    sentence saying the cause and what to do."""
    text = str(error)
    lowered = text.lower()
    first = (text.strip().splitlines() or [type(error).__name__])[0]
    if "version mismatch" in lowered:
        versions = _VERSIONS.findall(text)
        if len(versions) == 2:
            (ray_there, python_there), (ray_here, python_here) = versions
            reason: str = (
                f"{where} runs Ray {ray_there} on Python {python_there}, this Baton Ray "
                f"{ray_here} on Python {python_here}: a cluster's clients need the same "
                f"versions (pip install 'ray=={ray_there}')"
            )
            return reason
        return f"{where} runs another version of Ray or Python than this Baton: {first}"
    if type(error).__name__ == "AuthenticationError" or any(
        word in lowered for word in ("authentication", "unauthenticated", "auth token")
    ):
        return (
            f"{where} requires authentication and did not accept this Baton: give it the "
            "cluster's token (RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH naming its file); a "
            "~/.ray/auth_token left by another Ray is used otherwise, and may be the wrong "
            f"one ({first})"
        )
    return f"could not start or reach {where}: {first}"


def ray_log_path() -> Path:
    return paths.data_dir() / "logs" / "ray.log"


class RayLogFile:
    """Ray's Python logging into ``<data>/logs/ray.log`` while open (its terminal handler
    set aside, put back on :meth:`close`)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or ray_log_path()
        self._logger = logging.getLogger("ray")
        self._handler: logging.FileHandler | None = None
        self._set_aside: list[logging.Handler] = []
        self._propagate = self._logger.propagate

    def open(self) -> None:
        if self._handler is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handler = logging.FileHandler(self.path, encoding="utf-8")
        self._handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        self._set_aside = list(self._logger.handlers)
        for handler in self._set_aside:
            self._logger.removeHandler(handler)
        self._logger.addHandler(self._handler)
        self._logger.propagate = False

    def close(self) -> None:
        if self._handler is None:
            return
        self._logger.removeHandler(self._handler)
        self._handler.close()
        self._handler = None
        for handler in self._set_aside:
            self._logger.addHandler(handler)
        self._logger.propagate = self._propagate


_TOKEN = secrets.token_hex(32)
"""One per Baton process: Ray caches the token it loaded for the life of the process."""

AUTH_VARIABLES = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def local_ray_token() -> dict[str, str]:
    """The environment a local Ray should start with: token authentication with a token of
    Baton's own, passed to its processes by the environment (so Ray writes no token file);
    nothing when the person chose how their Ray authenticates."""
    if any(name in os.environ for name in AUTH_VARIABLES):
        return {}
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": _TOKEN}
