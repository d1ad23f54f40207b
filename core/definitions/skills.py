"""Agent Skills: folders holding a ``SKILL.md`` (YAML frontmatter ``name`` and ``description``,
then instructions), discovered the way Claude Code and pi find them (architecture: "File
formats").

A skill is offered by *progressive disclosure*: only its name and description go into the
system prompt; the model reads ``SKILL.md`` and the files beside it on demand through the
``read`` tool, which may open files inside an offered skill's folder even when it lies outside
the working folder (read-only, nothing else widened).

Where skills come from, later overriding earlier by name: the user's ``<config>/skills`` and
``~/.claude/skills``, then — only when the caller says the project is trusted, since a
checkout's skill is instructions a hostile repository wrote — the project's ``.claude/skills``
and ``.pi/skills``. A broken ``SKILL.md`` never hides the others: it becomes a diagnostic with
its file and line.

The convention's rules kept here: ``name`` is lowercase letters, digits and hyphens (at most
64 characters) and should match its folder; ``description`` is required (at most 1,024
characters).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.config import paths
from core.config.looks import read_file
from core.definitions.agents import AgentFileError, Diagnostic, Severity, split_frontmatter
from core.definitions.definition_yaml import DefinitionYAMLError, key_line, load_definition_yaml

SKILL_FILE = "SKILL.md"
PROJECT_SKILL_DIRS: tuple[str, ...] = (".claude/skills", ".pi/skills")
MAX_SKILL_FILE_BYTES = 1_000_000
MAX_NAME = 64
MAX_DESCRIPTION = 1024
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    """The skill's folder, resolved: what ``read`` may open inside."""
    source: str
    """``user`` or ``project``."""

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass
class SkillCatalog:
    skills: dict[str, Skill] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name.casefold())

    def chosen(self, names: Iterable[str]) -> tuple[list[Skill], list[str]]:
        """The skills named (in the order named) and the names that match none."""
        found: list[Skill] = []
        missing: list[str] = []
        for name in names:
            skill = self.get(name)
            if skill is None:
                missing.append(name)
            elif skill not in found:
                found.append(skill)
        return found, missing


def user_skill_dirs() -> list[Path]:
    return [paths.config_dir() / "skills", Path.home() / ".claude" / "skills"]


def skill_dirs(project: Path | None) -> list[tuple[Path, str]]:
    """Where skills are looked for, earliest first; the project's only when ``project`` is
    given (the caller passes it only for a trusted project)."""
    found = [(folder, "user") for folder in user_skill_dirs()]
    if project is not None:
        found += [(project / sub, "project") for sub in PROJECT_SKILL_DIRS]
    return found


def discover_skills(project: Path | None) -> SkillCatalog:
    """Every skill visible; ``project`` None for an untrusted (or no) project."""
    catalog = SkillCatalog()
    for folder, source in skill_dirs(project):
        if not folder.is_dir():
            continue
        try:
            children = sorted(folder.iterdir())
        except OSError:
            continue
        for child in children:
            file = child / SKILL_FILE
            if not child.is_dir() or not file.is_file():
                continue
            skill = load_skill(file, source, catalog.diagnostics)
            if skill is None:
                continue
            refusal = _refusal(skill, project)
            if refusal:
                catalog.diagnostics.append(Diagnostic(path=str(file), line=None, message=refusal))
                continue
            catalog.skills[skill.name.casefold()] = skill
    return catalog


def _refusal(skill: Skill, project: Path | None) -> str | None:
    """Why a skill's folder may not be offered: ``read`` will open anything inside it, so it
    must not be (or hold) Baton's own folders, and a project's skill must stay in the
    project (a symlinked skill folder pointing at ``~/.ssh`` is refused)."""
    folder = skill.folder
    own_skills = (paths.config_dir() / "skills").resolve()
    for protected in paths.protected_dirs():
        inside = folder.is_relative_to(protected) and not folder.is_relative_to(own_skills)
        if inside or protected.is_relative_to(folder):
            return "the skill's folder is (or holds) one of Baton's own folders; not loaded"
    outside = project is not None and not folder.is_relative_to(project.resolve())
    if skill.source == "project" and outside:
        return "the skill's folder leads out of the project (a symlink); not loaded"
    return None


def load_skill(file: Path, source: str, diagnostics: list[Diagnostic]) -> Skill | None:
    """The skill in ``file``, or None with the reason added to ``diagnostics``."""

    def problem(message: str, line: int | None = 1, severity: Severity = "error") -> None:
        diagnostics.append(
            Diagnostic(path=str(file), line=line, message=message, severity=severity)
        )

    try:
        raw = read_file(file, MAX_SKILL_FILE_BYTES + 1).data  # once per look: trust hashed it
        if len(raw) > MAX_SKILL_FILE_BYTES:
            problem(f"larger than {MAX_SKILL_FILE_BYTES:,} bytes; not loaded")
            return None
        text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
        folder = file.parent.resolve(strict=True)
    except OSError as error:
        problem(f"cannot read it: {error.strerror or error}")
        return None
    try:
        front, _body, _first = split_frontmatter(text)
    except AgentFileError as error:
        problem(str(error).replace("an agent file", "a skill file"), error.line)
        return None
    try:
        data = load_definition_yaml(front)
    except DefinitionYAMLError as error:
        problem(f"invalid YAML: {error.reason}", (error.line or 0) + 1)
        return None
    if not isinstance(data, dict):
        problem("the frontmatter must be 'key: value' lines")
        return None
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not name.strip():
        problem("'name' is required")
        return None
    name = name.strip()
    name_line = (key_line(front, "name") or 0) + 1
    if len(name) > MAX_NAME or not _NAME.match(name):
        problem(
            f"'name: {name}' must be lowercase letters, digits and hyphens "
            f"(at most {MAX_NAME} characters)",
            name_line,
        )
        return None
    if not isinstance(description, str) or not description.strip():
        problem("'description' is required (it tells the model when to use the skill)")
        return None
    if len(description) > MAX_DESCRIPTION:
        problem(
            f"'description' is longer than {MAX_DESCRIPTION} characters; only the start is used",
            (key_line(front, "description") or 0) + 1,
            "warning",
        )
        description = description[:MAX_DESCRIPTION]
    if name != file.parent.name:
        problem(f"'name: {name}' differs from its folder '{file.parent.name}'", name_line, "info")
    return Skill(name, " ".join(description.split()), folder, source)


def skills_prompt(skills: list[Skill]) -> str:
    """The system prompt section offering ``skills``: name, description and where the
    ``SKILL.md`` is, in the ``<available_skills>`` shape the convention suggests."""
    if not skills:
        return ""
    lines = [
        "# Skills",
        "",
        "These skills hold instructions for particular tasks. When a task matches a skill's "
        "description, read its SKILL.md with the read tool first, then any file it points to "
        "(paths inside the skill's folder are relative to it).",
        "",
        "<available_skills>",
    ]
    for skill in skills:
        lines += [
            "  <skill>",
            f"    <name>{skill.name}</name>",
            f"    <description>{_xml(skill.description)}</description>",
            f"    <location>{_xml(str(skill.file))}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines) + "\n"


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
