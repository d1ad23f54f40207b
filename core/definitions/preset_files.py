"""Preset files behind the Presets view: where they go, how they start, how they are checked.

Qt-free, so the rules are easy to read and test:

* New and duplicated presets go to ``<config>/presets/`` (Baton's user folder). A duplicate of
  a built-in keeps its name when the user has no preset of that name yet — that is how a user
  replaces a built-in, exactly as with agents.
* :func:`validate_preset_text` is the editor's live check: the YAML itself (with the line of a
  syntax error), the preset schema (``core.definitions.presets``), then warnings for steps naming
  agents
  that do not exist and for ``{previous}`` where it can never have a value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from core.config import paths
from core.definitions.agents import AgentCatalog
from core.definitions.checks import Problem
from core.definitions.definition_yaml import DefinitionYAMLError, load_definition_yaml
from core.definitions.graph_form import dependencies
from core.definitions.presets import (
    PresetError,
    agent_line,
    graph_output_problems,
    parse_preset_text,
)

TEMPLATE = """name: {name}
description: What this preset does, in one line
argument-hint: "<what to do>"
mode: chain            # single | parallel | chain
steps:
  - agent: scout
    task: "Find all code relevant to: $@"
  - agent: planner
    task: "Create a plan for \\"$@\\" using this context:\\n\\n{{previous}}"
"""

_NAME_LINE = re.compile(r"^name\s*:.*$", re.MULTILINE)
_SAFE_NAME = re.compile(r"^[\w][\w .-]{0,63}$")


def user_presets_dir() -> Path:
    return paths.config_dir() / "presets"


def name_problem(name: str, taken: Iterable[str] = ()) -> str | None:
    """Why ``name`` cannot be a new preset's name, or None when it can."""
    name = name.strip()
    if not name:
        return "Enter a name."
    if not _SAFE_NAME.match(name):
        return "Use letters, digits, spaces, '-', '_' or '.' (up to 64 characters)."
    if name.casefold() in {t.casefold() for t in taken}:
        return f"You already have a preset named “{name}”."
    return None


def file_stem(name: str) -> str:
    stem = re.sub(r"[^\w.-]+", "-", name.strip().casefold()).strip("-.")
    return stem or "preset"


def unique_path(folder: Path, stem: str) -> Path:
    candidate = folder / f"{stem}.yaml"
    counter = 2
    while candidate.exists() or candidate.with_suffix(".yml").exists():
        candidate = folder / f"{stem}-{counter}.yaml"
        counter += 1
    return candidate


def template(name: str) -> str:
    return TEMPLATE.format(name=_yaml_scalar(name))


def with_name(text: str, new_name: str) -> str:
    """``text`` with its top-level ``name:`` replaced (or added at the top)."""
    line = f"name: {_yaml_scalar(new_name)}"
    if _NAME_LINE.search(text):
        return _NAME_LINE.sub(lambda _m: line, text, count=1)
    return f"{line}\n{text}"


def copy_name(name: str, taken: Iterable[str]) -> str:
    keys = {t.casefold() for t in taken}
    candidate = f"{name}-copy"
    counter = 2
    while candidate.casefold() in keys:
        candidate = f"{name}-copy-{counter}"
        counter += 1
    return candidate


def _yaml_scalar(value: str) -> str:
    """``value`` as a YAML scalar: plain when that is safe, else JSON-quoted (valid YAML)."""
    plain = re.fullmatch(r"[A-Za-z0-9_][\w .-]*", value) and not value.endswith(" ")
    return value if plain else json.dumps(value, ensure_ascii=False)


def validate_preset_text(text: str, agents: AgentCatalog) -> list[Problem]:
    """Errors that stop ``text`` loading as a preset, and warnings about a preset that loads
    but will not run as written."""
    try:
        load_definition_yaml(text.removeprefix("\ufeff"))
    except DefinitionYAMLError as error:
        return [Problem(f"Not valid YAML: {error.reason}", error.line)]
    try:
        preset = parse_preset_text(text)
    except PresetError as error:
        message = str(error)
        return [Problem(message[:1].upper() + message[1:], error.line)]
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    deps = dependencies(preset.steps, preset.loops) if preset.mode == "graph" else {}
    for owner, message in graph_output_problems(preset, agents):
        line = next(
            (n for n, row in enumerate(text.split("\n"), 1) if re.search(rf"\b{owner}\b", row)),
            None,
        )
        problems.append(Problem(message[:1].upper() + message[1:], line))
    for number, step in enumerate(preset.steps, start=1):
        seen[step.agent] = seen.get(step.agent, 0) + 1
        line = agent_line(text, step.agent, seen[step.agent])
        if agents.get(step.agent) is None:
            available = ", ".join(agents.names()) or "none"
            problems.append(
                Problem(
                    f"Step {number}: unknown agent '{step.agent}' (available: {available})",
                    line,
                    "warning",
                )
            )
        if preset.mode == "graph":
            if "{previous}" in step.task and not deps.get(step.name or "") and step.loop is None:
                problems.append(
                    Problem(
                        f"Step '{step.name}': {{previous}} has no value: nothing runs before it",
                        line,
                        "warning",
                    )
                )
            continue
        if "{previous}" in step.task and (preset.mode != "chain" or number == 1):
            where = "the first step" if preset.mode == "chain" else f"a {preset.mode} run"
            problems.append(
                Problem(
                    f"Step {number}: {{previous}} has no value in {where}; "
                    "it only means the previous step's answer in a chain",
                    line,
                    "warning",
                )
            )
    return problems
