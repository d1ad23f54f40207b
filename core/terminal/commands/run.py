"""``baton run``: a preset, one agent, parallel tasks or a chain, headless.

Without ``--json`` a live transcript goes to stdout; with it, one event per line (NDJSON) —
the same events the window and the run files use. Approvals: ``--approve prompt`` asks on the
terminal (the default when there is one), ``deny`` refuses every "ask" (the default without a
terminal), ``all`` approves everything. Ctrl+C cancels cleanly: the run file ends with
``run_finished`` (``aborted``) and the exit status is 130.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import signal
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.config.looks import one_look
from core.config.settings import Settings, SettingsError, load_settings
from core.model.budget import Budget, BudgetAsker, Caps, stop_at_cap
from core.model.errors import RunError
from core.model.events import Event, event_to_json
from core.run.run_request import RunRequest, StepSpec, preset_request
from core.run.runner import Runner
from core.safety.approvals import Responder, approve_all, deny_all, deny_by_setting
from core.safety.redaction import Redactor
from core.safety.sandbox import sandbox_status
from core.terminal.commands.run_estimate import print_estimate
from core.terminal.gate_prompt import gate_asker_for

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "run",
        help="run a preset, an agent, parallel tasks or a chain",
        description='Run headless. Examples: baton run implement "add a --verbose flag"; '
        'baton run --agent scout --task "map the auth code"; '
        'baton run --chain scout="find X" planner="plan: {previous}"; '
        "baton run writer 'release notes' --param tone=formal",
    )
    parser.add_argument("preset", nargs="?", help="preset name")
    parser.add_argument("args", nargs="*", help="preset arguments ($1, $2, … and $@)")
    parser.add_argument("--agent", help="run this one agent (with --task)")
    parser.add_argument("--task", help="the task for --agent")
    parser.add_argument(
        "--parallel",
        action="extend",
        nargs="+",
        metavar="NAME=TASK",
        default=[],
        help="parallel tasks, one NAME=TASK each (at most 8; the flag may be repeated)",
    )
    parser.add_argument(
        "--chain",
        action="extend",
        nargs="+",
        metavar="NAME=TASK",
        default=[],
        help="chain steps in order, one NAME=TASK each (the flag may be repeated); "
        "{previous} is the previous step's output",
    )
    parser.add_argument(
        "--param",
        action="append",
        metavar="[STEP.]NAME=VALUE",
        default=[],
        help="a value for an agent's typed parameter (repeat); STEP (a step number or an "
        "agent name) sets it for that step only",
    )
    parser.add_argument(
        "--allow-outside-folder",
        action="store_true",
        help="let a step work in a folder outside the working folder (a preset's step cwd)",
    )
    parser.add_argument(
        "--worktree",
        action="store_true",
        help="work in a new git worktree on branch baton/RUN_ID (then: baton runs merge|discard)",
    )
    add_run_options(parser)
    parser.add_argument("--json", action="store_true", help="print NDJSON events")
    parser.add_argument(
        "--estimate",
        action="store_true",
        help="print what the preset's earlier runs cost (median) and exit without running",
    )
    add_budget_options(parser)
    parser.add_argument(
        "--no-network", action="store_true", help="cut the network of sandboxed bash for this run"
    )
    parser.set_defaults(handler=run)


ASK_AT_GATES = "ask on a terminal; without one a gate fails the run"


def add_gate_option(parser: argparse.ArgumentParser, unanswered: str = ASK_AT_GATES) -> None:
    """``--gate`` (shared with ``baton runs resume``): how a graph's gates are answered;
    ``unanswered`` says what happens without it."""
    parser.add_argument(
        "--gate",
        choices=["continue", "stop", "default"],
        default=None,
        help="answer every gate of a graph preset without asking: continue, stop, or each "
        f"gate's own default (default: {unanswered})",
    )


def add_run_options(parser: argparse.ArgumentParser, unanswered: str = ASK_AT_GATES) -> None:
    """Where and how steps run (shared with ``baton batch``; ``unanswered``: see
    :func:`add_gate_option`)."""
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="working folder")
    parser.add_argument("--scope", choices=["user", "project", "both"], default="both")
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="run the project's own agents without a stored trust record",
    )
    parser.add_argument("--model", help="use this model for every step")
    parser.add_argument(
        "--backend",
        choices=["openai", "pi", "claude", "acp"],
        help="run every step through this backend",
    )
    parser.add_argument(
        "--approve",
        choices=["prompt", "deny", "all"],
        default=None,
        help="how to answer tool calls that need approval "
        "(default: prompt on a terminal, deny without one)",
    )
    add_gate_option(parser, unanswered)


def _pairs(values: list[str], flag: str) -> list[StepSpec]:
    steps = []
    for value in values:
        name, sep, task = value.partition("=")
        if not sep or not name.strip():
            raise RunError(
                f"{flag} takes NAME=TASK pairs, not {value!r}; quote each task and give one "
                f"pair per step, after one {flag} or repeating it: "
                f"{flag} scout='find X' planner='plan: {{previous}}'"
            )
        steps.append(StepSpec(agent=name.strip(), task=task))
    return steps


def _with_params(request: RunRequest, values: list[str]) -> RunRequest:
    """``request`` with the ``--param [STEP.]NAME=VALUE`` values: run-wide, or for the steps a
    STEP (1-based number or agent name) picks. Checking them is the runner's job."""
    run_wide = dict(request.params)
    steps = list(request.steps)
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise RunError(f"--param takes NAME=VALUE or STEP.NAME=VALUE, not {value!r}")
        where, dot, name = key.strip().rpartition(".")
        if not dot:
            run_wide[name] = text
            continue
        picked = [
            index
            for index, step in enumerate(steps)
            if where == str(index + 1) or where.casefold() == step.agent.casefold()
        ]
        if not picked:
            raise RunError(
                f"--param {key}: no step {where!r} (use a step number 1-{len(steps)} "
                "or an agent name of this run)"
            )
        for index in picked:
            steps[index] = dataclasses.replace(
                steps[index], params={**steps[index].params, name: text}
            )
    return dataclasses.replace(request, params=run_wide, steps=steps)


