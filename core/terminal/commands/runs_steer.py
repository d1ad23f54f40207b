"""``baton runs steer RUN_ID TEXT [--step N]``: the window's message box, from a terminal.

The message goes to the process running the run (another terminal's ``baton run``, or the
window) through its spool folder (:mod:`core.run.steer_spool`); this command waits for that
process's answer, so it says "delivered" only when the step really has the message."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from core.record.liveness import owner_alive
from core.record.run_files import RunIndex
from core.run.steer_spool import (
    MAX_MESSAGE_BYTES,
    SteerAnswer,
    SteerMessage,
    answer_to,
    post,
    spool_dir,
    withdraw,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
WAIT_S = 15.0
"""How long to wait for the running process to take the message (it looks every 0.5 s)."""
LOOK_S = 0.1


def register(actions: Any) -> None:
    parser = actions.add_parser(
        "steer",
        help="say something to a running run's step, from another terminal",
        description="Deliver TEXT to a step of a run that is running in another process (a"
        " terminal's 'baton run' or the window), as the window's message box does: it reaches"
        " the agent at its next turn boundary, cancelling nothing, and is recorded in the run.",
    )
    parser.add_argument("run_id")
    parser.add_argument("text")
    parser.add_argument(
        "--step", type=int, metavar="N", help="the step (1, 2, …); default: the one running"
    )
    parser.set_defaults(handler=_steer)


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"baton runs steer: {message}", file=sys.stderr)
    return code


def _steer(args: argparse.Namespace) -> int:
    try:
        spool_dir(args.run_id)
    except ValueError as error:
        return _fail(str(error))
    text = args.text.strip()
    if not text:
        return _fail("the message is empty")
    if len(text.encode("utf-8")) > MAX_MESSAGE_BYTES // 2:
        return _fail(f"the message is longer than {MAX_MESSAGE_BYTES // 2} bytes")
    if args.step is not None and args.step < 1:
        return _fail("--step counts from 1")
    record = RunIndex().get(args.run_id)
    if record is None:
        return _fail(f"no run '{args.run_id}'")
    run_path = Path(record.path)
    if not owner_alive(run_path):
        return _fail(f"run '{args.run_id}' is not running (it ended: {record.status})")
    name = post(args.run_id, SteerMessage(text=text, step=args.step))
    answer = _wait_for_answer(args.run_id, name, run_path)
    if answer is None:
        if withdraw(args.run_id, name) and not owner_alive(run_path):
            return _fail(f"run '{args.run_id}' ended before it took the message")
        return _fail(
            f"the process running '{args.run_id}' did not answer within {WAIT_S:.0f} s",
            EXIT_FAILED,
        )
    if not answer.delivered:
        return _fail(f"not delivered: {answer.reason}")
    print(f"Delivered to step {answer.step} of run {args.run_id}.")
    return EXIT_OK


def _wait_for_answer(run_id: str, name: str, run_path: Path) -> SteerAnswer | None:
    """The answer, or None when none came in time or the run ended without one."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        answer = answer_to(run_id, name)
        if answer is not None:
            return answer
        if not owner_alive(run_path):
            return answer_to(run_id, name)  # it may have answered just before it ended
        time.sleep(LOOK_S)
    return answer_to(run_id, name)
