"""Checkpoints: the whole working folder recorded before and after each step, as git commits
the user never sees.

A snapshot is ``git add -A`` into a *temporary* index (a copy of Baton's own index of the
folder, kept in its data folder, so only files whose stat data changed are hashed again; the
first is seeded from the user's index), ``git write-tree``, ``git commit-tree`` and ``git
update-ref`` of a private ref, ``refs/baton/<run>/<step>/{before,after}`` (steps counted from 1;
``refs/baton/<run>/run/{before,after}`` around all the tasks of a parallel run).
That covers tracked changes, new files (``.gitignore`` honoured) and whatever ``bash`` changed,
and leaves the user's branch, index, stash and reflogs exactly as they were: no porcelain
command runs, HEAD is only read, the refs are written with ref logging off. Ignored files are
not recorded, so a restore leaves them alone.

A folder outside any git repository gets a private *shadow* repository in Baton's data folder
(``checkpoints/<hash of the folder>``: ``GIT_DIR`` there, ``GIT_WORK_TREE`` the folder), where
no agent tool may write. It is refused past ``checkpoints.max_folder_mb`` with a message that
names the setting; ``checkpoints.enabled: false`` turns checkpoints off altogether.

Restores (:mod:`core.workspace.restore`) trust only the commit ids saved in the run file (Baton's
own
data folder), never the refs, which a model could rewrite; the refs only keep the commits alive
and go when the run is deleted (:func:`prune_run`).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.config import paths
from core.config.settings import CheckpointSettings
from core.model.events import Event, FileChange, StepChanges
from core.safety.redaction import Redactor
from core.workspace.git_command import (
    SAFE_OPTIONS,
    GitError,
    guarded_options,
    repository_options,
    run_git,
    run_git_sync,
    stream_names,
)
from core.workspace.git_location import UnsafeRepository, check_git_dir, check_not_protected, locate

REF_ROOT = "refs/baton"


class CheckpointsOff(Exception):
    """Checkpoints cannot be kept for this folder; the message says why and what to do."""


@dataclass(frozen=True)
class Workspace:
    """A folder whose states are recorded, and the repository that records them."""

    work_tree: Path
    git_dir: Path
    shadow: bool

    @classmethod
    def of(cls, changes: StepChanges) -> Workspace:
        return cls(Path(changes.work_tree), Path(changes.git_dir), changes.shadow)

    def env(self, index: Path | None = None) -> dict[str, str]:
        return {"GIT_INDEX_FILE": str(index)} if index is not None else {}

    def where(self) -> list[str]:
        """``--git-dir``/``--work-tree``: named on every call, so neither the repository's
        ``core.worktree`` nor anything in the environment chooses the folder."""
        return repository_options(self.git_dir, self.work_tree)

    async def options(self) -> list[str]:
        """The guards for a call that reads the folder (:func:`guarded_options`)."""
        return await guarded_options(self.work_tree, git_dir=self.git_dir, work_tree=self.work_tree)

    def check(self) -> None:
        """Refuse (:class:`~core.workspace.git_location.UnsafeRepository`) a workspace holding or
        inside
        one of Baton's folders (a checkpoint would copy them, a restore write there), or whose
        git folder is no longer a folder: git takes a ``.git`` *file* given as ``--git-dir``
        as a redirect, so an agent replacing ``.git`` during a step would send the next
        snapshot to the repository it names."""
        check_not_protected(self.work_tree, None if self.shadow else self.git_dir)
        check_git_dir(self.git_dir)

    def stat_cache(self) -> Path:
        """Baton's own index of this folder, kept between snapshots in its data folder, so a
        snapshot hashes only files whose stat data changed since the last one (seeded from the
        user's index the first time; the user's is never written)."""
        digest = hashlib.sha256(f"{self.git_dir}\0{self.work_tree}".encode()).hexdigest()[:20]
        return paths.data_dir() / "checkpoints" / "indexes" / digest

    def changes(
        self,
        run_id: str,
        step: int | None,
        before: str,
        after: Checkpoint,
        files: list[FileChange],
        kind: Literal["step", "restore", "run"] = "step",
    ) -> StepChanges:
        """The ``step_changes`` event recording ``before`` → ``after`` here."""
        return StepChanges(
            run_id=run_id,
            step=step,
            kind=kind,
            before=before,
            after=after.commit,
            head=after.head,
            git_dir=str(self.git_dir),
            work_tree=str(self.work_tree),
            shadow=self.shadow,
            files=files,
        )

    async def git(
        self,
        *args: str,
        index: Path | None = None,
        options: Sequence[str] | None = None,
        stdin: bytes | None = None,
    ) -> str:
        """Run git on this workspace (``options`` read afresh unless given)."""
        if options is None:
            options = await self.options()
        out = await run_git(
            args,
            cwd=self.work_tree,
            options=[*self.where(), *options],
            env=self.env(index),
            stdin=stdin,
        )
        return out.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Checkpoint:
    commit: str
    head: str | None


# -------------------------------------------------------------------------------- finding one


async def find_workspace(folder: Path, settings: CheckpointSettings) -> Workspace | None:
    """The workspace recording ``folder``: its git repository's, else a shadow one. None when
    checkpoints are switched off; :class:`CheckpointsOff` when this folder cannot have them.
    ``folder`` is resolved already (symlinks followed), as the runner's step folders are."""
    if not settings.enabled:
        return None
    try:
        repository = locate(folder)
    except UnsafeRepository as refused:
        raise CheckpointsOff(f"checkpoints are off for {folder}: {refused}") from None
    if repository is not None:
        workspace = Workspace(repository.top, repository.git_dir, shadow=False)
        await _confirm(workspace, folder)
        return workspace
    if not settings.outside_git:
        raise CheckpointsOff(
            f"{folder} is not in a git repository and checkpoints.outside_git is off"
        )
    workspace = Workspace(folder, shadow_dir(folder), shadow=True)
    try:
        check_not_protected(folder)
    except UnsafeRepository as refused:
        raise CheckpointsOff(f"checkpoints are off for {folder}: {refused}") from None
    if not (workspace.git_dir / "HEAD").exists():
        workspace.git_dir.mkdir(parents=True, exist_ok=True)
        await run_git(["init", "-q", "--bare", str(workspace.git_dir)], cwd=folder, options=())
        (workspace.git_dir / "baton-folder").write_text(str(folder), encoding="utf-8")
    await _check_size(workspace, settings.max_folder_mb)
    return workspace


