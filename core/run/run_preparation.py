"""Turning a :class:`~core.run.run_request.RunRequest` into steps that can run, or refusing it.

Everything here happens before a single request is sent, so a refusal costs nothing and says what to
fix (:class:`~core.model.errors.RunError`): the nesting depth, the working folders (one outside the
run's folder needs :attr:`RunRequest.allow_outside_folder`), the parallel limit, project trust
(:class:`~core.safety.untrusted.UntrustedProjectError`: the project's agents and presets, and — for
a step run by Claude Code or pi — the programs its CLI settings would run, even in a folder with no
agent files), the agents (an unknown one, or one whose file has an error-level diagnostic), their
typed parameters (checked against their ``params:``, defaults applied, also substituted into the
agent's system prompt), the backend and the model of each step.

The runner (:mod:`core.run.runner`) calls :func:`prepare_steps` once and then only drives what it
returns; the launch dialog reaches the same checks through :meth:`core.run.runner.Runner.prepare`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.backends.registry import OWN_LOOP, backend_for
from core.config.looks import one_look
from core.config.model_choice import configured_model
from core.config.settings import Settings
from core.definitions.agents import AgentCatalog, AgentDefinition, discover_agents
from core.definitions.params import ParamsError, run_params, step_params
from core.definitions.presets import (
    MAX_PARALLEL_TASKS,
    Preset,
    PresetCatalog,
    discover_presets,
    expand_template,
)
from core.definitions.project_context import repository_root, steering_fingerprint
from core.model.errors import RunError
from core.run.run_request import RunRequest, StepSpec
from core.safety import checkout_programs
from core.safety.nesting import ParentStep, check_depth
from core.safety.trust import TrustStore, project_files
from core.safety.untrusted import UntrustedProjectError
from core.workspace.prompt_sources import prompt_fingerprint
from core.workspace.worktrees import check_repository


@dataclass
class PreparedStep:
    """One step as it will run; its folder moves with the run into a worktree."""

    spec: StepSpec
    agent: AgentDefinition
    """With its parameters substituted into the system prompt."""
    backend: str
    model: str | None
    cwd: Path
    params: dict[str, Any]
    """The values the task template is filled with (this step's over the run's)."""
    task: str
    """The task as planned: filled in, except ``{previous}``."""
    checkout_trust: str | None = None
    """The fingerprint of the folder's CLI program files as the person trusted them (None:
    not trusted, the CLI must not load them): see :mod:`core.safety.checkout_programs`."""
    project_trusted: bool = False
    """Baton's loop may load the project's context files and skills."""
    project_trust: str | None = None
    """The context files and skills as they were when trusted: compared when the step starts
    (a CLI's or an ACP agent's step, which may load any of them)."""
    prompt_trust: str | None = None
    """What Baton's own loop could put in the step's prompt, as it was when trusted
    (:func:`~core.workspace.prompt_sources.prompt_fingerprint`): compared when the step
    starts, instead of everything the CLIs may load."""

    def task_with(self, previous: str | None, handed: dict[str, str] | None = None) -> str:
        """The task sent, filled in one pass from the template (never the planned text);
        ``handed``: a graph step's other hand-offs (``outputs``, ``step.NAME``)."""
        return expand_template(
            self.spec.task,
            args=self.spec.args,
            params=self.params,
            previous=previous,
            handed=handed,
        )


def prepare_steps(
    request: RunRequest,
    settings: Settings,
    *,
    parent: ParentStep | None,
    agents: AgentCatalog | None = None,
    presets: PresetCatalog | None = None,
) -> list[PreparedStep]:
    """The request's steps, ready to run; raises :class:`RunError` (or its trust subclass)
    when it cannot run. ``agents`` / ``presets`` default to those discovered from the
    request's folder and scope."""
    with one_look():  # each folder's trust fingerprint computed once for all the steps
        return _prepare_steps(request, settings, parent=parent, agents=agents, presets=presets)


