"""Presets: named, reusable runs (``*.yaml``; architecture: "File formats").

Discovery mirrors agents: built-in (``resources/presets``), then ``<config>/presets``, then the
project's ``.baton/presets``; a later preset overrides an earlier one of the same name. A broken
preset file becomes a diagnostic (path, line, reason), never an exception, and the catalog
remembers it under its name so ``baton run BROKEN`` can say what is wrong instead of "unknown".

Expansion (:func:`expand_template`) turns a step's task template into the task sent, in ONE
pass over the template: ``$1``, ``$2`` … are positional arguments, ``$@`` and ``$ARGUMENTS``
all of them joined by spaces, ``{name}`` a typed agent parameter (``params:``) and
``{previous}`` (chain mode) the previous step's final output. What is substituted is never
looked at again, so an argument, a parameter value or a model's answer that happens to contain
``{previous}`` or ``$1`` arrives as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.config import paths
from core.config.looks import read_file
from core.config.resources import builtin_dir
from core.config.validation import format_validation_error
from core.definitions.agents import (
    AgentCatalog,
    Diagnostic,
    Source,
    find_project_root,
    list_definition_files,
)
from core.definitions.cache import ParseCache
from core.definitions.definition_yaml import DefinitionYAMLError, key_line, load_definition_yaml
from core.definitions.graph_form import (
    GraphFormError,
    LoopSpec,
    PresetStep,
    check_graph,
    check_graph_fields_unused,
    flatten_graph_steps,
    structured_condition_problems,
)
from core.model.budget import Budget
from core.model.events import Isolation, RunMode

MAX_PARALLEL_TASKS = 8
PROJECT_PRESET_DIR = ".baton/presets"


class Preset(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str = Field(min_length=1)
    description: str = ""
    argument_hint: str = Field(default="", alias="argument-hint")
    mode: RunMode = "chain"
    steps: list[PresetStep] = Field(min_length=1)
    """Every step; in a graph, loop members too (each says its ``loop``), in file order."""
    loops: list[LoopSpec] = Field(default_factory=list)
    """A graph's loop groups (:mod:`core.definitions.graph_form`)."""
    budget: Budget | None = None
    """Caps for every run of this preset (``budget: {run: {max_cost: 0.5}}``)."""
    isolation: Isolation = "none"
    """``worktree``: each run works in its own git worktree (:mod:`core.workspace.worktrees`)."""
    source: Source = "user"
    path: str | None = None

    @model_validator(mode="after")
    def _mode_fits_steps(self) -> Preset:
        if self.mode == "single" and len(self.steps) != 1:
            raise ValueError(f"mode 'single' takes exactly one step, not {len(self.steps)}")
        if self.mode == "parallel" and len(self.steps) > MAX_PARALLEL_TASKS:
            raise ValueError(f"parallel runs take at most {MAX_PARALLEL_TASKS} tasks")
        if self.mode != "graph":
            if self.loops:
                raise ValueError(f"loops belong to mode: graph, not mode: {self.mode}")
            check_graph_fields_unused(self.steps, self.mode)
        return self

    @property
    def key(self) -> str:
        return self.name.casefold()


