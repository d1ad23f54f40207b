"""Worktree isolation: a run that works in its own git worktree, on its own branch, so the
person's checkout is untouched until they merge — and parallel runs cannot trample each other.

``isolation: worktree`` (a preset field, the launch dialog's option, ``baton run --worktree``)
makes the runner create ``git worktree add -b baton/<run-id>`` from the current ``HEAD`` in
Baton's worktree folder (outside the repository and outside Baton's protected folders, so the
agents' tools may work there), copy in the ignored files that ``.worktreeinclude`` names (an
``.env``, say, in ``.gitignore`` syntax), and run every step there. Afterwards the person
reviews the run's Changes and either merges — fast-forward, or squash (the changes staged on
their branch, for them to commit) — or discards the worktree and its branch.

Git runs with the same guards as checkpoints (:mod:`core.workspace.git_command`): no hooks, no
filter
drivers from a configuration an earlier agent may have written, and the repository named on
every call (:mod:`core.workspace.git_location`), so a planted ``core.worktree`` moves nothing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pathspec

from core.config.paths import worktrees_dir
from core.model.errors import RunError
from core.model.events import WorktreeInfo
from core.workspace.git_command import (
    GitError,
    guarded_options,
    repository_options,
    run_git,
    run_git_sync,
)
from core.workspace.git_location import Repository, UnsafeRepository, locate

INCLUDE_FILE = ".worktreeinclude"


class WorktreeError(Exception):
    """The worktree cannot be made, merged or discarded; the message says why."""


NOT_A_REPOSITORY = (
    "a worktree run needs a git repository with at least one commit; {} is not in one"
)


def check_repository(folder: Path) -> None:
    """Refuse early (:class:`RunError`, before anything is shown) a folder that cannot have a
    worktree."""
    try:
        repository = locate(folder)
    except UnsafeRepository as refused:
        raise RunError(f"a worktree run cannot start in {folder}: {refused}") from None
    if repository is None:
        raise RunError(NOT_A_REPOSITORY.format(folder))
    try:
        run_git_sync(
            ["rev-parse", "--verify", "HEAD^{commit}"],
            cwd=repository.top,
            where=repository_options(repository.git_dir, repository.top),
        )
    except (GitError, OSError):
        raise RunError(NOT_A_REPOSITORY.format(folder)) from None


def _repository(folder: Path) -> Repository:
    """The repository of ``folder``, found by Baton (:func:`core.workspace.git_location.locate`)."""
    try:
        repository = locate(folder)
    except (UnsafeRepository, OSError) as refused:
        raise WorktreeError(str(refused)) from None
    if repository is None:
        raise WorktreeError(NOT_A_REPOSITORY.format(folder))
    return repository


async def _git(folder: Path, *args: str) -> str:
    """git on the repository holding ``folder``, named explicitly on the command line."""
    repository = _repository(folder)
    where = repository_options(repository.git_dir, repository.top)
    options = await guarded_options(
        repository.top, git_dir=repository.git_dir, work_tree=repository.top
    )
    out = await run_git(args, cwd=repository.top, options=[*where, *options])
    return out.decode(errors="replace").strip()


async def create_worktree(folder: Path, run_id: str) -> tuple[WorktreeInfo, Path]:
    """Make the run's worktree; returns it and where ``folder`` (resolved) lies inside it."""
    top = _repository(folder).top
    try:
        base = await _git(top, "rev-parse", "--verify", "HEAD^{commit}")
    except (GitError, OSError):
        raise WorktreeError(NOT_A_REPOSITORY.format(folder)) from None
    branch = f"baton/{run_id}"
    path = worktrees_dir() / f"{top.name}-{run_id}"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        await _git(top, "worktree", "add", "-q", "-b", branch, str(path), base)
    except GitError as error:
        raise WorktreeError(str(error)) from None
    _copy_included(top, path)
    info = WorktreeInfo(path=str(path), branch=branch, base=base, repo=str(top))
    return info, path / folder.relative_to(top)


def _copy_included(top: Path, path: Path) -> None:
    """Copy the files ``.worktreeinclude`` names (they are ignored, so the checkout lacks
    them). Links and anything outside the repository are never followed."""
    include = top / INCLUDE_FILE
    if not include.is_file():
        return
    spec = pathspec.GitIgnoreSpec.from_lines(include.read_text(encoding="utf-8").splitlines())
    for root, folders, files in os.walk(top):
        folders[:] = [f for f in folders if f != ".git"]
        for name in files:
            source = Path(root) / name
            relative = source.relative_to(top)
            if source.is_symlink() or not spec.match_file(relative.as_posix()):
                continue
            target = path / relative
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)


async def commit_worktree(info: WorktreeInfo, message: str) -> bool:
    """Commit everything in the worktree onto its branch; False when nothing changed."""
    path = Path(info.path)
    await _git(path, "add", "-A")
    if not await _git(path, "status", "--porcelain"):
        return False
    await _git(path, "commit", "-q", "--no-verify", "-m", message)
    return True


async def merge_worktree(info: WorktreeInfo, *, squash: bool, message: str) -> str:
    """Bring the run's work into the person's checkout, then remove the worktree and branch.

    Fast-forward needs the checkout still on the commit the run started from (or behind the
    branch); squash stages the changes on whatever is checked out, for the person to commit.
    Returns what happened, in words."""
    repo = Path(info.repo)
    await commit_worktree(info, message)
    try:
        if squash:
            await _git(repo, "merge", "--squash", info.branch)
            said = f"The run's changes are staged in {repo}; commit them when you are ready."
        else:
            await _git(repo, "merge", "--ff-only", "-q", info.branch)
            said = f"{repo} fast-forwarded to the run's work."
    except GitError as error:
        raise WorktreeError(
            f"could not merge {info.branch}: {error}"
            + ("" if squash else " (your branch moved since the run started: try --squash)")
        ) from None
    await discard_worktree(info, force=squash)
    return said


async def discard_worktree(info: WorktreeInfo, *, force: bool = True) -> None:
    """Remove the worktree and delete its branch (``force``: even if not merged).

    When both are gone already (the run was merged, which removes them, or discarded before)
    this says so in a sentence instead of passing on git's "branch not found"."""
    repo = Path(info.repo)
    try:
        branch = await _git(
            repo, "for-each-ref", "--format=%(refname)", f"refs/heads/{info.branch}"
        )
        if not branch and not await asyncio.to_thread(os.path.lexists, info.path):
            raise WorktreeError(
                f"nothing to discard: the worktree {info.path} and the branch {info.branch} "
                "are gone already (the run was merged, or discarded before)"
            )
        try:
            await _git(repo, "worktree", "remove", "--force", info.path)
        except GitError:
            await _git(repo, "worktree", "prune")  # its folder was deleted by hand
        if branch:
            await _git(repo, "branch", "-D" if force else "-d", "-q", info.branch)
    except GitError as error:
        raise WorktreeError(str(error)) from None
