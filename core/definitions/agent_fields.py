"""Frontmatter fields beyond Baton's own: the pi-subagents format, and any field at all.

Agent files are shared between tools. Files written for the pi-subagents extension (the format
of many pi agent collections) carry fields of their own, and some give ``output`` another
meaning: ``output: research.md`` there means "also write the step's final answer to this
file". A file must keep meaning what its author meant, and a field Baton does not understand is
never a reason to drop an agent, so this module sorts every field into one of three kinds:

* **honoured** — Baton has the concept: ``output: <file name>`` (the answer is also written to
  that file in the step's working folder), ``thinking`` (the reasoning effort asked of the
  model), ``systemPromptMode`` (whether the body replaces a CLI's own system prompt or is
  appended to it), ``inheritProjectContext`` and Baton's own ``context`` (whether the step reads
  AGENTS.md / CLAUDE.md: a CLI, or Baton's loop), ``skills`` (the skills the agent may use,
  :mod:`core.definitions.skills`);
* **known but not used** — a note "not used by Baton" (``defaultReads``, ``defaultProgress``…);
* **unknown** — a note naming it, never an error.

``output`` keeps its structured-results meaning for the two forms that had it: ``review`` and
``{schema: …}``. Any other text is a file name (``false``, as in pi-subagents, means none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Literal

from core.definitions.structured import OutputSpec

Severity = Literal["error", "warning", "info"]
PromptMode = Literal["replace", "append"]

BATON_FIELDS = frozenset(
    {
        "name",
        "description",
        "tools",
        "model",
        "backend",
        "params",
        "output",
        "env",
        "sandbox",
        "mcp",
        "acp",
    }
)
"""Fields Baton's own format defines (read by :func:`core.definitions.agents.parse_agent_text`)."""

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")
"""pi-subagents' ``thinking`` values (pi's ``--thinking`` levels)."""

HONOURED_FIELDS = frozenset(
    {"thinking", "skills", "skill", "inheritProjectContext", "context", "systemPromptMode"}
)

NOT_USED_FIELDS: dict[str, str] = {
    "defaultReads": "files a pi-subagents chain step reads first",
    "defaultProgress": "pi-subagents' progress.md",
    "inheritSkills": "pi-subagents' skill inheritance",
    "interactive": "pi-subagents' interactive flag",
    "extensions": "pi extensions for the agent",
    "maxTurns": "a per-agent turn limit (Baton's limit is in Settings)",
    "maxRuntimeSeconds": "a per-agent time limit (Baton's limit is in Settings)",
    "color": "Claude Code's colour for the agent",
    "permissionMode": "Claude Code's permission mode (Baton asks through its approvals)",
    "mcpServers": "MCP servers",
    "hooks": "Claude Code hooks",
}
"""Fields of other agent formats that Baton reads but does not act on, and what they are."""


@dataclass(frozen=True)
class FieldNote:
    """Something to tell the person about one field: ``key`` locates its line."""

    key: str
    message: str
    severity: Severity = "info"


@dataclass
class ExtraFields:
    """What the fields beyond Baton's own say, ready for
    :class:`core.definitions.agents.AgentDefinition`."""

    output: OutputSpec | None = None
    output_file: str | None = None
    reasoning_effort: str | None = None
    skills: tuple[str, ...] = ()
    inherit_project_context: bool | None = None
    system_prompt_mode: PromptMode | None = None
    notes: list[FieldNote] = field(default_factory=list)

    def definition_fields(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "output_file": self.output_file,
            "reasoning_effort": self.reasoning_effort,
            "skills": self.skills,
            "inherit_project_context": self.inherit_project_context,
            "system_prompt_mode": self.system_prompt_mode,
        }