def build_runner(args: argparse.Namespace, settings: Settings) -> Runner:
    """The runner for the command line's request (definitions read once, not twice)."""
    options = runner_options(args, settings)
    with one_look():  # the definitions read here are the files the trust check hashes
        if args.preset:
            request, agents, presets = preset_request(
                args.preset,
                list(args.args),
                args.cwd.resolve(),
                args.scope,
                **_request_options(args),
            )
            runner = Runner(
                _with_params(request, args.param), agents=agents, presets=presets, **options
            )
        else:
            runner = Runner(_with_params(build_request(args), args.param), **options)
        runner.prepare()
    return runner


def _request_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {
        "model": args.model,
        "backend": args.backend,
        "trust_project": args.trust_project,
        "allow_outside_folder": args.allow_outside_folder,
    }
    if args.worktree:  # else a preset's own isolation applies
        options["isolation"] = "worktree"
    budget = budget_from(args)
    if budget is not None:  # else a preset's own budget applies
        options["budget"] = budget
    return options


def add_budget_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("budget (checked before every model request)")
    group.add_argument("--max-cost", type=float, metavar="USD", help="cap the run's cost")
    group.add_argument("--max-tokens", type=int, metavar="N", help="cap the run's tokens")
    group.add_argument("--step-max-cost", type=float, metavar="USD", help="cap each step's cost")
    group.add_argument("--step-max-tokens", type=int, metavar="N", help="cap each step's tokens")


def budget_from(args: argparse.Namespace) -> Budget | None:
    """The caps the flags give (None: none given); raises RunError for a bad value."""
    values = (args.max_cost, args.max_tokens, args.step_max_cost, args.step_max_tokens)
    if all(value is None for value in values):
        return None
    try:
        return Budget(
            run=Caps(max_cost=args.max_cost, max_tokens=args.max_tokens),
            step=Caps(max_cost=args.step_max_cost, max_tokens=args.step_max_tokens),
        )
    except ValidationError:
        raise RunError("budget caps must be greater than 0") from None