async def _confirm(workspace: Workspace, folder: Path) -> None:
    """Have git confirm the repository Baton found, and that its top level (as git now sees
    it, with the folder named) is the one holding the run's folder."""
    try:
        out = await workspace.git(
            "rev-parse", "--show-toplevel", "--absolute-git-dir", options=SAFE_OPTIONS
        )
    except (GitError, OSError) as error:
        raise CheckpointsOff(f"checkpoints are off for {folder}: {error}") from None
    lines = out.splitlines()
    top = Path(lines[0]) if lines else None  # both sides are resolved paths already
    if top is None or top != workspace.work_tree or not folder.is_relative_to(top):
        raise CheckpointsOff(
            f"checkpoints are off for {folder}: git reports the top level {top}, not "
            f"{workspace.work_tree}"
        )


def shadow_dir(folder: Path) -> Path:
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:20]
    return paths.data_dir() / "checkpoints" / digest


async def _check_size(workspace: Workspace, limit_mb: int) -> None:
    """Refuse a shadow copy of a folder over the limit, counting what a snapshot would take
    (``.gitignore`` honoured). The count stops at the limit, so a run started in a home
    folder learns it at once instead of after a walk of every file under it."""
    listing = stream_names(
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=workspace.work_tree,
        options=[*workspace.where(), *await workspace.options()],
    )
    limit, total = limit_mb * 1024 * 1024, 0
    async for name in listing:
        if not name:
            continue
        with suppress(OSError):
            total += (workspace.work_tree / name).lstat().st_size
        if total > limit:
            await listing.aclose()
            raise CheckpointsOff(
                f"checkpoints are off for {workspace.work_tree}: it is not in a git repository "
                f"and holds more than the {limit_mb} MB limit for a shadow copy "
                "(raise checkpoints.max_folder_mb in config.yaml, or run in a git repository)"
            )


# -------------------------------------------------------------------------------- recording


