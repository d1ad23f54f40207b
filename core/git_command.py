"""Running ``git`` for checkpoints: a real subprocess, an environment of Baton's choosing, and
a repository configuration that cannot run commands behind Baton's back.

The working folder's ``.git`` is inside the agent's reach (its ``bash`` may write there), so its
configuration is hostile input: a ``filter.<name>.clean`` driver or a ``core.fsmonitor`` hook
written by a model would run, unsandboxed, the next time Baton snapshots the folder. Every call
therefore overrides those keys (``-c key=``, which git reads as "no command"), turns off hooks,
signing and ref logs, and never lets the user's ``GIT_*`` variables steer it elsewhere.
Snapshots so store the bytes in the working folder as they are, which is what a checkpoint is.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Baton",
    "GIT_AUTHOR_EMAIL": "baton@localhost",
    "GIT_COMMITTER_NAME": "Baton",
    "GIT_COMMITTER_EMAIL": "baton@localhost",
}
"""Checkpoint commits need an author; the user's own name is not Baton's to use."""

SAFE_OPTIONS = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "core.logAllRefUpdates=false",
    "-c",
    "gc.auto=0",
)
"""Overrides on every call: no hooks, no watcher process, no signing prompt, no reflog for the
checkpoint refs, no garbage collection started in the user's repository."""


class GitError(Exception):
    """A git command failed; the message carries its stderr (what a person needs to act)."""


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment without the caller's ``GIT_*`` steering, plus ``extra``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(IDENTITY)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"  # messages parsed nowhere, but numbers and quoting stay predictable
    if extra:
        env.update(extra)
    return env


async def guarded_options(cwd: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """:data:`SAFE_OPTIONS` plus a neutralised filter for every driver the repository's
    configuration names right now. Read again before each snapshot: the model may have added
    one since the last."""
    process = await asyncio.create_subprocess_exec(
        "git",
        "config",
        "--list",
        "-z",
        cwd=cwd,
        env=git_environment(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    out, _ = await process.communicate()
    return [*SAFE_OPTIONS, *_overrides_from(out)]


async def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    options: Sequence[str],
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> bytes:
    """Run ``git <options> <args>`` in ``cwd`` and return its stdout; raises
    :class:`GitError` when it fails. ``options`` come from :func:`guarded_options`."""
    process = await asyncio.create_subprocess_exec(
        "git",
        *options,
        *args,
        cwd=cwd,
        env=git_environment(env),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await process.communicate(stdin)
    except asyncio.CancelledError:
        with suppress(ProcessLookupError):
            process.kill()  # a cancelled run leaves no git behind
        await process.wait()
        raise
    if process.returncode != 0:
        raise GitError(f"git {args[0]} failed: {err.decode(errors='replace').strip()}")
    return out


def run_git_sync(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> bytes:
    """:func:`run_git` for synchronous callers (deleting a run from the index); for commands
    that read no file content, so only :data:`SAFE_OPTIONS` apply."""
    done = subprocess.run(
        ["git", *SAFE_OPTIONS, *args],
        cwd=cwd,
        env=git_environment(env),
        input=stdin if stdin is not None else b"",
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise GitError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _overrides_from(listing: bytes) -> list[str]:
    """``-c filter.X.clean= -c filter.X.smudge= -c filter.X.process=`` for every filter
    driver the configuration names: content goes in and out byte for byte, no driver runs."""
    names: set[str] = set()
    for entry in listing.split(b"\0"):
        key = entry.split(b"\n", 1)[0].decode(errors="replace")
        section, _, rest = key.partition(".")
        if section.lower() == "filter" and "." in rest:
            names.add(rest.rsplit(".", 1)[0])
    options: list[str] = []
    for name in sorted(names):
        for part in ("clean", "smudge", "process"):
            options += ["-c", f"filter.{name}.{part}="]
        options += ["-c", f"filter.{name}.required=false"]
    return options
