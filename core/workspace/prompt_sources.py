"""What Baton's own loop may put in a step's system prompt from the checkout, read once.

A trusted project's ``AGENTS.md`` / ``CLAUDE.md`` files (from the repository's top down to the
step's folder) and its skills steer the model, so a run remembers how they read when it was
prepared (:func:`prompt_fingerprint`) and each step's start compares. The start builds the
prompt from the very reading it compared (:func:`read_prompt_sources`), never from a second
one: between a check and a later load, a step of another item of the batch (or anything else
writing in the checkout) could rewrite ``AGENTS.md``, and its text would reach a prompt as
trusted.

The fingerprint covers what the prompt holds — the context section as loaded (capped, links out
of the project skipped), and each project skill's name, description and place — and, for the
skills' bodies, which a model reads on demand through the ``read`` tool, the bytes of the
project's skill files (:func:`~core.definitions.project_context.skill_files`; what a model reads
later in the step is read then, as any file is).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from core.config.looks import looked_once, one_look
from core.definitions.agents import find_project_root
from core.definitions.project_context import file_digest, skill_files
from core.definitions.skills import PROJECT_SKILL_DIRS, SkillCatalog, discover_skills
from core.workspace.context_files import ProjectContext, load_project_context


@dataclass(frozen=True)
class PromptSources:
    """The checkout's part of a step's prompt, as one reading found it."""

    context: ProjectContext
    skills: SkillCatalog
    """The skills visible to a step of the trusted project (the user's and the project's)."""
    fingerprint: str
    """SHA-256 over all of the above that came from the checkout (the user's skills are the
    user's), and the bytes of the project's skill files."""


def read_prompt_sources(cwd: Path) -> PromptSources:
    """Read the context files and skills a step in ``cwd`` may be given; the caller has
    checked trust. One look (:func:`~core.config.looks.one_look`): a skill's file parsed
    and hashed is read once."""
    with one_look():
        return _read_prompt_sources(cwd)


def _read_prompt_sources(cwd: Path) -> PromptSources:
    context = load_project_context(cwd)
    project = find_project_root(cwd, PROJECT_SKILL_DIRS)
    skills = discover_skills(project)
    digest = hashlib.sha256()
    for part in (context.prompt(), *context.cut, "\0", *context.skipped, "\0"):
        digest.update(part.encode() + b"\0")
    for skill in skills.skills.values():
        if skill.source == "project":
            digest.update(f"{skill.name}\0{skill.description}\0{skill.folder}\0".encode())
    digest.update(file_digest(skill_files(project or cwd)).encode())
    return PromptSources(context, skills, digest.hexdigest())


def prompt_fingerprint(cwd: Path) -> str:
    """:attr:`PromptSources.fingerprint` as it is now: taken when a run is prepared, once per
    :func:`~core.config.looks.one_look`. Only what the loop could put in a prompt: a step
    rewriting a context file below its folder (which a CLI may load, and is compared for a
    CLI's step) leaves the loop's next prompt as trusted, and searching every folder below
    again at each step's start cost a batch in a trusted 2,000-folder project 25–55 ms a step."""
    return looked_once("prompt", cwd, lambda folder: read_prompt_sources(folder).fingerprint)
