"""File operations behind New / Duplicate: names, locations, templates.

Qt-free so the rules are easy to read and test. Where things go:

* user scope: ``<config>/agents/`` (Baton's own user folder; ``~/.pi/agent/agents`` belongs
  to pi, Baton reads it but does not create files there);
* project scope: the project's highest-precedence agent folder that already exists, else
  ``<working folder>/.baton/agents/`` (Baton's own; it does not surprise other tools that
  read ``.claude/agents``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from core.config import paths
from core.definitions.agents import PROJECT_AGENT_DIRS, find_project_root

_NAME = re.compile(r"^[\w][\w .-]{0,63}$")
_FRONT_NAME = re.compile(r"^name\s*:.*$", re.MULTILINE)

TEMPLATE = """---
name: {name}
description: {description}
tools: read, grep, find, ls
# model: claude-sonnet-4-5     # optional; absent or "inherit" = the run's default model
---
You are {article} {name} agent. Describe here, in the second person, what this agent is for,
how it should work, and exactly what its final answer must contain: the next agent in a chain
receives only that answer.

## Output
- ...
"""


def user_agents_dir() -> Path:
    return paths.config_dir() / "agents"


def project_agents_dir(working_folder: Path) -> Path:
    root = find_project_root(working_folder)
    if root is not None:
        for sub in reversed(PROJECT_AGENT_DIRS):
            if (root / sub).is_dir():
                return root / sub
    return Path(working_folder) / ".baton" / "agents"


def name_problem(name: str, taken: Iterable[str] = ()) -> str | None:
    """Why ``name`` cannot be a new agent's name, or None when it can."""
    name = name.strip()
    if not name:
        return "Enter a name."
    if not _NAME.match(name):
        return "Use letters, digits, spaces, '-', '_' or '.' (up to 64 characters)."
    if name.casefold() in {t.casefold() for t in taken}:
        return f"An agent named “{name}” already exists here."
    return None


def file_stem(name: str) -> str:
    """The file name (without ``.md``) for an agent name: ``Code Reviewer`` → ``code-reviewer``."""
    stem = re.sub(r"[^\w.-]+", "-", name.strip().casefold()).strip("-.")
    return stem or "agent"


def unique_path(folder: Path, stem: str) -> Path:
    candidate = folder / f"{stem}.md"
    counter = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{counter}.md"
        counter += 1
    return candidate


def template(name: str, description: str = "") -> str:
    description = description.strip() or "What this agent does, in one line"
    if ": " in description or description.startswith(("*", "'", '"', "&", "!", "[", "{")):
        description = '"' + description.replace("\\", "\\\\").replace('"', '\\"') + '"'
    article = "an" if name[:1].casefold() in "aeiou" else "a"
    return TEMPLATE.format(name=name, description=description, article=article)


def with_name(text: str, new_name: str) -> str:
    """``text`` with its frontmatter ``name:`` replaced (or added) — for Duplicate."""
    lines = text.split("\n")
    if lines and lines[0].strip().removeprefix("\ufeff") == "---":
        for index in range(1, len(lines)):
            stripped = lines[index].strip()
            if stripped in ("---", "..."):
                break
            if _FRONT_NAME.match(lines[index]):
                newline = "\r" if lines[index].endswith("\r") else ""
                lines[index] = f"name: {new_name}{newline}"
                return "\n".join(lines)
        lines.insert(1, f"name: {new_name}")
        return "\n".join(lines)
    return f"---\nname: {new_name}\ndescription: Copy of {new_name}\n---\n{text}"


def copy_name(name: str, folder: Path, taken: Iterable[str]) -> str:
    """``name-copy``, ``name-copy-2``, ... : free both as a name and as a file in ``folder``."""
    taken_keys = {t.casefold() for t in taken}
    candidate = f"{name}-copy"
    counter = 2
    while candidate.casefold() in taken_keys or (folder / f"{file_stem(candidate)}.md").exists():
        candidate = f"{name}-copy-{counter}"
        counter += 1
    return candidate