def build_request(args: argparse.Namespace) -> RunRequest:
    """An ad-hoc request (--agent, --parallel, --chain); presets go through
    :func:`build_runner`."""
    options = _request_options(args)
    cwd = args.cwd.resolve()
    if args.args:
        raise RunError(f"unexpected arguments: {' '.join(args.args)}")
    if args.agent:
        if not args.task:
            raise RunError("--agent needs --task")
        steps, mode = [StepSpec(agent=args.agent, task=args.task)], "single"
    elif args.parallel:
        steps, mode = _pairs(args.parallel, "--parallel"), "parallel"
    else:
        steps, mode = _pairs(args.chain, "--chain"), "chain"
    return RunRequest(mode=mode, steps=steps, cwd=cwd, scope=args.scope, **options)  # type: ignore[arg-type]


def _responder(choice: str | None) -> Responder:
    if choice is None:
        if not sys.stdin.isatty():
            return deny_all  # no one to ask: every call that needs approval is denied
        choice = "prompt"
    if choice == "all":
        return approve_all
    if choice == "deny":
        return deny_by_setting("--approve deny")
    from core.terminal.approval_prompt import TerminalApprover

    return TerminalApprover()


def run(args: argparse.Namespace) -> int:
    try:
        chosen = [bool(args.preset), bool(args.agent), bool(args.parallel), bool(args.chain)]
        if sum(chosen) != 1:
            raise RunError("give exactly one of: a preset, --agent, --parallel or --chain")
        if args.estimate:
            print_estimate(args)
            return EXIT_OK
        settings = load_settings()
        if args.no_network:
            sandbox = settings.sandbox.model_copy(update={"network": False})
            settings = settings.model_copy(update={"sandbox": sandbox})
        runner = build_runner(args, settings)
    except (RunError, SettingsError) as error:
        return usage_error("baton run", error)
    return execute(runner, settings, "baton run")


def runner_options(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """Runner keywords for ``--approve`` and ``--json`` (shared with ``baton runs resume``)."""
    return {
        "settings": settings,
        "responder": _responder(args.approve),
        "listeners": [_json_printer if args.json else _transcript_printer()],
        "budget_asker": _budget_asker(args.approve),
        "gate_asker": gate_asker_for(getattr(args, "gate", None), sys.stdin.isatty()),
    }


def _budget_asker(choice: str | None) -> BudgetAsker:
    """Ask on a terminal (as approvals do); stop at the cap with nobody to ask."""
    if choice in ("deny", "all") or (choice is None and not sys.stdin.isatty()):
        return stop_at_cap
    from core.terminal.budget_prompt import ask_on_terminal

    return ask_on_terminal


def usage_error(command: str, error: Exception) -> int:
    # A key can hide in a message (a base_url with credentials in it): redact it too.
    print(f"{command}: {Redactor.from_environment().scrub(str(error))}", file=sys.stderr)
    return EXIT_USAGE


def execute(runner: Runner, settings: Settings, command: str) -> int:
    """Check, say what is not sandboxed, run with Ctrl+C handling; the exit code."""
    try:
        runner.prepare()
    except RunError as error:
        return usage_error(command, error)
    status = sandbox_status(settings.sandbox.enabled)
    if not status.active:  # said before anything runs, not discovered afterwards
        print(f"{command}: bash is {status.describe()}", file=sys.stderr)
    code = asyncio.run(_run_with_ctrl_c(runner))
    from core.history.run_search import (
        index_ended_run,  # imported once a run has ended, not at start-up
    )

    index_ended_run(runner.run_id)
    return code


async def _run_with_ctrl_c(runner: Runner) -> int:
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows' loop
        loop.add_signal_handler(signal.SIGINT, runner.cancel)
        loop.add_signal_handler(signal.SIGTERM, runner.cancel)
    result = await runner.run()
    if result.status == "ok":
        return EXIT_OK
    return EXIT_CANCELLED if result.status == "aborted" and runner.cancelled else EXIT_FAILED


def _json_printer(event: Event) -> None:
    sys.stdout.write(event_to_json(event) + "\n")
    sys.stdout.flush()


def _transcript_printer() -> Any:
    from core.terminal.output import TranscriptPrinter

    return TranscriptPrinter(sys.stdout)
