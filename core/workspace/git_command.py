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
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import suppress
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Baton",
    "GIT_AUTHOR_EMAIL": "baton@localhost",
    "GIT_COMMITTER_NAME": "Baton",
    "GIT_COMMITTER_EMAIL": "baton@localhost",
}
"""Checkpoint commits need an author; the user's own name is not Baton's to use."""

_OVERRIDES = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.sshCommand=",
    "core.gitProxy=",
    "core.askPass=",
    "core.pager=cat",
    "core.editor=:",
    "core.alternateRefsCommand=",
    "sequence.editor=:",
    "credential.helper=",
    "diff.external=",
    "gpg.program=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "uploadpack.packObjectsHook=",
    "protocol.allow=never",
    "submodule.recurse=false",
    "core.logAllRefUpdates=false",
    "gc.auto=0",
    "maintenance.auto=false",
)
SAFE_OPTIONS = tuple(part for key in _OVERRIDES for part in ("-c", key))
"""Overrides on every call, above any configuration file: no hooks, no watcher process, no
pager, editor, ssh, proxy, credential or signing program, no external diff, no network
protocol, no reflog for the checkpoint refs, no garbage collection in the user's repository.
(The system and global configuration files are not read at all: :func:`git_environment`.)"""
DRIVER_KEYS = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("textconv", "command"),
    "merge": ("driver",),
}
"""``<section>.<name>.<key>`` entries naming a program, emptied for every ``<name>`` the
repository's configuration defines (``filter.<name>.required`` is also turned off)."""


class GitError(Exception):
    """A git command failed; the message carries its stderr (what a person needs to act)."""


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment without the caller's ``GIT_*`` steering, plus ``extra``.

    The system and global configuration files are not read (``GIT_CONFIG_NOSYSTEM``,
    ``GIT_CONFIG_GLOBAL=/dev/null``): what Baton's git does must not depend on, or be
    redirected by, a file outside the repository; the repository's own configuration is
    neutralised key by key (:data:`SAFE_OPTIONS`, :func:`guarded_options`)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(IDENTITY)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"  # messages parsed nowhere, but numbers and quoting stay predictable
    if extra:
        env.update(extra)
    return env


def repository_options(git_dir: Path, work_tree: Path | None) -> list[str]:
    """``--git-dir`` and ``--work-tree`` named on the command line: git then looks nowhere
    else, and a ``core.worktree`` written into the repository's configuration (by an agent)
    cannot move the folder git reads and writes."""
    where = [f"--git-dir={git_dir}"]
    return [*where, f"--work-tree={work_tree}"] if work_tree is not None else where


async def guarded_options(
    cwd: Path,
    env: Mapping[str, str] | None = None,
    *,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
) -> list[str]:
    """:data:`SAFE_OPTIONS` plus a neutralised driver for every filter, diff and merge driver
    the configuration of the repository (named explicitly when ``git_dir`` is given) names
    right now, includes followed. Read again before each snapshot: the model may have added
    one since the last. The caller still names the repository on each call.

    This one listing also reads the person's global configuration (it runs nothing): their
    ``core.excludesFile`` is passed on, so a checkpoint ignores what their git ignores although
    the global file is otherwise not read."""
    where = repository_options(git_dir, work_tree) if git_dir is not None else []
    listing_env = git_environment(env)
    del listing_env["GIT_CONFIG_GLOBAL"]
    process = await asyncio.create_subprocess_exec(
        "git",
        *where,
        "config",
        "--list",
        "--includes",
        "-z",
        cwd=cwd,
        env=listing_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    out, _ = await process.communicate()
    return [*SAFE_OPTIONS, *_overrides_from(out), *_excludes_from(out)]


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


async def stream_names(
    args: Sequence[str],
    *,
    cwd: Path,
    options: Sequence[str],
    env: Mapping[str, str] | None = None,
) -> AsyncGenerator[str, None]:
    """The NUL-separated names ``git <options> <args>`` prints (``-z`` listings), as git
    prints them. Leaving the loop early stops git: listing a huge folder only to learn it is
    too big would take as long as the whole walk."""
    process = await asyncio.create_subprocess_exec(
        "git",
        *options,
        *args,
        cwd=cwd,
        env=git_environment(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    pending = b""
    try:
        while chunk := await process.stdout.read(65536):
            *names, pending = (pending + chunk).split(b"\0")
            for name in names:
                yield name.decode("utf-8", errors="surrogateescape")
    finally:
        if process.returncode is None:
            with suppress(ProcessLookupError):
                process.kill()
        await process.wait()


def run_git_sync(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    where: Sequence[str] = (),
) -> bytes:
    """:func:`run_git` for synchronous callers (deleting a run from the index); for commands
    that read no file content, so only :data:`SAFE_OPTIONS` apply (after ``where``, the
    :func:`repository_options`)."""
    done = subprocess.run(
        ["git", *where, *SAFE_OPTIONS, *args],
        cwd=cwd,
        env=git_environment(env),
        input=stdin if stdin is not None else b"",
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise GitError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _excludes_from(listing: bytes) -> list[str]:
    """``-c core.excludesFile=<the last one set>``: what git itself would use."""
    chosen: str | None = None
    for entry in listing.split(b"\0"):
        key, _, value = entry.partition(b"\n")
        if key.decode(errors="replace").lower() == "core.excludesfile":
            chosen = value.decode(errors="surrogateescape")
    return ["-c", f"core.excludesFile={chosen}"] if chosen else []


def _overrides_from(listing: bytes) -> list[str]:
    """``-c filter.X.clean= -c filter.X.smudge= …`` for every filter, diff and merge driver
    the configuration names: content goes in and out byte for byte, no driver runs."""
    names: set[tuple[str, str]] = set()
    for entry in listing.split(b"\0"):
        key = entry.split(b"\n", 1)[0].decode(errors="replace")
        section, _, rest = key.partition(".")
        if section.lower() in DRIVER_KEYS and "." in rest:
            names.add((section.lower(), rest.rsplit(".", 1)[0]))
    options: list[str] = []
    for section, name in sorted(names):
        for part in DRIVER_KEYS[section]:
            options += ["-c", f"{section}.{name}.{part}="]
        if section == "filter":
            options += ["-c", f"filter.{name}.required=false"]
    return options
