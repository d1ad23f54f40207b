"""Meeting a Ray cluster without starting one: an address where something other than Ray
listens is named at once (not after Ray's minutes of retries and its own exit); Ray's refusals
are told as their causes (another version, authentication); Ray's logging goes to
``<data>/logs/ray.log``; a local Ray that Baton starts gets its token by the environment.

Importing :mod:`tests.test_batch_ray` skips this module when the Ray extra is missing."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.batch.ray_setup import (
    RayLogFile,
    explain_connect_error,
    local_ray_token,
    ray_log_path,
)
from core.batch.store import BatchStore
from core.cli import main
from core.config.settings import save_settings
from tests.llm_server import LLMServer
from tests.test_batch_ray import write_inputs

ray = pytest.importorskip("ray")  # present: importing tests.test_batch_ray did not skip

pytestmark = pytest.mark.ray


@pytest.fixture
def web_server() -> Iterator[int]:
    """A port where an HTTP/1 server answers everything with 400 (not Ray)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.1)  # accept() wakes up to see ``stop``
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.recv(4096)
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, name="web-server")
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=10)
    server.close()


def test_an_address_that_is_not_a_ray_cluster_is_named_at_once(
    llm_server: LLMServer, tmp_path: Path, web_server: int, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    address = f"127.0.0.1:{web_server}"
    inputs = write_inputs(tmp_path, 2)
    command = ["batch", "scout-and-plan", "--inputs", str(inputs), "--cwd", str(tmp_path)]
    code = main([*command, "--executor", "ray", "--ray-address", address])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{address} answers, but not as a Ray cluster (no gRPC there)" in err
    assert not ray.is_initialized()
    assert BatchStore().list() == []
    assert llm_server.requests == []


def test_another_ray_or_python_version_is_said_with_both_versions() -> None:
    from ray._private.utils import check_version_info

    with pytest.raises(RuntimeError) as raised:
        check_version_info({"ray_version": "2.41.0", "python_version": "3.12.1"}, "this-host")
    text = explain_connect_error("the Ray cluster at head:6379", raised.value)
    assert text.startswith("the Ray cluster at head:6379 runs Ray 2.41.0 on Python 3.12.1, ")
    assert f"this Baton Ray {ray.__version__} on Python " in text
    assert "pip install 'ray==2.41.0'" in text


def test_a_refused_token_is_said_to_be_about_authentication() -> None:
    from ray._private.authentication.authentication_constants import (
        TOKEN_AUTH_ENABLED_BUT_NO_TOKEN_FOUND_ERROR_MESSAGE,
    )
    from ray.exceptions import AuthenticationError

    error = AuthenticationError(TOKEN_AUTH_ENABLED_BUT_NO_TOKEN_FOUND_ERROR_MESSAGE)
    text = explain_connect_error("the Ray cluster at head:6379", error)
    assert text.startswith("the Ray cluster at head:6379 requires authentication")
    assert "RAY_AUTH_TOKEN" in text and "~/.ray/auth_token" in text


def test_other_failures_keep_rays_first_line() -> None:
    text = explain_connect_error("a local Ray", ConnectionError("no room\nmore"))
    assert text == "could not start or reach a local Ray: no room"


def test_rays_logging_goes_to_the_log_file_not_the_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = RayLogFile()
    log.open()
    try:
        logging.getLogger("ray._private.worker").error("Ray says something")
    finally:
        log.close()
    assert "Ray says something" not in capsys.readouterr().err
    assert "Ray says something" in ray_log_path().read_text(encoding="utf-8")


def test_a_local_ray_gets_a_token_by_the_environment_unless_the_person_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    given = local_ray_token()
    assert given["RAY_AUTH_MODE"] == "token" and len(given["RAY_AUTH_TOKEN"]) == 64
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    assert local_ray_token() == {}