async def snapshot(
    workspace: Workspace, ref: str, message: str, secrets: Redactor | None = None
) -> Checkpoint:
    """Record the folder as it is now under ``ref`` (a full ref name).

    A file whose *name* holds a known secret (``secrets``, default: the configured ones) is
    left out: the index Baton keeps in its data folder and the checkpoint's tree would
    otherwise store the name as it is."""
    try:
        workspace.check()
    except UnsafeRepository as refused:
        raise GitError(str(refused)) from None
    secrets = secrets if secrets is not None else Redactor.configured()
    options = await workspace.options()
    cache = workspace.stat_cache()
    user_index = workspace.git_dir / "index"
    with tempfile.TemporaryDirectory(prefix="baton-checkpoint-") as temp:
        index = Path(temp) / "index"
        for seed in (cache, user_index):
            if seed.is_file():
                shutil.copyfile(seed, index)
                break
        added = workspace.git("add", "-A", "--", ".", index=index, options=options)
        if workspace.shadow:
            await added
            head = None
        else:  # HEAD is read while the files are hashed
            _out, head = await asyncio.gather(added, _head(workspace, options))
        await _drop_secret_names(workspace, index, options, secrets)
        tree = (await workspace.git("write-tree", index=index, options=options)).strip()
        cache.parent.mkdir(parents=True, exist_ok=True)
        os.replace(index, cache)
    parents = ["-p", head] if head else []
    commit = (
        await workspace.git("commit-tree", tree, *parents, "-m", message, options=options)
    ).strip()
    await workspace.git("update-ref", "--no-deref", ref, commit, options=options)
    return Checkpoint(commit, head)


async def _drop_secret_names(
    workspace: Workspace, index: Path, options: Sequence[str], secrets: Redactor
) -> None:
    """Remove from ``index`` the entries whose path holds a known secret."""
    if not secrets.longest:
        return
    listed = await workspace.git("ls-files", "-z", "--cached", index=index, options=options)
    if secrets.pattern.search(listed) is None:  # the usual case: one scan of every name
        return
    names = [name for name in listed.split("\0") if name and secrets.pattern.search(name)]
    await workspace.git(
        "update-index",
        "--force-remove",
        "-z",
        "--stdin",
        index=index,
        options=options,
        stdin="".join(f"{name}\0" for name in names).encode(),
    )


async def _head(workspace: Workspace, options: Sequence[str]) -> str | None:
    try:
        return (
            await workspace.git("rev-parse", "-q", "--verify", "HEAD^{commit}", options=options)
        ).strip() or None
    except GitError:
        return None  # a repository without commits yet


async def changed_files(workspace: Workspace, before: str, after: str) -> list[FileChange]:
    """Files that differ between two checkpoints, with line counts, sorted by path. One
    ``diff-tree`` prints both: the raw records (status) first, then the line counts."""
    out = await workspace.git(
        "diff-tree",
        "-r",
        "-z",
        "--no-renames",
        "--raw",
        "--numstat",
        "--no-ext-diff",
        "--no-textconv",
        before,
        after,
        options=SAFE_OPTIONS,  # two commits compared: no file of the folder is read or filtered
    )
    kinds: dict[str, Literal["added", "deleted"]] = {"A": "added", "D": "deleted"}
    status_of: dict[str, Literal["added", "modified", "deleted"]] = {}
    changes: list[FileChange] = []
    fields = iter(out.split("\0"))
    for field in fields:
        if field.startswith(":"):  # ":100644 100644 <sha> <sha> M", then the path
            status_of[next(fields, "")] = kinds.get(field.rsplit(" ", 1)[-1][:1], "modified")
        elif field:
            added, removed, path = field.split("\t", 2)
            changes.append(
                FileChange(
                    path=path,
                    status=status_of.get(path, "modified"),
                    added=int(added) if added != "-" else None,
                    removed=int(removed) if removed != "-" else None,
                )
            )
    return sorted(changes, key=lambda change: change.path)


async def patch(workspace: Workspace, before: str, after: str, paths_: Iterable[str] = ()) -> str:
    """The unified diff between two checkpoints (optionally of some paths only). Plumbing
    (``diff-tree``) so the user's diff settings, external diff tools and text conversions
    play no part."""
    return await workspace.git(
        "diff-tree",
        "-p",
        "-r",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        before,
        after,
        "--",
        *paths_,
        options=SAFE_OPTIONS,  # two commits compared: no file of the folder is read or filtered
    )


# -------------------------------------------------------------------------------- one run


def step_ref(run_id: str, step: int | None, which: str) -> str:
    """``refs/baton/<run>/<step counted from 1>/<which>``; ``refs/baton/<run>/run/<which>``
    for the whole run (``step`` None)."""
    return f"{REF_ROOT}/{run_id}/{'run' if step is None else step + 1}/{which}"


