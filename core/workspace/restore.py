"""Restoring a run's folder to how it was before one of its steps, without losing anything.

A restore is planned, then applied. Planning snapshots the folder as it is now (that snapshot is
the restore's own "before", so every restore can itself be undone) and compares it with the
last state the run left (the latest checkpoint in its run file): files that differ were changed
by something else since, and a HEAD that moved means commits or a checkout happened since. Either
makes the plan *refused*: it says why and lists what would be lost, and only the person's
explicit confirmation (``--yes``, the dialog's button) applies it anyway.

Applying writes the target tree's files with ``git checkout-index`` from a temporary index and
deletes the files the target does not have; the user's index, HEAD and branch are never touched,
so afterwards ``git status`` shows the restored files as ordinary working-tree changes. The
result is recorded as a ``step_changes`` event of kind ``restore``, appended to the run file.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from core.model.events import Event, FileChange, StepChanges
from core.model.words import counted
from core.workspace.checkpoints import REF_ROOT, Checkpoint, Workspace, changed_files, snapshot
from core.workspace.git_command import GitError
from core.workspace.git_location import UnsafeRepository


class RestoreError(Exception):
    """The restore cannot be planned or applied; the message says why."""


@dataclass
class RestorePlan:
    run_id: str
    step: int
    """The step whose start the folder goes back to (0-based)."""
    workspace: Workspace
    target: str
    """The checkpoint commit to restore."""
    current: Checkpoint
    """The folder as it is now (the restore's own "before")."""
    ref: str
    """``refs/baton/<run>/restore-<n>``: where the restore's two checkpoints go."""
    changes: list[FileChange]
    """What the restore would change, as current → target."""
    lost: list[FileChange] = field(default_factory=list)
    """Changes made since the run's last checkpoint by something else: lost by restoring."""
    head_moved: str | None = None
    """Why HEAD no longer matches the checkpoint, when it does not."""
    whole_run: bool = False
    """The target is before the whole run (a parallel run's one checkpoint pair)."""

    @property
    def target_name(self) -> str:
        """``step 2``, or ``the run`` for a parallel run's whole-run checkpoint."""
        return "the run" if self.whole_run else f"step {self.step + 1}"

    @property
    def refused(self) -> bool:
        return bool(self.lost) or self.head_moved is not None

    def explanation(self) -> str:
        """Why the restore needs confirmation, in words for a person ("" when it does not)."""
        lines = []
        if self.head_moved:
            lines.append(self.head_moved)
        if self.lost:
            lines.append(
                f"{counted(len(self.lost), 'file')} changed since the run's last checkpoint; "
                "restoring would overwrite these changes:"
            )
            lines += [f"  {change.status:<8} {change.path}" for change in self.lost]
        return "\n".join(lines)


def checkpoints_of(events: list[Event]) -> list[StepChanges]:
    return [event for event in events if isinstance(event, StepChanges)]


async def plan_restore(events: list[Event], step: int | None) -> RestorePlan:
    """Plan restoring the folder to its state before ``step`` (0-based); ``None`` undoes the
    latest restore. Raises :class:`RestoreError` when there is nothing to restore to."""
    recorded = checkpoints_of(events)
    if not recorded:
        raise RestoreError("this run has no checkpoints (they were off, or it changed no folder)")
    restores = [c for c in recorded if c.kind == "restore"]
    if step is None:
        if not restores:
            raise RestoreError("this run has no restore to undo")
        source = restores[-1]
        target = source.before
        step = source.step if source.step is not None else 0
    else:
        found = [c for c in recorded if c.kind == "step" and c.step == step]
        # A parallel run has one pair for the whole run: before any task is before the run.
        found = found or [c for c in recorded if c.kind == "run"]
        if not found:
            raise RestoreError(f"step {step + 1} has no checkpoint")
        source = found[0]
        target = source.before
    latest = [c for c in recorded if c.git_dir == source.git_dir][-1]
    workspace = Workspace.of(source)
    try:  # a run recorded before this check existed may name a folder holding Baton's own
        workspace.check()
    except UnsafeRepository as refused:
        raise RestoreError(f"cannot restore: {refused}") from None
    ref = f"{REF_ROOT}/{source.run_id}/restore-{len(restores) + 1}"
    try:
        current = await snapshot(workspace, f"{ref}/before", "before a restore")
        lost = await changed_files(workspace, latest.after, current.commit)
        changes = await changed_files(workspace, current.commit, target)
    except (GitError, OSError) as error:
        raise RestoreError(f"cannot read the checkpoints: {error}") from None
    head_moved = None
    if not workspace.shadow and current.head != latest.head:
        head_moved = (
            f"HEAD moved since the run's last checkpoint (from {_short(latest.head)} to "
            f"{_short(current.head)}): a commit, reset or checkout happened since. Restoring "
            "would put the files back as they were before the step, on top of that."
        )
    return RestorePlan(
        run_id=source.run_id,
        step=step,
        workspace=workspace,
        target=target,
        current=current,
        ref=ref,
        changes=changes,
        lost=lost,
        head_moved=head_moved,
        whole_run=source.kind == "run",
    )


def _short(commit: str | None) -> str:
    return commit[:10] if commit else "no commit"


async def apply_restore(plan: RestorePlan) -> StepChanges:
    """Write the target state into the folder and checkpoint the result. Refuses (raises) when
    the folder changed after the plan was made: the person confirmed a different picture."""
    workspace = plan.workspace
    try:
        now = await snapshot(workspace, f"{plan.ref}/before", "before a restore")
        if await changed_files(workspace, plan.current.commit, now.commit):
            raise RestoreError("the folder changed while the restore waited; plan it again")
        await _write_tree(workspace, plan.target, plan.changes)
        after = await snapshot(workspace, f"{plan.ref}/after", f"restored to step {plan.step + 1}")
        files = await changed_files(workspace, plan.current.commit, after.commit)
    except (GitError, OSError) as error:
        raise RestoreError(f"the restore failed: {error}") from None
    return workspace.changes(
        plan.run_id, plan.step, plan.current.commit, after, files, kind="restore"
    )


async def _write_tree(workspace: Workspace, target: str, changes: list[FileChange]) -> None:
    wanted = [c.path for c in changes if c.status != "deleted"]
    gone = [c.path for c in changes if c.status == "deleted"]
    with tempfile.TemporaryDirectory(prefix="baton-restore-") as temp:
        index = Path(temp) / "index"
        await workspace.git("read-tree", f"{target}^{{tree}}", index=index)
        if wanted:  # git itself refuses to write through a symlinked folder
            listing = "".join(f"{name}\0" for name in wanted).encode()
            await workspace.git(
                "checkout-index", "-f", "-q", "-z", "--stdin", index=index, stdin=listing
            )
    _remove(workspace.work_tree, gone)


def _remove(root: Path, relative: list[str]) -> None:
    """Delete files the target state does not have, then the folders they leave empty."""
    real_root = root.resolve()
    for name in relative:
        path = root / name
        if not path.parent.resolve().is_relative_to(real_root):
            continue  # a folder swapped for a link since: never delete outside the folder
        if path.is_symlink() or path.is_file():
            path.unlink()
        parent = path.parent
        while parent != root and parent.is_dir() and not any(parent.iterdir()):
            os.rmdir(parent)
            parent = parent.parent
