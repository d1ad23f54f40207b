"""``baton runs comment``: the window's review comments, from a terminal.

Each ``comment`` adds one on lines of a step's answer or of a file in the run's folder; they
wait (:mod:`core.run.pending_comments`) until ``comments --send`` runs the follow-up that gets them,
as the window's "Send comments" does (:func:`core.run.review_comments.follow_up_request`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.model.errors import RunError
from core.model.events import Event
from core.record.run_files import RunIndex, load_run
from core.record.run_state import fold
from core.run import pending_comments
from core.run.pending_comments import PendingComment
from core.run.review_comments import follow_up_request, output_path
from core.terminal.commands.rerun import add_run_again_options, run_again

EXIT_OK, EXIT_USAGE = 0, 2
COMMAND = "baton runs comment"


def register(actions: Any) -> None:
    parser = actions.add_parser(
        "comment",
        help="comment on lines of a step's answer or of a file (sent by 'runs comments --send')",
        description="Add a review comment on line L (to --end-line M) of step N's answer, or of"
        " --file F in the run's folder. Comments wait until 'baton runs comments RUN_ID --send'"
        " runs one more step that gets them all, reusing the run up to the reviewed step.",
    )
    parser.add_argument("run_id")
    parser.add_argument("text", help="the comment")
    parser.add_argument("--step", type=int, required=True, metavar="N", help="step reviewed")
    parser.add_argument("--file", metavar="F", help="a file in the run's folder (default: answer)")
    parser.add_argument("--line", type=int, required=True, metavar="L", help="line, from 1")
    parser.add_argument("--end-line", type=int, metavar="M", help="the last line, for several")
    parser.set_defaults(handler=_comment)
    waiting = actions.add_parser(
        "comments",
        help="the review comments waiting on a run; --send runs the follow-up, --clear drops them",
    )
    waiting.add_argument("run_id")
    what = waiting.add_mutually_exclusive_group()
    what.add_argument("--send", action="store_true", help="run the follow-up with every comment")
    what.add_argument("--clear", action="store_true", help="drop the comments waiting")
    add_run_again_options(waiting)
    waiting.set_defaults(handler=_comments)


def _fail(message: str) -> int:
    print(f"{COMMAND}: {message}", file=sys.stderr)
    return EXIT_USAGE


def _checked(run_id: str) -> str | None:
    """Why ``run_id`` cannot name a comments file, or None."""
    try:
        pending_comments.comments_file(run_id)
    except ValueError as error:
        return str(error)
    return None


def _comment(args: argparse.Namespace) -> int:
    if (problem := _checked(args.run_id)) is not None:
        return _fail(problem)
    try:
        comment = _new_comment(args)
    except RunError as error:
        return _fail(str(error))
    count = len(pending_comments.add(args.run_id, comment))
    print(
        f"{count} comment{'s' if count != 1 else ''} waiting on run {args.run_id}; "
        f"send with: baton runs comments {args.run_id} --send"
    )
    return EXIT_OK


def _comments(args: argparse.Namespace) -> int:
    if (problem := _checked(args.run_id)) is not None:
        return _fail(problem)
    if args.clear:
        pending_comments.clear(args.run_id)
        print(f"No comments waiting on run {args.run_id} any more.")
        return EXIT_OK
    if args.send:
        return _send(args)
    comments = pending_comments.pending(args.run_id)
    if not comments:
        print(f"No comments waiting on run {args.run_id}.")
    for c in comments:
        lines = c.review_comment().lines
        print(f"step {c.step + 1} · {c.path}, line {lines}: {c.text}")
    return EXIT_OK


def _new_comment(args: argparse.Namespace) -> PendingComment:
    if not args.text.strip():
        raise RunError("say something: TEXT is the comment")
    end = args.end_line if args.end_line is not None else args.line
    if args.line < 1 or end < args.line:
        raise RunError("lines count from 1, and --end-line is not before --line")
    record = RunIndex().get(args.run_id)
    if record is None:
        raise RunError(f"no run '{args.run_id}' (see 'baton runs list')")
    state = fold(load_run(Path(record.path)))
    if not 1 <= args.step <= len(state.steps):
        raise RunError(f"run {args.run_id} has steps 1 to {len(state.steps)}")
    step = state.steps[args.step - 1]
    if args.file:
        path, lines = _file_lines(Path(step.folder or state.cwd), args.file)
    else:
        path, lines = output_path(step.index), step.output.splitlines()
    if end > len(lines):
        raise RunError(f"{path} has {len(lines)} lines")
    return PendingComment(
        step=step.index,
        path=path,
        line=args.line,
        end_line=end if end != args.line else None,
        code="\n".join(lines[args.line - 1 : end]),
        text=args.text.strip(),
    )


def _file_lines(folder: Path, name: str) -> tuple[str, list[str]]:
    """The file's path relative to the run's folder and its lines; a path leading out of the
    folder (``..``, an absolute path, a symlink out) is refused, so a comment cannot quote a
    private file into a model's task."""
    root = folder.resolve()
    target = (root / name).resolve()
    if not target.is_relative_to(root):
        raise RunError(f"{name} is outside the run's folder {root}")
    try:
        text = target.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise RunError(f"cannot read {name}: {error.strerror or error}") from None
    return target.relative_to(root).as_posix(), text.splitlines()


def _send(args: argparse.Namespace) -> int:
    comments = pending_comments.pending(args.run_id)
    if not comments:
        return _fail(f"no comments waiting for run {args.run_id}")
    steps = sorted({c.step for c in comments})
    if len(steps) > 1:
        numbers = ", ".join(str(s + 1) for s in steps)
        return _fail(f"the comments are on steps {numbers}: --clear and comment on one step")

    def build(events: list[Event]) -> Any:
        return follow_up_request(events, steps[0], [c.review_comment() for c in comments])

    code = run_again(args, COMMAND, build)
    if code != EXIT_USAGE:  # the follow-up ran (well or not): the comments were sent
        pending_comments.clear(args.run_id)
    return code
