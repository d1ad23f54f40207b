"""Fixtures for the agent-tool tests: a working folder, a folder *outside* it, and a way to
call a tool with raw JSON-like arguments exactly as the agent loop does (validate, then run)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from core.config.settings import Limits
from core.tools.base import Tool, ToolContext

CallTool = Callable[..., Awaitable[str]]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The step's working folder (symlinks resolved, so tests can compare paths)."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A sibling of the working folder holding a secret no tool may reach."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("TOP SECRET\n")
    return folder


@pytest.fixture
def call(work: Path) -> CallTool:
    async def call_tool(
        tool: Tool, *, limits: Limits | None = None, cwd: Path | None = None, **arguments: Any
    ) -> str:
        params = tool.Params.model_validate(arguments)
        ctx = ToolContext(cwd=cwd or work, limits=limits or Limits())
        return await tool.run(params, ctx)

    return call_tool
