"""File tools open only regular files, stay out of Baton's folders, and can be abandoned."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import paths
from core.tools.base import ToolError
from core.tools.edit import EditTool
from core.tools.files import off_loop
from core.tools.find import FindTool
from core.tools.grep import GrepTool
from core.tools.ls import LsTool
from core.tools.read import ReadTool
from core.tools.write import WriteTool


@pytest.fixture
def fifo(work: Path) -> Path:
    if os.name != "posix":
        pytest.skip("FIFOs need POSIX")
    path = work / "pipe"
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(work: Path) -> Iterator[Path]:
    if os.name != "posix":
        pytest.skip("Unix sockets need POSIX")
    path = work / "sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        yield path


async def test_read_refuses_a_fifo_at_once(call, fifo: Path) -> None:
    with pytest.raises(ToolError, match=r"pipe is a named pipe \(FIFO\); file tools only"):
        await asyncio.wait_for(call(ReadTool(), path="pipe"), 10)


async def test_read_refuses_a_socket(call, unix_socket: Path) -> None:
    with pytest.raises(ToolError, match="sock is a socket"):
        await call(ReadTool(), path="sock")


async def test_edit_and_write_refuse_a_fifo(call, fifo: Path) -> None:
    with pytest.raises(ToolError, match="named pipe"):
        await asyncio.wait_for(call(EditTool(), path="pipe", old_string="a", new_string="b"), 10)
    with pytest.raises(ToolError, match="named pipe"):
        await call(WriteTool(), path="pipe", content="x")
    assert fifo.is_fifo()  # noqa: ASYNC240 (a test's one stat)


@pytest.mark.parametrize("ripgrep", [True, False], ids=["ripgrep", "python"])
async def test_grep_skips_fifos_in_a_folder_and_refuses_one_named(
    call, fifo: Path, work: Path, ripgrep: bool
) -> None:
    (work / "a.txt").write_text("needle\n")
    result = await asyncio.wait_for(call(GrepTool(use_ripgrep=ripgrep), pattern="needle"), 10)
    assert result == "a.txt:1:needle"
    with pytest.raises(ToolError, match="named pipe"):
        await call(GrepTool(use_ripgrep=ripgrep), pattern="x", path="pipe")


async def test_cancelled_file_work_is_abandoned_not_awaited() -> None:
    release = threading.Event()
    started = threading.Event()

    def stuck() -> None:
        started.set()
        release.wait(30)  # a read that never returns (a FIFO, a hung network mount)

    task = asyncio.create_task(off_loop(stuck))
    await asyncio.to_thread(started.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    worker = next(t for t in threading.enumerate() if t.name == "baton-file-tool")
    assert worker.daemon  # the interpreter exits without joining it
    release.set()


async def test_off_loop_returns_results_and_raises_errors() -> None:
    assert await off_loop(sum, [1, 2]) == 3
    with pytest.raises(ZeroDivisionError):
        await off_loop(divmod, 1, 0)


# -- Baton's own folders inside the working folder (a run started with --cwd $HOME) ----------


@pytest.fixture
def home(isolated_home: Path) -> Path:
    (paths.config_dir() / "config.yaml").write_text("policy: {}\n")
    (paths.data_dir() / "runs").mkdir(exist_ok=True)
    (isolated_home / "notes.txt").write_text("hello\n")
    return isolated_home.resolve()


@pytest.mark.parametrize(
    "path",
    ["config/config.yaml", "./notes/../config/config.yaml", "config", "data/runs/x.jsonl"],
)
async def test_every_file_tool_refuses_batons_folders(call, home: Path, path: str) -> None:
    message = "in Baton's own settings or data folder"
    for tool, arguments in (
        (ReadTool(), {"path": path}),
        (WriteTool(), {"path": path, "content": "policy: {bash: allow}\n"}),
        (EditTool(), {"path": path, "old_string": "{}", "new_string": "{bash: allow}"}),
        (LsTool(), {"path": path}),
        (GrepTool(), {"pattern": ".", "path": path}),
        (FindTool(), {"pattern": "*", "path": path}),
    ):
        with pytest.raises(ToolError, match=message):
            await call(tool, cwd=home, **arguments)
    assert (paths.config_dir() / "config.yaml").read_text() == "policy: {}\n"


async def test_a_symlink_into_batons_folders_is_refused(call, home: Path) -> None:
    (home / "innocent").symlink_to(paths.config_dir() / "config.yaml")
    (home / "folder").symlink_to(paths.data_dir())
    with pytest.raises(ToolError, match="Baton's own"):
        await call(ReadTool(), cwd=home, path="innocent")
    with pytest.raises(ToolError, match="Baton's own"):
        await call(WriteTool(), cwd=home, path="folder/runs/forged.jsonl", content="{}")
    assert not (paths.data_dir() / "runs" / "forged.jsonl").exists()


async def test_a_projects_own_baton_folder_stays_usable(call, work: Path) -> None:
    """``.baton/`` inside the working folder holds hand-off files; it is not Baton-private."""
    await call(WriteTool(), path=".baton/handoff.md", content="next: review\n")
    assert await call(ReadTool(), path=".baton/handoff.md") == "1\tnext: review\n"
    assert "handoff.md" in await call(FindTool(), pattern="**/*.md")


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_the_approval_preview_of_a_fifo_says_so_instead_of_hanging(fifo: Path, tool: str) -> None:
    from core.tools.diffs import preview_diff

    arguments = {"path": "pipe", "content": "x", "old_string": "a", "new_string": "b"}
    if tool == "write":
        del arguments["old_string"], arguments["new_string"]
    else:
        del arguments["content"]
    preview = preview_diff(tool, arguments, fifo.parent)
    assert preview == (
        "(no preview: pipe is a named pipe (FIFO); file tools only work on regular files.)"
    )
