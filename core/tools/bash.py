"""``bash``: run a shell command in the working folder, streaming its output.

The command runs confined where the platform allows (:mod:`core.safety.sandbox`: writes only in
the working folder, Baton's folders hidden, its own PID namespace), with an environment
scrubbed of secrets (:mod:`core.safety.environment`). Nothing it starts outlives the call: its
process
tree is tracked while it runs and tagged through the environment (:mod:`core.tools.process_tree`),
and whatever is left when the shell exits, times out or is cancelled — background jobs,
``setsid``, ``nohup`` and ``disown`` included — gets SIGTERM, then SIGKILL after a grace
period. Without a sandbox Baton also becomes the child subreaper, so orphans stay its children.

Output (stdout and stderr merged, as a person would see it in a terminal) reaches the run as it
arrives via ``ctx.emit_output``; the model gets the tail, because the end of a build or test log
is where the verdict is. A non-zero exit is a :class:`ToolError`, so the model sees a failed call.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from core.config.paths import protected_dirs
from core.safety.environment import scrubbed_env
from core.safety.nesting import marker_for, step_process
from core.safety.sandbox import SandboxStatus, confine, sandbox_status
from core.tools import process_tree
from core.tools.base import Tool, ToolContext, ToolError
from core.tools.paths import working_root
from core.tools.process_tree import POLL_S, TAG_VARIABLE, ProcessTree, become_subreaper, new_tag

SETUP_ATTEMPTS = 5
"""How often bash is started when a host socket the sandbox covers vanishes as it starts."""
LINGER_S = 1.0
"""After the shell exits, how long background jobs still holding the output may keep writing."""
READ_CHUNK = 65536
LEFTOVERS_NOTE = (
    "\n[Processes the command started in the background were stopped when it ended; nothing "
    "a command starts outlives it. Run long-lived work in the foreground, within the timeout.]"
)


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
        "error. The command is stopped after the timeout, and everything it started (background "
        "jobs included) is stopped when it ends. Use the read, grep, find, ls, edit and write "
        "tools rather than cat, grep, find, ls or sed."
    )
    Params = BashParams

    async def run(self, params: BashParams, ctx: ToolContext) -> str:
        timeout = params.timeout or ctx.limits.bash_timeout_s
        status = sandbox_status(ctx.sandbox.enabled)
        if not status.active:
            become_subreaper()
        with _private_temp(status) as temp:
            return await self._run(params.command, timeout, ctx, status, temp)

    async def _run(
        self,
        command: str,
        limit_s: float,
        ctx: ToolContext,
        status: SandboxStatus,
        temp: Path | None,
    ) -> str:
        for attempt in range(1, SETUP_ATTEMPTS + 1):
            try:
                return await self._attempt(command, limit_s, ctx, status, temp)
            except _MountVanished as vanished:
                if attempt == SETUP_ATTEMPTS:
                    raise ToolError(f"{vanished}\n\nThe sandbox could not be set up.") from None
        raise AssertionError("unreachable")

    async def _attempt(
        self,
        command: str,
        limit_s: float,
        ctx: ToolContext,
        status: SandboxStatus,
        temp: Path | None,
    ) -> str:
        root = working_root(ctx.cwd)
        shell = shutil.which("bash") or shutil.which("sh") or "/bin/sh"
        argv = confine(
            status,
            [shell, "-c", command],
            cwd=root,
            protected=protected_dirs(),
            network=ctx.sandbox.network,
            temp=temp,
        )
        env = scrubbed_env(allow=ctx.env_allow, known=ctx.secret_env)
        env.update(marker_for(ctx.provenance.run_id, ctx.provenance.step))
        tag = env[TAG_VARIABLE] = new_tag()
        if temp is not None:
            env["TMPDIR"] = str(temp)
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=root,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        provenance = ctx.provenance
        with step_process(proc.pid, provenance.run_id, provenance.step, provenance.agent):
            return await self._supervise(proc, ctx, status, tag, limit_s)

    async def _supervise(
        self,
        proc: asyncio.subprocess.Process,
        ctx: ToolContext,
        status: SandboxStatus,
        tag: str,
        limit_s: float,
    ) -> str:
        # In bubblewrap's PID namespace nothing escapes the tree: no need to search by tag.
        tree = ProcessTree(proc.pid, None if status.kind == "bubblewrap" else tag)
        tail = _Tail(ctx.limits.tool_output_chars, ctx.emit_output)
        assert proc.stdout is not None
        reader = asyncio.create_task(_pump(proc.stdout, tail))
        lingering = leftovers = False
        deadline = asyncio.timeout(limit_s)
        try:
            async with deadline:
                # Not proc.wait(): it also waits for the output to close, which a background
                # job may hold open long after the shell itself has exited.
                while proc.returncode is None and not reader.done():
                    await asyncio.wait({reader}, timeout=POLL_S)
                    tree.refresh()
                if reader.done():
                    await proc.wait()
                else:
                    await asyncio.wait({reader}, timeout=LINGER_S)
                    lingering = not reader.done()
        except TimeoutError:
            pass  # the deadline expired: reported below, after the processes are gone
        finally:
            leftovers = await asyncio.shield(tree.stop(proc, process_tree.KILL_GRACE_S))
            await _close_output(proc, reader)
        if not reader.cancelled():
            reader.result()  # a failing emit_output is a bug: let it show
        output = tail.text()
        if deadline.expired():
            raise ToolError(f"{output}\n\nCommand timed out after {limit_s:g} s and was stopped.")
        if lingering or leftovers:
            output += LEFTOVERS_NOTE
        code = proc.returncode
        if code == 0:
            return f"{output}\n\nExit code 0"
        if status.kind == "bubblewrap" and code == 1 and _vanished_mount(output):
            raise _MountVanished(output)
        if code is not None and code < 0:
            raise ToolError(f"{output}\n\nCommand was killed by signal {-code}.")
        raise ToolError(f"{output}\n\nCommand failed with exit code {code}.")


class _MountVanished(Exception):
    """bubblewrap could not cover a host socket that was removed as it started."""


_BWRAP_CANNOT_CREATE = re.compile(
    r"bwrap: (?:Can't (?:create file at|mkdir parents for) (/.+): [^:\n]+"
    r"|Can't bind mount /oldroot/dev/null on /newroot(/.+): Unable to mount source on "
    r"destination: No such file or directory)"
)


def _vanished_mount(output: str) -> bool:
    """Whether ``output`` is only bubblewrap saying that a path it was to cover is gone: the
    host's socket list (:mod:`core.safety.host_sockets`) is read just before bwrap starts, and
    a socket removed in between makes bwrap fail before the command runs. Then the command is
    started again with a fresh list."""
    found = _BWRAP_CANNOT_CREATE.fullmatch(output.strip())
    if found is None:
        return False
    path = found.group(1) or found.group(2)
    with contextlib.suppress(OSError):
        return stat.S_ISSOCK(os.lstat(path).st_mode)  # there again: a socket coming and going
    return True


@contextlib.contextmanager
def _private_temp(status: SandboxStatus) -> Iterator[Path | None]:
    """sandbox-exec's writable temp folder, removed afterwards (bubblewrap mounts its own)."""
    if status.kind != "sandbox-exec":
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="baton-bash-") as folder:
        yield Path(folder).resolve()


async def _close_output(proc: asyncio.subprocess.Process, reader: asyncio.Task[None]) -> None:
    """End the output reader. Everything holding the pipe was stopped, so it ends at once; if
    something unkillable still holds it, close the pipe here: left to the garbage collector,
    the transport would be closed after the event loop and print "Event loop is closed"."""
    await asyncio.wait({reader}, timeout=LINGER_S)
    if not reader.done():
        reader.cancel()
        await asyncio.wait({reader})
    transport = getattr(proc, "_transport", None)  # asyncio has no public close for it
    if transport is not None:
        transport.close()


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
