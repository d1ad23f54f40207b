"""Steps of a batch reuse provider clients and their connections, and the clients close with
the block that lent them (no socket outlives a batch); outside such a block each step has its
own client, closed with the step."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from core.config.provider_http import shared_provider_clients, step_client
from core.model.events import StepFinished
from tests.llm_server import LLMServer, Reply
from tests.test_openai_compat import Harness


@pytest.fixture
def harness(llm_server: LLMServer, tmp_path: Path) -> Iterator[Harness]:
    yield Harness(llm_server, tmp_path)


def open_connections(port: int) -> list[int]:
    """Local ports of this process's established connections to ``port``."""
    return sorted(
        c.laddr.port
        for c in psutil.Process().net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


async def test_steps_one_after_another_share_one_connection_closed_with_the_block(
    harness: Harness,
) -> None:
    harness.server.queue(Reply.answer("first"), Reply.answer("second"))
    async with shared_provider_clients():
        await harness.run()
        after_first = open_connections(harness.server.port)
        await harness.run()
        after_second = open_connections(harness.server.port)
    assert len(after_first) == 1  # read to its end, the response left its connection open
    assert after_second == after_first  # the second step used the same connection
    assert [e.output for e in harness.of(StepFinished)] == ["first", "second"]
    assert open_connections(harness.server.port) == []


async def test_a_step_outside_a_shared_block_closes_its_own_connection(harness: Harness) -> None:
    harness.server.queue(Reply.answer("alone"))
    await harness.run()
    assert harness.finished.output == "alone"
    assert open_connections(harness.server.port) == []


async def test_running_steps_get_a_client_each_and_every_client_closes_at_the_end() -> None:
    async with shared_provider_clients():
        async with step_client(5.0) as first:
            pass
        async with step_client(5.0) as again, step_client(5.0) as meanwhile:
            assert again is first  # a free client is lent again, with its connections
            assert meanwhile is not first  # one step at a time per client
        assert not first.is_closed and not meanwhile.is_closed
    assert first.is_closed and meanwhile.is_closed
    async with step_client(5.0) as own:
        assert own is not first and own is not meanwhile
    assert own.is_closed


async def test_clients_are_lent_on_the_event_loop_of_their_block_only() -> None:
    async def lent() -> object:
        async with step_client(5.0) as client:
            return client

    async with shared_provider_clients():
        inside = await asyncio.create_task(lent())
        outside = await asyncio.to_thread(lambda: asyncio.run(lent()))
    assert inside is not outside  # a client belongs to one event loop
    assert inside.is_closed  # type: ignore[attr-defined]
