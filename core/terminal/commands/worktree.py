"""``baton runs merge`` and ``baton runs discard``: the end of a run that worked in its own git
worktree (:mod:`core.workspace.worktrees`) — its work brought into the person's checkout, or thrown
away."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from core.model.events import RunStarted, WorktreeInfo
from core.record.run_files import RunIndex, load_run
from core.workspace.worktrees import WorktreeError, discard_worktree, merge_worktree


def register(actions: Any) -> None:
    merge = actions.add_parser("merge", help="merge a worktree run's branch into your checkout")
    merge.add_argument("run_id")
    merge.add_argument(
        "--squash", action="store_true", help="stage the changes instead of fast-forwarding"
    )
    merge.set_defaults(handler=_merge)
    discard = actions.add_parser("discard", help="remove a worktree run's worktree and branch")
    discard.add_argument("run_id")
    discard.set_defaults(handler=_discard)


def worktree_of(run_id: str) -> WorktreeInfo:
    """The worktree a saved run worked in; :class:`WorktreeError` when it had none."""
    record = RunIndex().get(run_id)
    if record is None:
        raise WorktreeError(f"no run '{run_id}' (see 'baton runs list')")
    for event in load_run(Path(record.path)):
        if isinstance(event, RunStarted):
            if event.worktree is None:
                break
            return event.worktree
    raise WorktreeError(f"run {run_id} did not work in a worktree of its own")


def merge_message(run_id: str) -> str:
    return f"Baton run {run_id}"


def _merge(args: argparse.Namespace) -> int:
    try:
        info = worktree_of(args.run_id)
        said = asyncio.run(
            merge_worktree(info, squash=args.squash, message=merge_message(args.run_id))
        )
    except WorktreeError as error:
        print(f"baton runs merge: {error}", file=sys.stderr)
        return 1
    print(said)
    return 0


def _discard(args: argparse.Namespace) -> int:
    try:
        info = worktree_of(args.run_id)
        asyncio.run(discard_worktree(info))
    except WorktreeError as error:
        print(f"baton runs discard: {error}", file=sys.stderr)
        return 1
    print(f"Removed the worktree {info.path} and the branch {info.branch}.")
    return 0