def _prepare_steps(
    request: RunRequest,
    settings: Settings,
    *,
    parent: ParentStep | None,
    agents: AgentCatalog | None,
    presets: PresetCatalog | None,
) -> list[PreparedStep]:
    check_depth(parent)
    if not request.cwd.is_dir():
        raise RunError(f"working folder {request.cwd} does not exist")
    if not request.steps:
        raise RunError("nothing to run: no steps")
    if request.mode == "graph" and (
        request.graph is None or len(request.graph.steps) != len(request.steps)
    ):
        raise RunError("a graph run needs its preset's graph (run it by the preset's name)")
    if request.mode == "single" and len(request.steps) != 1:
        raise RunError("a single run has exactly one step")
    if request.mode == "parallel" and len(request.steps) > MAX_PARALLEL_TASKS:
        raise RunError(
            f"too many parallel tasks ({len(request.steps)}); the limit is {MAX_PARALLEL_TASKS}"
        )
    agents = agents or discover_agents(request.cwd, request.scope)
    _check_trust(request, agents, presets)
    if request.isolation == "worktree":
        check_repository(request.cwd)
    chosen = [
        _runnable_agent(request, agents, number, spec)
        for number, spec in enumerate(request.steps, 1)
    ]
    try:
        run_values = run_params(chosen, request.params)
    except ParamsError as error:
        raise RunError(str(error)) from None
    steps = []
    root = request.cwd.resolve()
    for number, (spec, agent) in enumerate(zip(request.steps, chosen, strict=True), 1):
        where = f"step {number} ({agent.name})"
        cwd = _step_folder(request, where, spec, root)
        backend = backend_for(agent, request.backend, settings)
        try:
            own = step_params(agent, spec.params, run_values)
        except ParamsError as error:
            raise RunError(f"{where}: {error}") from None
        values = {**run_values, **own}
        body = expand_template(agent.system_prompt, params=own)
        agent = agent.model_copy(update={"system_prompt": body})
        model = _model_for(request, settings, spec, agent, backend)
        prepared = PreparedStep(spec, agent, backend, model, cwd, values, "")
        prepared.checkout_trust = _checkout_trust(request, backend, cwd, agent)
        prepared.project_trusted = project_trusted(request, cwd, root)
        if prepared.project_trusted and backend == OWN_LOOP:
            prepared.prompt_trust = prompt_fingerprint(cwd)
        elif prepared.project_trusted:
            prepared.project_trust = steering_fingerprint(cwd)
        prepared.task = prepared.task_with(None)
        steps.append(prepared)
    return steps


def _model_for(
    request: RunRequest, settings: Settings, spec: StepSpec, agent: AgentDefinition, backend: str
) -> str | None:
    """The configured model (:mod:`core.config.model_choice`, the launch dialog's rule too); None
    lets a CLI use its default, or Baton's loop ask the provider for its only model."""
    return configured_model(
        backend,
        settings,
        run_model=request.model,
        step_model=spec.model,
        agent_model=agent.model,
    ).model


def _runnable_agent(
    request: RunRequest, agents: AgentCatalog, number: int, spec: StepSpec
) -> AgentDefinition:
    """The step's agent; refuses an unknown one, or one whose file has an error."""
    preset = request.preset
    where = f"preset '{preset}', step {number}" if preset else f"step {number}"
    agent = agents.get(spec.agent)
    if agent is None:
        raise RunError(
            f"{where}: unknown agent '{spec.agent}' "
            f"(available: {', '.join(agents.names()) or 'none'})"
        )
    problem = agent.error
    if problem is not None:
        raise RunError(
            f"{where}: agent '{agent.name}' cannot run: {problem.location}: {problem.message}"
        )
    return agent