def read_extra_fields(data: dict[str, Any]) -> ExtraFields:
    """Read ``output`` and every field that is not Baton's own; never raises. A value Baton
    cannot use becomes a note (an ``error`` only where running the agent anyway would do
    something its author did not ask for, like writing outside the working folder)."""
    extra = ExtraFields()
    _read_output(data.get("output"), extra)
    _read_thinking(data.get("thinking"), extra)
    _read_skills(data, extra)
    _read_project_context("inheritProjectContext", data.get("inheritProjectContext"), extra)
    _read_project_context("context", data.get("context"), extra)
    _read_prompt_mode(data.get("systemPromptMode"), extra)
    for key in data:
        if not isinstance(key, str) or key in BATON_FIELDS or key in HONOURED_FIELDS:
            continue
        what = NOT_USED_FIELDS.get(key)
        message = (
            f"'{key}' ({what}) is not used by Baton"
            if what
            else f"'{key}' is not a field Baton knows; it is not used"
        )
        extra.notes.append(FieldNote(key, message))
    return extra


def output_file_problem(name: str) -> str | None:
    """Why ``name`` cannot be the file a step's answer is written to, or None. The file lives
    in the step's working folder: an absolute path or ``..`` would let an agent file (or a
    hostile checkout) choose where Baton writes."""
    if not name.strip():
        return "'output' is empty"
    if "\x00" in name:
        return "'output' holds a NUL character"
    posix, windows = PurePosixPath(name), PureWindowsPath(name)
    if posix.is_absolute() or windows.is_absolute() or windows.drive:
        return f"'output: {name}' is an absolute path; name a file in the working folder"
    if ".." in posix.parts or ".." in windows.parts:
        return f"'output: {name}' leaves the working folder ('..')"
    if name.endswith(("/", "\\")):
        return f"'output: {name}' names a folder, not a file"
    return None


def _read_output(value: Any, extra: ExtraFields) -> None:
    if value is None or value is False:
        return
    if value == "review" or isinstance(value, dict):
        try:
            extra.output = OutputSpec.parse(value)
        except ValueError as error:
            extra.notes.append(FieldNote("output", str(error), "error"))
        return
    if isinstance(value, str):
        problem = output_file_problem(value.strip())
        if problem is None:
            extra.output_file = value.strip()
        else:
            extra.notes.append(FieldNote("output", problem, "error"))
        return
    extra.notes.append(
        FieldNote(
            "output",
            "output must be a file name (the answer is also written there), 'review', or "
            "{schema: <a JSON Schema object>}",
            "error",
        )
    )


def _read_thinking(value: Any, extra: ExtraFields) -> None:
    if value is None:
        return
    level = str(value).strip().casefold()
    if level not in THINKING_LEVELS:
        extra.notes.append(
            FieldNote(
                "thinking",
                f"'thinking: {value}' is not one of {', '.join(THINKING_LEVELS)}; not used",
                "warning",
            )
        )
        return
    extra.reasoning_effort = level


def _read_skills(data: dict[str, Any], extra: ExtraFields) -> None:
    raw = data.get("skills", data.get("skill"))
    if raw is None or raw is False:
        return
    items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else None
    if items is None:
        extra.notes.append(FieldNote("skills", "'skills' must be a list of skill names", "warning"))
        return
    extra.skills = tuple(str(item).strip() for item in items if str(item).strip())


def _read_project_context(key: str, value: Any, extra: ExtraFields) -> None:
    """``inheritProjectContext`` (pi-subagents) or ``context`` (Baton): either false keeps
    AGENTS.md / CLAUDE.md out of the step."""
    if value is None:
        return
    text = str(value).strip().casefold()  # a lenient read leaves "true" as text
    if text not in ("true", "false"):
        extra.notes.append(FieldNote(key, f"'{key}' must be true or false", "warning"))
        return
    if extra.inherit_project_context is not False:
        extra.inherit_project_context = text == "true"


def _read_prompt_mode(value: Any, extra: ExtraFields) -> None:
    if value is None:
        return
    mode = str(value).strip().casefold()
    if mode == "replace":
        extra.system_prompt_mode = "replace"
        return
    if mode == "append":
        extra.system_prompt_mode = "append"
        return
    extra.notes.append(
        FieldNote(
            "systemPromptMode",
            f"'systemPromptMode: {value}' is not replace or append; not used",
            "warning",
        )
    )
