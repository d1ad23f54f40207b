"""A fresh working folder per item: a git repository at a ref, fetched on the worker.

Workers of a Ray cluster rarely share the supervisor's disk. Instead of a shared path, a batch
can name a repository and a ref (``--repo URL --ref REF``): each item then runs in a shallow
copy of that ref made for it alone in a temporary folder on its worker — items never see each
other's edits — and the copy is removed when the item ends (the run file keeps what happened).

The copy is ``git init`` + ``git fetch --depth 1 origin REF`` + ``git checkout FETCH_HEAD``, which
takes a branch, a tag or (where the server allows it) a commit id alike. git never prompts
(no terminal to answer on a worker): a repository that needs credentials must get them from
the worker's own git configuration (a credential helper, an SSH key).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from core.model.errors import RunError

GIT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class Checkout:
    url: str
    ref: str = "HEAD"

    def __post_init__(self) -> None:
        for what, value in (("repository", self.url), ("ref", self.ref)):
            if not value.strip() or value.startswith("-"):
                raise RunError(f"not a git {what}: {value!r}")

    def describe(self) -> str:
        return f"{self.url} at {self.ref}"


async def check_out(checkout: Checkout) -> Path:
    """A new temporary folder holding ``checkout``; raises :class:`RunError` with git's own
    words when it cannot be made (the folder is removed then)."""
    folder = Path(tempfile.mkdtemp(prefix="baton-item-"))
    try:
        for command in (
            ["init", "--quiet"],
            ["remote", "add", "origin", checkout.url],
            ["fetch", "--quiet", "--depth", "1", "origin", checkout.ref],
            ["checkout", "--quiet", "FETCH_HEAD"],
        ):
            await _git(folder, command, checkout)
    except BaseException:
        remove(folder)
        raise
    return folder


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


async def _git(folder: Path, command: list[str], checkout: Checkout) -> None:
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *command,
            cwd=folder,
            env=environment,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as error:
        raise RunError(
            f"cannot copy {checkout.describe()}: git is not available ({error})"
        ) from None
    try:
        _, stderr = await asyncio.wait_for(process.communicate(), GIT_TIMEOUT_S)
    except (TimeoutError, asyncio.CancelledError) as stopped:
        process.kill()
        await process.wait()
        if isinstance(stopped, asyncio.CancelledError):
            raise
        raise RunError(
            f"cannot copy {checkout.describe()}: git {command[0]} took over {GIT_TIMEOUT_S:g} s"
        ) from None
    if process.returncode != 0:
        said = stderr.decode(errors="replace").strip() or f"exit status {process.returncode}"
        raise RunError(f"cannot copy {checkout.describe()}: git {command[0]}: {said}")
