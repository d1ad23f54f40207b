"""Presets: named, reusable runs (``*.yaml``; DESIGN §2).

Discovery mirrors agents: built-in (``resources/presets``), then ``<config>/presets``, then the
project's ``.baton/presets``; a later preset overrides an earlier one of the same name. A broken
preset file becomes a diagnostic, never an exception.

Expansion turns a preset plus the user's arguments into concrete step tasks: ``$1``, ``$2`` …
are positional arguments, ``$@`` and ``$ARGUMENTS`` all of them joined by spaces. ``{previous}``
is left in place here; the runner fills it in chain mode with the previous step's final output.
Typed agent parameters (``params:``) are substituted as ``{name}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core import paths
from core.agents import (
    FAST_SAFE_LOADER,
    AgentCatalog,
    Diagnostic,
    Source,
    find_project_root,
    list_definition_files,
)
from core.events import RunMode
from core.resources import builtin_dir
from core.validation import format_validation_error

MAX_PARALLEL_TASKS = 8
PROJECT_PRESET_DIR = ".baton/presets"


class PresetStep(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str = Field(min_length=1)
    task: str
    cwd: str | None = None
    model: str | None = None


class Preset(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str = Field(min_length=1)
    description: str = ""
    argument_hint: str = Field(default="", alias="argument-hint")
    mode: RunMode = "chain"
    steps: list[PresetStep] = Field(min_length=1)
    source: Source = "user"
    path: str | None = None

    @model_validator(mode="after")
    def _mode_fits_steps(self) -> Preset:
        if self.mode == "single" and len(self.steps) != 1:
            raise ValueError(f"mode 'single' takes exactly one step, not {len(self.steps)}")
        if self.mode == "parallel" and len(self.steps) > MAX_PARALLEL_TASKS:
            raise ValueError(f"parallel runs take at most {MAX_PARALLEL_TASKS} tasks")
        return self

    @property
    def key(self) -> str:
        return self.name.casefold()


class PresetError(ValueError):
    """A preset that cannot run as asked; the message names the preset and step."""


def parse_preset_text(text: str, *, path: str | None = None, source: Source = "user") -> Preset:
    """Parse preset YAML; raises :class:`PresetError` with a readable reason."""
    try:
        data = yaml.load(text.removeprefix("\ufeff"), Loader=FAST_SAFE_LOADER)
    except yaml.YAMLError as error:
        raise PresetError(f"not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise PresetError("a preset is a set of 'key: value' lines (name, mode, steps)")
    try:
        return Preset.model_validate({**data, "source": source, "path": path})
    except ValidationError as error:
        raise PresetError(format_validation_error(error)) from None


@dataclass
class PresetCatalog:
    presets: list[Preset] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def get(self, name: str) -> Preset | None:
        wanted = name.casefold()
        return next((p for p in self.presets if p.key == wanted), None)

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


def discover_presets(cwd: Path | None = None, scope: str = "both") -> PresetCatalog:
    catalog = PresetCatalog()
    found: dict[str, Preset] = {}
    for folder, source in preset_folders(Path.cwd() if cwd is None else cwd, scope):
        files = list_definition_files(folder, "*.yaml", catalog.diagnostics)
        files += list_definition_files(folder, "*.yml", catalog.diagnostics)
        for file in files:
            try:
                preset = parse_preset_text(
                    file.read_text(encoding="utf-8"), path=str(file), source=source
                )
            except (PresetError, OSError, UnicodeDecodeError) as error:
                catalog.diagnostics.append(Diagnostic(path=str(file), message=str(error)))
                continue
            found[preset.key] = preset
    catalog.presets = sorted(found.values(), key=lambda p: p.key)
    return catalog


# --------------------------------------------------------------------------------------------
# Expansion

_POSITIONAL = re.compile(r"\$(\d+)")
_PARAM = re.compile(r"\{([A-Za-z_][\w-]*)\}")


def expand_arguments(template: str, args: list[str]) -> str:
    """Substitute ``$@``, ``$ARGUMENTS`` and ``$1``… (missing positions become empty)."""
    joined = " ".join(args)
    text = template.replace("$ARGUMENTS", joined).replace("$@", joined)

    def positional(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1
        return args[index] if 0 <= index < len(args) else ""

    return _POSITIONAL.sub(positional, text)


def required_argument_count(preset: Preset) -> int:
    """The highest ``$N`` any step uses (``$@`` needs at least one argument)."""
    highest = 0
    for step in preset.steps:
        numbers = [int(n) for n in _POSITIONAL.findall(step.task)]
        highest = max([highest, *numbers])
        if "$@" in step.task or "$ARGUMENTS" in step.task:
            highest = max(highest, 1)
    return highest


def substitute_params(task: str, values: dict[str, Any]) -> str:
    """Replace ``{name}`` with parameter values; ``{previous}`` and unknown names stay."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "previous" or name not in values:
            return match.group(0)
        value = values[name]
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return _PARAM.sub(replace, task)


def substitute_previous(task: str, previous: str) -> str:
    return task.replace("{previous}", previous)


def check_agents(preset: Preset, agents: AgentCatalog) -> None:
    """Refuse, before anything runs, a preset naming an agent that does not exist."""
    for number, step in enumerate(preset.steps, start=1):
        if agents.get(step.agent) is None:
            raise PresetError(
                f"preset '{preset.name}', step {number}: unknown agent '{step.agent}' "
                f"(available: {', '.join(agents.names()) or 'none'})"
            )
