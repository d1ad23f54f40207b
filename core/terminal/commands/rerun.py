"""A saved run taken further, as a new run linked to its parent:

* ``baton runs resume RUN_ID`` and ``baton runs rerun RUN_ID --from N`` run it again, reusing
  the steps that finished (see :mod:`core.run.rerun`);
* ``baton runs continue RUN_ID TEXT`` says something more to a finished step, in the same
  conversation (see :mod:`core.run.continuation`), as the window's Continue box does.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from core.config.settings import SettingsError, load_settings
from core.model.errors import RunError
from core.model.events import Event, StepStarted
from core.record.run_files import RunIndex, load_run
from core.run.continuation import continue_request
from core.run.rerun import rerun_from_request, resume_request
from core.run.runner import Runner
from core.terminal.commands.run import (
    add_budget_options,
    add_gate_option,
    budget_from,
    execute,
    runner_options,
    usage_error,
)


def register(actions: Any) -> None:
    """Add ``resume`` and ``rerun`` to ``baton runs``' actions."""
    resume = actions.add_parser(
        "resume",
        help="run a failed, cancelled or interrupted run on from its first unfinished step",
    )
    resume.add_argument("run_id")
    add_run_again_options(resume)
    resume.set_defaults(handler=_resume)
    rerun = actions.add_parser(
        "rerun", help="run a chain or graph again from step N, reusing the steps before it"
    )
    rerun.add_argument("run_id")
    rerun.add_argument("--from", dest="step", type=int, required=True, metavar="N")
    rerun.add_argument("--task", help="step N's new task")
    rerun.add_argument("--agent", help="step N's agent instead")
    rerun.add_argument("--model", help="step N's model instead")
    add_run_again_options(rerun)
    rerun.set_defaults(handler=_rerun)
    follow_up = actions.add_parser(
        "continue",
        help="say more to a finished step, in the same conversation (a new, linked run)",
    )
    follow_up.add_argument("run_id")
    follow_up.add_argument("text", help="the follow-up")
    follow_up.add_argument(
        "--step", type=int, metavar="N", help="the step to continue (default: the last one)"
    )
    add_run_again_options(follow_up)
    follow_up.set_defaults(handler=_continue)


def add_run_again_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--approve", choices=["prompt", "deny", "all"], default=None)
    parser.add_argument("--json", action="store_true", help="print NDJSON events")
    parser.add_argument(
        "--trust-project", action="store_true", help="trust the project's own agents for this run"
    )
    add_budget_options(parser)  # given: instead of the caps the saved run had
    add_gate_option(parser)


def _resume(args: argparse.Namespace) -> int:
    return run_again(args, "baton runs resume", resume_request)


def _rerun(args: argparse.Namespace) -> int:
    def build(events: list[Any]) -> Any:
        return rerun_from_request(
            events, args.step, task=args.task, agent=args.agent, model=args.model
        )

    return run_again(args, "baton runs rerun", build)


def _continue(args: argparse.Namespace) -> int:
    def build(events: list[Event]) -> Any:
        if args.step is not None and args.step < 1:
            raise RunError("--step counts from 1")
        steps = [e.step for e in events if isinstance(e, StepStarted) and e.step is not None]
        step = args.step - 1 if args.step is not None else max(steps, default=0)
        return continue_request(events, step, args.text)

    return run_again(args, "baton runs continue", build)


def run_again(args: argparse.Namespace, command: str, build: Any) -> int:
    """Build a request from a saved run's events and run it (shared with ``baton runs
    comment``)."""
    try:
        record = RunIndex().get(args.run_id)
        if record is None:
            raise RunError(f"no run '{args.run_id}' (see 'baton runs list')")
        request = build(load_run(Path(record.path)))
        if args.trust_project:
            request = dataclasses.replace(request, trust_project=True)
        budget = budget_from(args)
        if budget is not None:
            request = dataclasses.replace(request, budget=budget)
        settings = load_settings()
    except (RunError, SettingsError, OSError) as error:
        return usage_error(command, error)
    return execute(Runner(request, **runner_options(args, settings)), settings, command)