class PresetError(ValueError):
    """A preset that cannot run as asked; the message names the preset and step. ``line`` is
    the 1-based line of the file it concerns, where known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


MAX_PRESET_FILE_BYTES = 1_000_000


def parse_preset_text(text: str, *, path: str | None = None, source: Source = "user") -> Preset:
    """Parse preset YAML; raises :class:`PresetError` with a readable reason and its line."""
    text = text.removeprefix("\ufeff")
    try:
        data = load_definition_yaml(text)
    except DefinitionYAMLError as error:
        where = f" at line {error.line}" if error.line else ""
        raise PresetError(f"not valid YAML{where}: {error.reason}", error.line) from None
    if not isinstance(data, dict):
        raise PresetError("a preset is a set of 'key: value' lines (name, mode, steps)", 1)
    if "loops" in data:
        raise PresetError(
            "loops are written as items of steps: (- loop: …)", key_line(text, "loops")
        )
    try:
        if data.get("mode") == "graph":
            data = flatten_graph_steps(data)
        preset = Preset.model_validate({**data, "source": source, "path": path})
        if preset.mode == "graph":
            check_graph(preset.steps, preset.loops, text)
    except GraphFormError as error:
        raise PresetError(str(error), error.line or key_line(text, "steps"), error.column) from None
    except ValidationError as error:
        errors = error.errors()
        field_name = str(errors[0]["loc"][0]) if errors and errors[0]["loc"] else "steps"
        line = key_line(text, field_name) or key_line(text, "steps")
        raise PresetError(format_validation_error(error), line) from None
    return preset


def read_preset_file(path: Path, source: Source, cache: ParseCache[Preset] | None = None) -> Preset:
    """Read and parse one preset file; :class:`PresetError` says why it cannot be used
    (too big, binary, not UTF-8, bad YAML, bad shape). A ``cache`` answers for an unchanged
    file."""
    if cache is not None:
        return cache.get(path, source, partial(read_preset_file, source=source))
    try:
        raw = read_file(path, MAX_PRESET_FILE_BYTES + 1).data  # once per look: trust hashed it
        if len(raw) > MAX_PRESET_FILE_BYTES:
            raise PresetError("the file is over 1 MB; preset files are small text files")
    except OSError as error:
        raise PresetError(f"cannot read: {error.strerror or error}") from None
    if b"\0" in raw:
        line = raw[: raw.index(b"\0")].count(b"\n") + 1
        raise PresetError("a binary file, not YAML text", line)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PresetError("not UTF-8 text", raw[: error.start].count(b"\n") + 1) from None
    return parse_preset_text(text, path=str(path), source=source)


_NAME_FIELD = re.compile(r"^name\s*:\s*['\"]?([^'\"#\n]+?)['\"]?\s*(?:#.*)?$", re.MULTILINE)


def _names_of_broken(path: Path) -> set[str]:
    """The names a person would use for a file that does not parse: its stem and, when a
    ``name:`` line can be made out, that name (casefolded)."""
    names = {path.stem.casefold()}
    try:
        head = path.read_bytes()[:MAX_PRESET_FILE_BYTES].decode("utf-8", "replace")
    except OSError:
        return names
    match = _NAME_FIELD.search(head)
    if match:
        names.add(match.group(1).strip().casefold())
    return names


@dataclass
class PresetCatalog:
    presets: list[Preset] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    broken: dict[str, Diagnostic] = field(default_factory=dict)
    """Why a file that does not load cannot run, by the names a person would call it."""

    def get(self, name: str) -> Preset | None:
        wanted = name.casefold()
        return next((p for p in self.presets if p.key == wanted), None)

    def problem_for(self, name: str) -> Diagnostic | None:
        """The error that keeps a preset of this name from loading, if one does."""
        return self.broken.get(name.casefold())

    @property
    def project_presets(self) -> list[Preset]:
        return [p for p in self.presets if p.source == "project"]


def preset_folders(cwd: Path, scope: str = "both") -> list[tuple[Path, Source]]:
    folders: list[tuple[Path, Source]] = [(builtin_dir("presets"), "builtin")]
    if scope in ("user", "both"):
        folders.append((paths.config_dir() / "presets", "user"))
    if scope in ("project", "both"):
        root = find_project_root(cwd, (PROJECT_PRESET_DIR,))
        if root is not None:
            folders.append((root / PROJECT_PRESET_DIR, "project"))
    return [(folder, source) for folder, source in folders if folder.is_dir()]


def preset_files(folder: Path, diagnostics: list[Diagnostic]) -> list[Path]:
    """The ``*.yaml`` and ``*.yml`` files directly in ``folder``."""
    files = list_definition_files(folder, "*.yaml", diagnostics)
    return sorted(files + list_definition_files(folder, "*.yml", diagnostics))


def discover_presets(
    cwd: Path | None = None, scope: str = "both", cache: ParseCache[Preset] | None = None
) -> PresetCatalog:
    """Find and parse every preset visible from ``cwd`` in ``scope``; with a ``cache``, only
    files changed since the last discovery are parsed again."""
    catalog = PresetCatalog()
    found: dict[str, Preset] = {}
    for folder, source in preset_folders(Path.cwd() if cwd is None else cwd, scope):
        for file in preset_files(folder, catalog.diagnostics):
            try:
                preset = read_preset_file(file, source, cache)
            except PresetError as error:
                problem = Diagnostic(path=str(file), line=error.line, message=str(error))
                catalog.diagnostics.append(problem)
                for name in _names_of_broken(file):
                    # A broken override hides what it overrides: running the lower preset
                    # instead would silently not be what the person wrote.
                    catalog.broken[name] = problem
                    found.pop(name, None)
                continue
            found[preset.key] = preset
            catalog.broken.pop(preset.key, None)
    catalog.presets = sorted(found.values(), key=lambda p: p.key)
    return catalog


def agent_line(text: str, agent: str, occurrence: int = 1) -> int | None:
    """The 1-based line of the ``occurrence``-th ``agent: <agent>`` in ``text``."""
    pattern = re.compile(rf"agent\s*:\s*['\"]?{re.escape(agent)}['\"]?\s*[,}}\n#]?", re.I)
    seen = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if pattern.search(line):
            seen += 1
            if seen == occurrence:
                return number
    return None


def step_agent_problems(preset: Preset, agents: AgentCatalog) -> list[tuple[int, str, str]]:
    """``(step number, agent name, reason)`` for each step whose agent cannot run: unknown,
    or its file has an error. Such a preset loads but is refused by the runner."""
    problems = []
    for number, step in enumerate(preset.steps, start=1):
        agent = agents.get(step.agent)
        if agent is None:
            available = ", ".join(agents.names()) or "none"
            reason = f"step {number}: unknown agent '{step.agent}' (available: {available})"
        elif agent.error is not None:
            reason = f"step {number}: agent '{agent.name}' cannot run ({agent.error.message})"
        else:
            continue
        problems.append((number, step.agent, reason))
    return problems


def agent_diagnostics(catalog: PresetCatalog, agents: AgentCatalog) -> list[Diagnostic]:
    """An error per step of an effective preset whose agent cannot run (see
    :func:`step_agent_problems`), at the line naming the agent."""
    diagnostics: list[Diagnostic] = []
    for preset in catalog.presets:
        for _owner, message in graph_output_problems(preset, agents):
            diagnostics.append(
                Diagnostic(path=preset.path or preset.name, line=None, message=message)
            )
        problems = step_agent_problems(preset, agents)
        if not problems:
            continue
        try:
            text = Path(preset.path).read_text(encoding="utf-8") if preset.path else ""
        except (OSError, UnicodeDecodeError):
            text = ""
        for number, agent, reason in problems:
            occurrence = [s.agent for s in preset.steps[:number]].count(agent)
            diagnostics.append(
                Diagnostic(
                    path=preset.path or preset.name,
                    line=agent_line(text, agent, occurrence),
                    message=reason,
                )
            )
    return diagnostics


# --------------------------------------------------------------------------------------------
# Expansion

_POSITIONAL = re.compile(r"\$(\d+)")
_PLACEHOLDER = re.compile(r"\$ARGUMENTS|\$@|\$(\d+)|\{([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)?)\}")


def _param_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def expand_template(
    template: str,
    *,
    args: list[str] | tuple[str, ...] | None = None,
    params: Mapping[str, Any] | None = None,
    previous: str | None = None,
    handed: Mapping[str, str] | None = None,
) -> str:
    """Fill a task template in one pass (see the module docstring).

    ``args`` None leaves ``$…`` as written (ad-hoc tasks are not templates for arguments);
    missing positions become empty. ``previous`` None leaves ``{previous}`` in place (it has
    no value yet, or never will outside a chain). ``handed`` holds a graph step's other
    hand-offs by name (``outputs``, ``step.NAME``). Unknown ``{names}`` stay as written.
    """
    joined = " ".join(args) if args is not None else ""
    values = params or {}

    def replace(match: re.Match[str]) -> str:
        whole, number, name = match.group(0), match.group(1), match.group(2)
        if name is not None:
            if name == "previous":
                return whole if previous is None else previous
            if handed is not None and name in handed:
                return handed[name]
            return _param_text(values[name]) if name in values else whole
        if args is None:
            return whole
        if number is None:
            return joined
        index = int(number) - 1
        return args[index] if 0 <= index < len(args) else ""

    return _PLACEHOLDER.sub(replace, template)


def required_argument_count(preset: Preset) -> int:
    """The highest ``$N`` any step uses (``$@`` needs at least one argument)."""
    highest = 0
    for step in preset.steps:
        numbers = [int(n) for n in _POSITIONAL.findall(step.task)]
        highest = max([highest, *numbers])
        if "$@" in step.task or "$ARGUMENTS" in step.task:
            highest = max(highest, 1)
    return highest


def check_agents(preset: Preset, agents: AgentCatalog) -> None:
    """Refuse, before anything runs, a preset naming an agent that does not exist, or a
    graph condition reading a structured result its step's agent never gives."""
    for number, step in enumerate(preset.steps, start=1):
        if agents.get(step.agent) is None:
            raise PresetError(
                f"preset '{preset.name}', step {number}: unknown agent '{step.agent}' "
                f"(available: {', '.join(agents.names()) or 'none'})"
            )
    for _name, message in graph_output_problems(preset, agents):
        raise PresetError(f"preset '{preset.name}': {message}")


def graph_output_problems(preset: Preset, agents: AgentCatalog) -> list[tuple[str, str]]:
    """``(step or loop name, message)`` for each graph condition that reads a structured
    result of a step whose agent declares no ``output:`` (it could never be true)."""
    if preset.mode != "graph":
        return []
    has_output = {}
    for step in preset.steps:
        agent = agents.get(step.agent)
        if agent is not None:
            has_output[step.agent.casefold()] = agent.output is not None
    return structured_condition_problems(preset.steps, preset.loops, has_output)
