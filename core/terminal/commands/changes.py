"""``baton runs diff`` and ``baton runs restore``: what a run changed in its folder, and
putting the folder back as it was before one of its steps (:mod:`core.workspace.checkpoints`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from core.model.events import Event, StepChanges
from core.model.words import counted
from core.record.run_files import RunIndex, append_event, load_run
from core.safety.redaction import Redactor
from core.workspace.checkpoints import Workspace, patch
from core.workspace.git_command import GitError
from core.workspace.restore import RestoreError, apply_restore, checkpoints_of, plan_restore


def register(actions: Any) -> None:
    diff = actions.add_parser("diff", help="print the patch a run (or one of its steps) made")
    diff.add_argument("run_id")
    diff.add_argument("--step", type=int, metavar="N", help="only step N (counted from 1)")
    diff.set_defaults(handler=_diff)
    restore = actions.add_parser(
        "restore", help="put the run's folder back as it was before step N"
    )
    restore.add_argument("run_id")
    target = restore.add_mutually_exclusive_group(required=True)
    target.add_argument("--step", type=int, metavar="N", help="restore to before step N")
    target.add_argument("--undo", action="store_true", help="undo the latest restore")
    restore.add_argument(
        "--yes", action="store_true", help="restore even over changes made since the run"
    )
    restore.set_defaults(handler=_restore)


def _events(run_id: str, command: str) -> tuple[Path, list[Event]] | None:
    record = RunIndex().get(run_id)
    if record is None:
        print(f"baton runs {command}: no run '{run_id}' (see 'baton runs list')", file=sys.stderr)
        return None
    path = Path(record.path)
    return path, load_run(path)


def run_patch(checkpoints: list[StepChanges], step: int | None) -> tuple[Workspace, str, str]:
    """The workspace and the two checkpoints whose diff is step ``step`` (0-based) or, for
    None, the whole run (first step's before to last step's after)."""
    steps = [c for c in checkpoints if c.kind in ("step", "run")]
    if step is not None:
        if any(c.kind == "run" for c in steps):
            raise RestoreError(
                "the tasks of a parallel run shared the folder, so their changes are "
                "recorded for the whole run, not per task (leave out the step)"
            )
        steps = [c for c in steps if c.step == step]
    if not steps:
        raise RestoreError(
            "no checkpoints recorded" + (f" for step {step + 1}" if step is not None else "")
        )
    return Workspace.of(steps[0]), steps[0].before, steps[-1].after


def _diff(args: argparse.Namespace) -> int:
    found = _events(args.run_id, "diff")
    if found is None:
        return 2
    step = args.step - 1 if args.step is not None else None
    try:
        workspace, before, after = run_patch(checkpoints_of(found[1]), step)
        text = asyncio.run(patch(workspace, before, after))
    except (RestoreError, GitError, OSError) as error:
        print(f"baton runs diff: {error}", file=sys.stderr)
        return 1
    sys.stdout.write(Redactor.configured().scrub(text))  # a key in a file, or a file name
    return 0


def _restore(args: argparse.Namespace) -> int:
    found = _events(args.run_id, "restore")
    if found is None:
        return 2
    path, events = found
    step = None if args.undo else args.step - 1
    try:
        plan = asyncio.run(plan_restore(events, step))
        if plan.refused and not args.yes:
            print(
                f"baton runs restore: refused.\n{plan.explanation()}\n"
                "Run again with --yes to restore anyway (the current state is checkpointed "
                "first, so 'baton runs restore RUN --undo' brings it back).",
                file=sys.stderr,
            )
            return 1
        done = asyncio.run(apply_restore(plan))
    except RestoreError as error:
        print(f"baton runs restore: {error}", file=sys.stderr)
        return 1
    append_event(path, done)
    print(_restore_done(args.run_id, plan.target_name, done, undo=args.undo))
    for change in done.files:
        print(f"  {change.status:<8} {change.path}")
    return 0


def _restore_done(run_id: str, target_name: str, done: StepChanges, *, undo: bool) -> str:
    """What the restore did, in words. An undo puts the folder back as it was before the
    latest restore, which is not "restored to before step N": saying that would describe the
    very change it just took back."""
    count = f"{counted(len(done.files), 'file')} changed"
    again = f"'baton runs restore {run_id} --undo'"
    if undo:
        return (
            f"Undid the latest restore of {done.work_tree} (to before {target_name}): the folder "
            f"is back as it was before that restore; {count}. Undo this too with {again}."
        )
    return f"Restored {done.work_tree} to before {target_name}: {count}. Undo with {again}."
