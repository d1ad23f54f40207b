"""A Ray cluster address nobody answers at: ``baton batch --executor ray`` says so, naming the
address, after a bounded wait (``--ray-timeout``) instead of Ray's minutes of silent retries,
and exits 2 without starting Ray or keeping a batch record.

Importing :mod:`tests.test_batch_ray` skips this module as it skips that one when the Ray
extra is missing (and fails where ``BATON_REQUIRE_EXTRAS=1`` says it was installed)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.batch.store import BatchStore
from core.cli import main
from core.config.settings import save_settings
from core.model.errors import RunError
from tests.llm_server import LLMServer
from tests.test_batch_ray import write_inputs

ray = pytest.importorskip("ray")  # present: importing tests.test_batch_ray did not skip

pytestmark = pytest.mark.ray


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens at (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def test_an_address_nobody_answers_at_fails_the_batch_naming_it(
    llm_server: LLMServer,
    tmp_path: Path,
    closed_port: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    save_settings(llm_server.settings())
    address = f"127.0.0.1:{closed_port}"
    code = main(
        [
            "batch",
            "scout-and-plan",
            "--inputs",
            str(write_inputs(tmp_path, 2)),
            "--cwd",
            str(tmp_path),
            "--executor",
            "ray",
            "--ray-address",
            address,
            "--ray-timeout",
            "1",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"the Ray cluster at {address} did not answer within 1 s" in err
    assert "--ray-timeout" in err
    assert not ray.is_initialized()
    assert BatchStore().list() == []  # nothing ran: no batch to resume
    assert llm_server.requests == []


def test_a_listening_address_is_waited_for_no_longer(listening: int) -> None:
    from core.batch.ray_executor import wait_for_address  # after the check that Ray is here

    wait_for_address(f"127.0.0.1:{listening}", timeout_s=30)
    wait_for_address(f"ray://127.0.0.1:{listening}", timeout_s=30)


def test_an_address_that_is_not_host_and_port_is_refused() -> None:
    from core.batch.ray_executor import wait_for_address

    with pytest.raises(RunError, match="not HOST:PORT"):
        wait_for_address("head-node:six", timeout_s=1)
