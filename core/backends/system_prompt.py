"""The system prompt of a step on Baton's own loop: the agent's body, its output instructions,
the project's context files and the skills it may use (architecture: "Backends").

Context and skills come from the checkout, so both wait for trust
(:attr:`~core.backends.base.StepContext.project_trusted`); the user's own skills need none.
What was added is reported in one :class:`~core.model.events.ContextLoaded` event, so the step
header can say what the step was told and what it cost. An agent turns the context off with
``context: false`` (or pi-subagents' ``inheritProjectContext: false``); it gets skills only by
naming them in ``skills:``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.backends.base import StepContext
from core.definitions.skills import Skill, discover_skills, skills_prompt
from core.model.events import ContextLoaded, Log
from core.workspace.context_files import estimate_tokens
from core.workspace.prompt_sources import PromptSources


@dataclass
class SystemPrompt:
    text: str
    loaded: ContextLoaded | None = None
    """None when nothing beyond the agent's own prompt was added."""
    notes: list[Log] = field(default_factory=list)
    skill_folders: tuple[Path, ...] = ()


def build_system_prompt(ctx: StepContext) -> SystemPrompt:
    spec = ctx.agent.output
    text = ctx.agent.system_prompt + (spec.instructions() if spec else "")
    extra: list[str] = []
    files: list[str] = []
    cut: list[str] = []
    notes: list[Log] = []
    sources = ctx.trusted_prompt_sources()  # one reading of the files for the whole prompt
    if ctx.project_trusted and sources is None:
        notes.append(changed_context_note(ctx))
    if sources is not None and ctx.agent.inherit_project_context is not False:
        context = sources.context
        files = [file.shown for file in context.files]
        cut = list(context.cut)
        if context.files:
            extra.append(context.prompt())
        for skipped in context.skipped:
            notes.append(
                ctx.make(
                    Log,
                    level="warning",
                    message=f"{skipped} was not loaded: it is not a regular file inside the "
                    "project (a symlink out of it is never followed)",
                )
            )
    skills = _chosen_skills(ctx, notes, sources)
    if skills:
        extra.append(skills_prompt(skills))
    if not extra:
        return SystemPrompt(text, notes=notes)
    added = "\n\n".join(extra)
    text = f"{text.rstrip()}\n\n{added}" if text.strip() else added
    loaded = ctx.make(
        ContextLoaded,
        files=files,
        cut=cut,
        skills=[skill.name for skill in skills],
        tokens=estimate_tokens(added),
    )
    return SystemPrompt(text, loaded, notes, tuple(skill.folder for skill in skills))


def _chosen_skills(
    ctx: StepContext, notes: list[Log], sources: PromptSources | None
) -> list[Skill]:
    if not ctx.agent.skills:
        return []
    catalog = sources.skills if sources is not None else discover_skills(None)
    skills, missing = catalog.chosen(ctx.agent.skills)
    if missing:
        where = "" if sources is not None else " (the project's skills wait for trust)"
        notes.append(
            ctx.make(
                Log,
                level="warning",
                message=f"skill{'s' if len(missing) != 1 else ''} not found: "
                f"{', '.join(missing)}{where}",
            )
        )
    return skills


def changed_context_note(ctx: StepContext) -> Log:
    """The project was trusted, but its context files or skills changed since the run began
    (an earlier step wrote them): this step gets none of them, and says so."""
    return ctx.make(
        Log,
        level="warning",
        message="the project's context files or skills changed during the run (by an earlier "
        "step?): this step is given none of them; trust the project again to use them",
    )
