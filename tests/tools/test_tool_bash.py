"""``bash`` against real processes: streaming, exit codes, caps, and — above all — that a
timeout or a cancel leaves no process of the command's tree behind."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from core.settings import Limits
from core.tools import process_group
from core.tools.base import ToolContext, ToolError
from core.tools.bash import BashParams, BashTool, _Tail
from core.tools.process_group import process_state


def gone(pid: int) -> bool:
    """Exited: no such process, or a zombie waiting for a parent that may never reap it."""
    state = process_state(pid)
    return state is None or state[0] in "ZX"


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


class Collector:
    """``emit_output`` that records chunks and wakes a waiter once some text has arrived."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.seen = asyncio.Event()
        self.marker = ""

    def __call__(self, chunk: str) -> None:
        self.chunks.append(chunk)
        if self.marker and self.marker in "".join(self.chunks):
            self.seen.set()

    async def wait_for(self, marker: str) -> None:
        self.marker = marker
        if marker in "".join(self.chunks):
            self.seen.set()
        await asyncio.wait_for(self.seen.wait(), 30)


def context(work: Path, collector: Collector | None = None, **limits: float) -> ToolContext:
    return ToolContext(cwd=work, limits=Limits(**limits), emit_output=collector or Collector())


async def test_output_is_streamed_before_the_command_ends(work: Path) -> None:
    collector = Collector()
    command = "echo first; while [ ! -e go ]; do sleep 0.01; done; echo second >&2"
    task = asyncio.create_task(
        BashTool().run(BashParams(command=command, timeout=30), context(work, collector))
    )
    await collector.wait_for("first\n")
    assert "second" not in "".join(collector.chunks)
    (work / "go").touch()
    result = await task
    assert "".join(collector.chunks) == "first\nsecond\n"
    assert result == "first\nsecond\n\nExit code 0"


async def test_runs_in_the_working_folder_with_empty_stdin(work: Path) -> None:
    result = await BashTool().run(BashParams(command="pwd; cat; echo done"), context(work))
    assert result == f"{work}\ndone\n\nExit code 0"


async def test_no_output(work: Path) -> None:
    assert await BashTool().run(BashParams(command="true"), context(work)) == (
        "(no output)\n\nExit code 0"
    )


async def test_non_zero_exit_is_an_error_with_output_and_code(work: Path) -> None:
    with pytest.raises(ToolError) as caught:
        await BashTool().run(BashParams(command="echo oops >&2; exit 3"), context(work))
    assert str(caught.value) == "oops\n\nCommand failed with exit code 3."


async def test_long_output_keeps_the_tail_and_says_how_much_was_cut(work: Path) -> None:
    collector = Collector()
    command = "head -c 5000 /dev/zero | tr '\\0' x; echo; echo END"
    result = await BashTool().run(
        BashParams(command=command), context(work, collector, tool_output_chars=1000)
    )
    assert len("".join(collector.chunks)) == 5005  # everything was streamed
    assert result.startswith("[4005 earlier characters of output were cut; the end follows.]")
    assert result.endswith("x\nEND\n\nExit code 0")


def test_multibyte_characters_split_across_reads_decode_whole() -> None:
    chunks: list[str] = []
    tail = _Tail(1000, chunks.append)
    for piece in (b"caf\xc3", b"\xa9 \xe2\x82", b"\xac"):
        tail.feed(piece)
    tail.feed(b"\xff", final=True)
    assert "".join(chunks) == "café €\ufffd"


async def test_timeout_stops_the_whole_process_tree(work: Path) -> None:
    command = "sleep 60 & echo $! > bg.pid; echo $$ > sh.pid; wait"
    with pytest.raises(ToolError, match=r"timed out after 1 s"):
        await BashTool().run(BashParams(command=command, timeout=1), context(work))
    assert gone(read_pid(work / "sh.pid"))
    assert gone(read_pid(work / "bg.pid"))


async def test_sigterm_ignoring_children_get_sigkilled(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process_group, "KILL_GRACE_S", 0.3)
    command = "trap '' TERM; (trap '' TERM; sleep 60) & echo $! > bg.pid; echo ready; wait"
    collector = Collector()
    task = asyncio.create_task(
        BashTool().run(BashParams(command=command), context(work, collector))
    )
    await collector.wait_for("ready")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone(read_pid(work / "bg.pid"))


async def test_cancel_stops_the_whole_process_tree_and_propagates(work: Path) -> None:
    collector = Collector()
    command = "sleep 60 & echo $! > bg.pid; echo $$ > sh.pid; echo ready; wait"
    task = asyncio.create_task(
        BashTool().run(BashParams(command=command), context(work, collector))
    )
    await collector.wait_for("ready")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone(read_pid(work / "sh.pid"))
    assert gone(read_pid(work / "bg.pid"))


async def test_background_job_holding_the_output_is_stopped_after_exit(work: Path) -> None:
    command = "sleep 60 & echo $! > bg.pid; echo started"
    result = await BashTool().run(BashParams(command=command, timeout=30), context(work))
    assert result.startswith("started\n")
    assert "Background processes still writing to the output were stopped" in result
    assert result.endswith("Exit code 0")
    assert gone(read_pid(work / "bg.pid"))


async def test_background_job_with_redirected_output_is_left_running(work: Path) -> None:
    command = "sleep 60 > /dev/null 2>&1 & echo $! > bg.pid"
    result = await BashTool().run(BashParams(command=command), context(work))
    pid = read_pid(work / "bg.pid")
    try:
        assert result == "(no output)\n\nExit code 0"
        assert not gone(pid)
    finally:
        os.kill(pid, signal.SIGKILL)
