"""A fixture for GUI tests that run real HTTP streams (httpx) on the qasync loop.

``run_forever`` installs asyncio's async-generator hooks, so a generator left suspended (httpx
leaves its byte streams for the loop to close) is closed on the loop. The test loop from
``tests/gui/conftest.py`` is attached without ``run_forever``; without the hooks such
generators are closed at garbage collection, outside any loop, and pytest reports the errors.
Import ``run_loop`` into a test module to use it.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot


@pytest.fixture
def run_loop(qtbot: QtBot, qasync_loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    previous = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(
        firstiter=qasync_loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
        finalizer=qasync_loop._asyncgen_finalizer_hook,  # type: ignore[attr-defined]
    )
    try:
        yield
        gc.collect()
        closing = asyncio.ensure_future(qasync_loop.shutdown_asyncgens())
        qtbot.waitUntil(closing.done)
    finally:
        sys.set_asyncgen_hooks(*previous)
