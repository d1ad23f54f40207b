"""``baton runs resume RUN_ID`` and ``baton runs rerun RUN_ID --from N``: a saved run again,
reusing the steps that finished (see :mod:`core.rerun`); the new run is linked to its parent."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from core.commands.run import execute, runner_options, usage_error
from core.errors import RunError
from core.rerun import rerun_from_request, resume_request
from core.runner import Runner
from core.runs import RunIndex, load_run
from core.settings import SettingsError, load_settings


def register(actions: Any) -> None:
    """Add ``resume`` and ``rerun`` to ``baton runs``' actions."""
    resume = actions.add_parser(
        "resume",
        help="run a failed, cancelled or interrupted run on from its first unfinished step",
    )
    resume.add_argument("run_id")
    _run_options(resume)
    resume.set_defaults(handler=_resume)
    rerun = actions.add_parser(
        "rerun", help="run a chain again from step N, reusing the steps before it"
    )
    rerun.add_argument("run_id")
    rerun.add_argument("--from", dest="step", type=int, required=True, metavar="N")
    rerun.add_argument("--task", help="step N's new task")
    rerun.add_argument("--agent", help="step N's agent instead")
    rerun.add_argument("--model", help="step N's model instead")
    _run_options(rerun)
    rerun.set_defaults(handler=_rerun)


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--approve", choices=["prompt", "deny", "all"], default=None)
    parser.add_argument("--json", action="store_true", help="print NDJSON events")
    parser.add_argument(
        "--trust-project", action="store_true", help="trust the project's own agents for this run"
    )


def _resume(args: argparse.Namespace) -> int:
    return _again(args, "baton runs resume", resume_request)


def _rerun(args: argparse.Namespace) -> int:
    def build(events: list[Any]) -> Any:
        return rerun_from_request(
            events, args.step, task=args.task, agent=args.agent, model=args.model
        )

    return _again(args, "baton runs rerun", build)


def _again(args: argparse.Namespace, command: str, build: Any) -> int:
    try:
        record = RunIndex().get(args.run_id)
        if record is None:
            raise RunError(f"no run '{args.run_id}' (see 'baton runs list')")
        request = build(load_run(Path(record.path)))
        if args.trust_project:
            request = dataclasses.replace(request, trust_project=True)
        settings = load_settings()
    except (RunError, SettingsError, OSError) as error:
        return usage_error(command, error)
    return execute(Runner(request, **runner_options(args, settings)), settings, command)
