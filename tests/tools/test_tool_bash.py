"""``bash`` against real processes: streaming, exit codes, caps, and — above all — that a
timeout or a cancel leaves no process of the command's tree behind."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from core.config.settings import Limits, SandboxSettings
from core.safety.sandbox import sandbox_status
from core.tools import process_tree
from core.tools.base import ToolContext, ToolError
from core.tools.bash import BashParams, BashTool, _Tail


def gone(pid: int) -> bool:
    """Exited: no such process, or a zombie waiting for a parent that may never reap it."""
    return not process_tree.alive(pid)


@pytest.fixture(params=[True, False], ids=["sandboxed", "unsandboxed"])
def sandboxed(request: pytest.FixtureRequest) -> bool:
    """Process containment must hold with the sandbox and without it."""
    if request.param and not sandbox_status().active:
        pytest.skip(f"no sandbox here: {sandbox_status().reason}")
    return bool(request.param)


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


def context(
    work: Path, collector: Collector | None = None, *, sandboxed: bool = True, **limits: float
) -> ToolContext:
    return ToolContext(
        cwd=work,
        limits=Limits(**limits),
        emit_output=collector or Collector(),
        sandbox=SandboxSettings(enabled=sandboxed),
    )


async def test_output_is_streamed_before_the_command_ends(work: Path) -> None:
    collector = Collector()
    os.mkfifo(work / "go")  # the command waits on it until the test says go
    command = "echo first; read -r _ < go; echo second >&2"
    task = asyncio.create_task(
        BashTool().run(BashParams(command=command, timeout=30), context(work, collector))
    )
    await collector.wait_for("first\n")
    assert "second" not in "".join(collector.chunks)
    await asyncio.to_thread((work / "go").write_text, "go\n")  # opens once the command reads
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


def marker() -> str:
    """A sleep duration no other process uses: it names the test's processes on the host
    (inside the sandbox's PID namespace, ``$$`` and ``$!`` are not host pids)."""
    return f"{secrets.randbelow(9000) + 1000}.{secrets.randbelow(10**6):06d}"


def survivors(mark: str) -> list[str]:
    """Command lines of live processes mentioning ``mark`` (the shell, bwrap, the sleeps)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or ())
        if mark in cmdline and process_tree.alive(process.pid):
            found.append(cmdline)
    return found


async def cancel_once_printed(work: Path, command: str, printed: str, *, sandboxed: bool) -> None:
    """Start ``command``, cancel the call once ``printed`` was output; the cancel propagates."""
    collector = Collector()
    task = asyncio.create_task(
        BashTool().run(BashParams(command=command), context(work, collector, sandboxed=sandboxed))
    )
    await collector.wait_for(printed)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_timeout_stops_the_whole_process_tree(work: Path, sandboxed: bool) -> None:
    mark = marker()
    command = f"sleep {mark} & wait"
    with pytest.raises(ToolError, match=r"timed out after 1 s"):
        await BashTool().run(
            BashParams(command=command, timeout=1), context(work, sandboxed=sandboxed)
        )
    assert survivors(mark) == []


async def test_sigterm_ignoring_children_get_sigkilled(
    work: Path, monkeypatch: pytest.MonkeyPatch, sandboxed: bool
) -> None:
    monkeypatch.setattr(process_tree, "KILL_GRACE_S", 0.3)
    mark = marker()
    command = f"trap '' TERM; (trap '' TERM; sleep {mark}) & echo ready; wait"
    await cancel_once_printed(work, command, "ready", sandboxed=sandboxed)
    assert survivors(mark) == []


async def test_cancel_stops_the_whole_process_tree_and_propagates(
    work: Path, sandboxed: bool
) -> None:
    mark = marker()
    await cancel_once_printed(
        work, f"sleep {mark} & echo ready; wait", "ready", sandboxed=sandboxed
    )
    assert survivors(mark) == []


async def test_background_job_holding_the_output_is_stopped_after_exit(
    work: Path, sandboxed: bool
) -> None:
    mark = marker()
    command = f"sleep {mark} & echo started"
    result = await BashTool().run(
        BashParams(command=command, timeout=30), context(work, sandboxed=sandboxed)
    )
    assert result.startswith("started\n")
    assert result.endswith("Exit code 0")
    assert survivors(mark) == []


# The attack: a command detaches helpers so they keep running after the step (a miner, an
# exfiltration loop). Each way of detaching is tried on completion and on cancel.
DETACHING = {
    "setsid": "setsid sleep {mark} > /dev/null 2>&1 < /dev/null &",
    "nohup": "nohup sleep {mark} > /dev/null 2>&1 &",
    "disown": "sleep {mark} > /dev/null 2>&1 & disown",
    "double-fork": "( setsid sh -c 'sleep {mark} &' > /dev/null 2>&1 & )",
    "holding-output": "setsid sleep {mark} &",
}


@pytest.mark.parametrize("how", sorted(DETACHING))
async def test_detached_children_do_not_outlive_a_finished_command(
    work: Path, sandboxed: bool, how: str
) -> None:
    mark = marker()
    # The command ends once its detached child runs (not before it started: nothing to stop).
    running = f"until pgrep -f '^sleep {mark}$' > /dev/null; do :; done"
    command = DETACHING[how].format(mark=mark) + f"\n{running}; echo launched"
    result = await BashTool().run(
        BashParams(command=command, timeout=30), context(work, sandboxed=sandboxed)
    )
    assert result.startswith("launched")
    assert survivors(mark) == []


@pytest.mark.parametrize("how", sorted(DETACHING))
async def test_detached_children_do_not_outlive_a_cancelled_command(
    work: Path, sandboxed: bool, how: str
) -> None:
    mark = marker()
    command = DETACHING[how].format(mark=mark) + "\necho launched; sleep 60"
    await cancel_once_printed(work, command, "launched", sandboxed=sandboxed)
    assert survivors(mark) == []


async def test_unsandboxed_leftovers_are_reported_to_the_model(work: Path) -> None:
    command = f"sleep {marker()} > /dev/null 2>&1 & echo started"
    result = await BashTool().run(BashParams(command=command), context(work, sandboxed=False))
    assert "were stopped when it ended" in result


@pytest.mark.parametrize("sandboxed_run", [True, False], ids=["sandboxed", "unsandboxed"])
def test_a_setsid_child_leaves_no_traceback_at_exit(work: Path, sandboxed_run: bool) -> None:
    """The old failure: the escaped child kept the output pipe open, and closing it after the
    event loop printed an "Event loop is closed" traceback when Baton exited."""
    if sandboxed_run and not sandbox_status().active:
        pytest.skip("no sandbox here")
    mark = marker()
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from core.config.settings import SandboxSettings\n"
        "from core.tools.base import ToolContext\n"
        "from core.tools.bash import BashParams, BashTool\n"
        f"params = BashParams(command='setsid sleep {mark} & echo hi', timeout=30)\n"
        f"sandbox = SandboxSettings(enabled={sandboxed_run})\n"
        "ctx = ToolContext(cwd=Path(sys.argv[1]), sandbox=sandbox)\n"
        "print(asyncio.run(BashTool().run(params, ctx)))\n"
    )
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script, str(work)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hi\n")
    assert done.stderr == ""
    assert survivors(mark) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreaper is Linux-only")
async def test_orphans_that_ended_by_themselves_are_reaped_not_left_as_zombies(
    work: Path,
) -> None:
    def zombie_children() -> set[int]:
        return {p.pid for p in psutil.Process().children() if p.status() == psutil.STATUS_ZOMBIE}

    before = zombie_children()
    # Two orphans that end by themselves; the command ends once both have (dead: a zombie
    # waiting for its reaper, or gone).
    ended = 'until [ ! -e /proc/$p ] || [ "$(cut -d" " -f3 /proc/$p/stat)" = Z ]; do :; done'
    command = (
        "( true & echo $! > one ) ; ( true > /dev/null & echo $! > two ) ; "
        f"for p in $(cat one two); do {ended}; done; echo done"
    )
    result = await BashTool().run(BashParams(command=command), context(work, sandboxed=False))
    assert result.startswith("done")
    assert zombie_children() - before == set()
