"""``bash``: run a shell command in the working folder, streaming its output.

The command runs in its own session (process group), so a timeout or a cancelled run can stop
everything it started — pipelines, background jobs, grandchildren — with one signal to the
group: SIGTERM, then SIGKILL for whatever is still there after a grace period. Output (stdout
and stderr merged, as a person would see it in a terminal) reaches the run as it arrives via
``ctx.emit_output``; the model gets the tail, because the end of a build or test log is where
the verdict is. A non-zero exit is a :class:`ToolError`, so the model sees a failed call.
"""

from __future__ import annotations

import asyncio
import codecs
import shutil
from collections.abc import Callable

from pydantic import BaseModel, Field

from core.tools.base import Tool, ToolContext, ToolError
from core.tools.paths import working_root
from core.tools.process_group import POLL_S, stop_group

LINGER_S = 1.0
"""After the shell exits, how long background jobs still holding the output may keep writing."""
READ_CHUNK = 65536


class BashParams(BaseModel):
    command: str = Field(description="The shell command to run (bash syntax).")
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds before the command is stopped. Default: the configured limit.",
    )


class BashTool(Tool):
    name = "bash"
    description = (
        "Run a shell command with bash in the working folder and return its output (stdout "
        "and stderr together) and exit code. stdin is empty, so interactive commands cannot "
        "get input. Long output is cut to its end. A non-zero exit code is reported as an "
        "error. The command is stopped after the timeout, with everything it started. Use the "
        "read, grep, find, ls, edit and write tools rather than cat, grep, find, ls or sed."
    )
    Params = BashParams

    async def run(self, params: BashParams, ctx: ToolContext) -> str:
        timeout = params.timeout or ctx.limits.bash_timeout_s
        shell = shutil.which("bash") or shutil.which("sh") or "/bin/sh"
        proc = await asyncio.create_subprocess_exec(
            shell,
            "-c",
            params.command,
            cwd=working_root(ctx.cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        tail = _Tail(ctx.limits.tool_output_chars, ctx.emit_output)
        assert proc.stdout is not None
        reader = asyncio.create_task(_pump(proc.stdout, tail))
        lingering = False
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                # Not proc.wait(): it also waits for the output to close, which a background
                # job may hold open long after the shell itself has exited.
                while proc.returncode is None and not reader.done():
                    await asyncio.wait({reader}, timeout=POLL_S)
                if reader.done():
                    await proc.wait()
                else:
                    await asyncio.wait({reader}, timeout=LINGER_S)
                    lingering = not reader.done()
        except TimeoutError:
            pass  # the deadline expired: reported below, after the processes are gone
        finally:
            if lingering or not reader.done() or proc.returncode is None:
                await asyncio.shield(stop_group(proc))
            # Everything holding the output is gone, so the reader ends; a process that left
            # the group (setsid) could still hold it: don't wait for that one.
            await asyncio.wait({reader}, timeout=LINGER_S)
            if not reader.done():
                reader.cancel()
                await asyncio.wait({reader})
        if not reader.cancelled():
            reader.result()  # a failing emit_output is a bug: let it show
        output = tail.text()
        if deadline.expired():
            raise ToolError(f"{output}\n\nCommand timed out after {timeout:g} s and was stopped.")
        if lingering:
            output += (
                "\n[Background processes still writing to the output were stopped when the "
                "command ended; redirect their output (cmd > log 2>&1 &) to keep them running.]"
            )
        code = proc.returncode
        if code == 0:
            return f"{output}\n\nExit code 0"
        if code is not None and code < 0:
            raise ToolError(f"{output}\n\nCommand was killed by signal {-code}.")
        raise ToolError(f"{output}\n\nCommand failed with exit code {code}.")


class _Tail:
    """Streams decoded output on and keeps only the last ``limit`` characters of it."""

    def __init__(self, limit: int, emit: Callable[[str], None]) -> None:
        self.limit = limit
        self.emit = emit
        self.kept = ""
        self.cut = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes, *, final: bool = False) -> None:
        chunk = self.decoder.decode(data, final=final)
        if not chunk:
            return
        self.emit(chunk)
        self.kept += chunk
        if len(self.kept) > self.limit:
            self.cut += len(self.kept) - self.limit
            self.kept = self.kept[-self.limit :]

    def text(self) -> str:
        body = self.kept.rstrip("\n") or "(no output)"
        if self.cut:
            return f"[{self.cut} earlier characters of output were cut; the end follows.]\n{body}"
        return body


async def _pump(stream: asyncio.StreamReader, tail: _Tail) -> None:
    while data := await stream.read(READ_CHUNK):
        tail.feed(data)
    tail.feed(b"", final=True)