def _step_folder(request: RunRequest, where: str, spec: StepSpec, root: Path) -> Path:
    """The step's working folder (``root``: the run's, resolved); one outside the run's needs
    the person's consent."""
    cwd = (root / spec.cwd).resolve() if spec.cwd else root
    if not cwd.is_dir():
        raise RunError(f"{where}: folder {cwd} does not exist")
    if not cwd.is_relative_to(root) and not request.allow_outside_folder:
        raise RunError(
            f"{where}: folder {cwd} is outside the run's folder {root}; "
            "allow it on purpose with --allow-outside-folder"
        )
    return cwd


def _check_trust(request: RunRequest, agents: AgentCatalog, presets: PresetCatalog | None) -> None:
    """Refuses project agents or a project preset from a folder the person has not trusted."""
    if request.trust_project or request.scope == "user":
        return
    _check_changed_trust(request)
    uses_project = any(
        (a := agents.get(s.agent)) is not None and a.source == "project" for s in request.steps
    )
    preset = _preset(request, presets)
    if preset is not None and preset.source == "project":
        uses_project = True
    if not uses_project:
        return
    root = agents.project_root
    if preset is not None and preset.source == "project" and preset.path:
        root = Path(preset.path).parents[2]
    if root is None:
        return
    if not TrustStore().is_trusted(root):
        raise UntrustedProjectError(root, project_files(root))


def _check_changed_trust(request: RunRequest) -> None:
    """A project trusted before whose files changed since asks again, even for a run of user
    agents only: its context files and skills would otherwise be left out without a word (or,
    were they loaded, be text nobody looked at)."""
    store = TrustStore()
    cwd = request.cwd.resolve()
    for folder in dict.fromkeys((cwd, repository_root(cwd))):
        if store.record(folder) is not None and not store.is_trusted(folder):
            raise UntrustedProjectError(folder, project_files(folder))


def _own_loop_trust(request: RunRequest, agent: AgentDefinition, cwd: Path) -> str | None:
    """Baton's own loop loads only the project's ``.mcp.json`` servers, for an agent that asks
    for MCP; a folder that has some and is not trusted is asked about like a CLI's."""
    if not agent.uses_mcp or request.scope == "user":
        return None
    if request.trust_project or TrustStore().is_trusted(cwd):
        return checkout_programs.fingerprint(cwd)
    programs = checkout_programs.checkout_programs(cwd, "claude")
    if any(program.source == checkout_programs.CLAUDE_MCP for program in programs):
        raise UntrustedProjectError(cwd, project_files(cwd))
    return None


def _checkout_trust(
    request: RunRequest, backend: str, cwd: Path, agent: AgentDefinition
) -> str | None:
    """The trusted fingerprint of what the step's CLI would load from ``cwd`` (None: load
    nothing); refuses a folder whose CLI settings name programs nobody trusted.

    "Run without project agents" (``scope="user"``) runs without them instead of asking."""
    if backend not in ("claude", "pi"):
        return _own_loop_trust(request, agent, cwd)
    cli: checkout_programs.CheckoutBackend = "claude" if backend == "claude" else "pi"
    if request.scope == "user":
        return None
    if request.trust_project or TrustStore().is_trusted(cwd):
        return checkout_programs.fingerprint(cwd)
    if checkout_programs.checkout_programs(cwd, cli):
        raise UntrustedProjectError(cwd, project_files(cwd))
    return None


def project_trusted(request: RunRequest, cwd: Path, root: Path) -> bool:
    """Whether a step in ``cwd`` may read the project's context files and skills: trusted for
    this run (``--trust-project``) or in the trust store — the step's folder, the run's
    (``root``, resolved), or the repository's top — and not a run without project files
    (``scope="user"``). Fingerprints are computed once per preparation (:func:`one_look`)."""
    if request.scope == "user":
        return False
    if request.trust_project:
        return True
    return TrustStore().is_trusted_any((cwd, root, repository_root(cwd)))


def _preset(request: RunRequest, presets: PresetCatalog | None) -> Preset | None:
    if request.preset is None:
        return None
    presets = presets or discover_presets(request.cwd, request.scope)
    return presets.get(request.preset)