class RunCheckpoints:
    """The runner's side: one per run; :meth:`before` and :meth:`after` bracket each step
    of a chain (or a single step). A parallel run's tasks share their folders at the same
    time, so no pair around one task could say which task changed what: :meth:`before_run`
    and :meth:`after_run` bracket the whole run instead, one pair per repository (``kind``
    ``"run"``, not attributed to a task). Errors never stop a run: they come back as text for
    a notice."""

    def __init__(
        self, run_id: str, settings: CheckpointSettings, secrets: Redactor | None = None
    ) -> None:
        self.run_id = run_id
        self._settings = settings
        self._secrets = secrets
        self._workspaces: dict[Path, Workspace | None] = {}
        self._before: dict[int, tuple[Workspace, Checkpoint]] = {}
        self._run_before: list[tuple[Workspace, Checkpoint]] = []

    async def _snapshot(self, workspace: Workspace, ref: str, message: str) -> Checkpoint:
        return await snapshot(workspace, ref, message, self._secrets)

    async def before_run(self, folders: Iterable[Path]) -> list[str]:
        """Record each repository holding one of ``folders`` (once, however many tasks work
        in it) before a parallel run's first task; returns the notices of those that could
        not be."""
        notices: list[str] = []
        seen: set[Workspace] = set()
        for folder in folders:
            try:
                workspace = await self._workspace(folder)
                if workspace is None or workspace in seen:
                    continue
                seen.add(workspace)
                checkpoint = await self._snapshot(
                    workspace,
                    step_ref(self.run_id, None, "before"),
                    "before the run",
                )
            except (CheckpointsOff, GitError, OSError) as error:
                notices.append(_notice(error))
                continue
            self._run_before.append((workspace, checkpoint))
        return notices

    async def after_run(self) -> list[StepChanges | str]:
        """Record them again after the last task: the run's changes (one per repository),
        or notices."""
        said: list[StepChanges | str] = []
        taken, self._run_before = self._run_before, []
        for workspace, before in taken:
            try:
                after = await self._snapshot(
                    workspace, step_ref(self.run_id, None, "after"), "after the run"
                )
                files = await changed_files(workspace, before.commit, after.commit)
            except (GitError, OSError) as error:
                said.append(f"no checkpoint after the run: {error}")
                continue
            said.append(workspace.changes(self.run_id, None, before.commit, after, files, "run"))
        return said

    async def before(self, step: int, folder: Path) -> str | None:
        """Record the folder before ``step`` runs; returns a notice when it could not."""
        try:
            workspace = await self._workspace(folder)
            if workspace is None:
                return None
            checkpoint = await self._snapshot(
                workspace,
                step_ref(self.run_id, step, "before"),
                f"before step {step + 1}",
            )
        except (CheckpointsOff, GitError, OSError) as error:
            return _notice(error)
        self._before[step] = (workspace, checkpoint)
        return None

    async def after(self, step: int) -> StepChanges | str | None:
        """Record the folder after ``step``; the step's changes, a notice, or None."""
        taken = self._before.pop(step, None)
        if taken is None:
            return None
        workspace, before = taken
        try:
            after = await self._snapshot(
                workspace,
                step_ref(self.run_id, step, "after"),
                f"after step {step + 1}",
            )
            files = await changed_files(workspace, before.commit, after.commit)
        except (GitError, OSError) as error:
            return f"no checkpoint after the step: {error}"
        return workspace.changes(self.run_id, step, before.commit, after, files)

    async def _workspace(self, folder: Path) -> Workspace | None:
        if folder not in self._workspaces:
            self._workspaces[folder] = None  # asked once: a refusal is said once per run
            self._workspaces[folder] = await find_workspace(folder, self._settings)
        return self._workspaces[folder]


def _notice(error: Exception) -> str:
    return str(error) if isinstance(error, CheckpointsOff) else f"no checkpoint: {error}"


# -------------------------------------------------------------------------------- pruning


def prune_run(run_id: str, events: Iterable[Event]) -> None:
    """Delete the run's checkpoint refs from every repository its steps recorded into (the
    commits become unreachable, and git's own garbage collection frees them in time)."""
    seen: set[tuple[str, str]] = set()
    for event in events:
        if isinstance(event, StepChanges):
            seen.add((event.git_dir, event.work_tree))
    for git_dir, work_tree in seen:
        workspace = Workspace(Path(work_tree), Path(git_dir), shadow=False)
        try:
            listing = run_git_sync(
                ["for-each-ref", "--format=%(refname)", f"{REF_ROOT}/{run_id}/"],
                cwd=workspace.work_tree,
                where=workspace.where(),
            )
            commands = "".join(f"delete {ref}\n" for ref in listing.decode().split())
            if commands:
                run_git_sync(
                    ["update-ref", "--stdin"],
                    cwd=workspace.work_tree,
                    where=workspace.where(),
                    stdin=commands.encode(),
                )
        except (GitError, OSError):
            continue  # a repository since moved or deleted has nothing left to prune
