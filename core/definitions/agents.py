"""Agent definitions: Markdown files with YAML frontmatter, found in user and project folders.

The format and rules are in the architecture ("File formats"). Three things shape this module:

* Files are written by hand and often slightly broken. A bad file never stops the others: it
  becomes a :class:`Diagnostic` (path, line, reason). Strict YAML that fails is re-read
  leniently (top-level ``key: value`` lines) and, if that yields a name and a description, the
  agent loads *with a warning* so the user can fix it in the editor — unless what the lenient
  reading cannot understand decides how the agent runs (``tools: [read, ls`` would silently
  drop tools, ``params:`` would vanish, an alias bomb): then the agent is listed with an
  *error* and refused by the runner (:attr:`AgentDefinition.error`).
* YAML goes through :func:`core.definitions.definition_yaml.load_definition_yaml`, which refuses
  aliases
  that expand without bound, so one hostile file cannot hang discovery for every agent.
* Agent folders also hold READMEs and notes: a Markdown file without frontmatter is reported
  quietly (``info``), not as an error.
* Precedence, lowest first: built-in (``resources/agents``), user (``~/.pi/agent/agents``, then
  ``<config>/agents``), project (``.claude/agents``, ``.pi/agents``, ``.baton/agents`` of the
  nearest ancestor holding any of them). A later definition overrides an earlier one with the
  same name (names compare case-insensitively) and records what it shadows.

Definitions are re-read at every launch (the GUI watches the folders), so edits apply at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from core.config import paths
from core.config.acp_agents import AcpCommand, parse_acp_field
from core.config.looks import read_file
from core.config.resources import builtin_dir
from core.config.validation import format_validation_error
from core.definitions.agent_fields import PromptMode, read_extra_fields
from core.definitions.cache import ParseCache
from core.definitions.definition_yaml import DefinitionYAMLError, key_line, load_definition_yaml
from core.definitions.structured import OutputSpec

MAX_AGENT_FILE_BYTES = 1_000_000

Source = Literal["builtin", "user", "project"]
Scope = Literal["user", "project", "both"]
Severity = Literal["error", "warning", "info"]
BackendName = Literal["openai", "pi", "claude", "acp"]

#: Baton's own tools. ``tools:`` absent means every one of them.
BATON_TOOLS: tuple[str, ...] = ("read", "grep", "find", "ls", "bash", "edit", "write", "document")

#: Claude Code tool names (lower-cased) and what they are called in Baton.
CLAUDE_TOOL_NAMES: dict[str, str] = {
    "read": "read",
    "glob": "find",
    "bash": "bash",
    "edit": "edit",
    "multiedit": "edit",
    "write": "write",
    "grep": "grep",
    "ls": "ls",
}

#: How Claude Code names MCP tools in ``tools:`` (``mcp__github__create_issue``).
MCP_PREFIX = "mcp__"

#: Project agent folders, lowest precedence first.
PROJECT_AGENT_DIRS: tuple[str, ...] = (".claude/agents", ".pi/agents", ".baton/agents")


class Diagnostic(BaseModel):
    """Something wrong (or worth knowing) about one file."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int | None = None
    message: str
    severity: Severity = "error"

    @property
    def location(self) -> str:
        """``path:line`` (or the path alone), the way editors and terminals link it."""
        return f"{self.path}:{self.line}" if self.line else self.path


class ParamSpec(BaseModel):
    """One typed input of an agent (``params:``, a Baton extension), shown as a form field and
    substituted into tasks as ``{name}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["enum", "string", "number", "integer", "boolean"] = "string"
    values: list[str] | None = None
    default: str | float | int | bool | None = None
    description: str = ""
    min: float | None = None
    """Smallest allowed value of a ``number`` or ``integer``."""
    max: float | None = None
    """Largest allowed value of a ``number`` or ``integer``."""

    @field_validator("values")
    @classmethod
    def _values_are_text(cls, values: list[Any] | None) -> list[str] | None:
        return None if values is None else [str(v) for v in values]

    @model_validator(mode="after")
    def _enum_is_complete(self) -> ParamSpec:
        if self.type == "enum" and not self.values:
            raise ValueError("an enum parameter needs a non-empty 'values' list")
        if (
            self.type == "enum"
            and self.default is not None
            and str(self.default) not in (self.values or [])
        ):
            raise ValueError(f"default {self.default!r} is not one of {self.values}")
        if (self.min is not None or self.max is not None) and self.type not in (
            "number",
            "integer",
        ):
            raise ValueError("'min' and 'max' apply to number and integer parameters only")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"'min' ({self.min:g}) is greater than 'max' ({self.max:g})")
        return self


class AgentDefinition(BaseModel):
    """A parsed agent file. ``system_prompt`` is the Markdown body after the frontmatter."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    tools: tuple[str, ...] | None = None
    """Baton tool names (Claude Code names mapped); ``None`` means every default tool."""
    declared_tools: tuple[str, ...] | None = None
    """The tool names exactly as the file wrote them (passed through to CLI backends)."""
    model: str | None = None
    backend: BackendName | None = None
    params: dict[str, ParamSpec] = Field(default_factory=dict)
    output: OutputSpec | None = None
    """A declared result shape (``output: review`` or a JSON Schema), validated per step."""
    output_file: str | None = None
    """``output: <file name>`` (the pi-subagents meaning): the step's final answer is also
    written to this file, relative to the step's working folder."""
    reasoning_effort: str | None = None
    """``thinking:`` — how hard the model is asked to reason (pi's levels, ``off``…``xhigh``)."""
    skills: tuple[str, ...] = ()
    """``skills:`` — the skills (:mod:`core.definitions.skills`) Baton's loop offers the agent."""
    inherit_project_context: bool | None = None
    """``context:`` / ``inheritProjectContext:`` — False keeps AGENTS.md / CLAUDE.md out of the
    step (Baton's loop, or a CLI); None: the default, loaded for a trusted project."""
    system_prompt_mode: PromptMode | None = None
    """``systemPromptMode:`` — ``replace`` gives a CLI the body as its whole system prompt;
    ``append`` (and None) adds it to the CLI's own."""
    system_prompt: str = ""
    source: Source = "user"
    path: str | None = None
    overrides: str | None = None
    """Path of the definition this one shadows, if any."""
    problems: tuple[Diagnostic, ...] = ()
    """What is wrong with the file although it loaded: warnings, and errors that make it
    unrunnable (see :attr:`error`)."""
    env: tuple[str, ...] = ()
    """Secret-looking environment variables its tools may still see (``env: [GITHUB_TOKEN]``)."""
    network: bool = True
    """False for ``sandbox: {network: false}``: sandboxed bash gets no network."""
    mcp: tuple[str, ...] = ()
    """``mcp: [github]`` — MCP servers whose tools the own loop offers (none by default)."""

    @property
    def mcp_tools(self) -> tuple[str, ...]:
        """The MCP tools named in ``tools:`` (``mcp__server__tool``, Claude Code's names)."""
        return tuple(t for t in self.tools or () if t.startswith(MCP_PREFIX))

    @property
    def uses_mcp(self) -> bool:
        return bool(self.mcp or self.mcp_tools)

    acp: AcpCommand | None = None
    """``acp:`` — the ACP agent a ``backend: acp`` step starts (:mod:`core.config.acp_agents`)."""

    @property
    def key(self) -> str:
        return self.name.casefold()

    @property
    def error(self) -> Diagnostic | None:
        """The first error-level problem: the agent is listed but must not run."""
        return next((p for p in self.problems if p.severity == "error"), None)

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """The Baton tools this agent may use (unknown names dropped)."""
        if self.tools is None:
            return BATON_TOOLS
        return tuple(t for t in self.tools if t in BATON_TOOLS)


class AgentFileError(ValueError):
    """A file that is not a loadable agent; ``line`` is 1-based where known."""

    def __init__(self, message: str, line: int | None = None, severity: Severity = "error"):
        super().__init__(message)
        self.line = line
        self.severity: Severity = severity


# --------------------------------------------------------------------------------------------
# Parsing


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """Return ``(frontmatter, body, body_first_line)`` of normalised text.

    Raises :class:`AgentFileError` (``info``) when there is no frontmatter at all.
    """
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise AgentFileError("not an agent file (no frontmatter)", 1, "info")
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            front = "\n".join(lines[1:index])
            body = "\n".join(lines[index + 1 :])
            return front, body, index + 2
    raise AgentFileError("frontmatter is not closed: add a line '---' after it", 1)


_LENIENT_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s?(.*)$")


def _lenient_frontmatter(front: str) -> dict[str, Any]:
    """Read top-level ``key: value`` lines as plain strings, the way a person reads them."""
    data: dict[str, Any] = {}
    for line in front.split("\n"):
        match = _LENIENT_LINE.match(line)
        if match:
            value = match.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            data[match.group(1)] = value
    return data


def _tool_list(raw: Any) -> list[str]:
    if isinstance(raw, str):
        return [part.strip() for part in raw.split(",") if part.strip()]
    if isinstance(raw, list):
        return [str(part).strip() for part in raw if str(part).strip()]
    raise AgentFileError(f"'tools' must be a list or a comma-separated string, not {raw!r}", 1)


def _confinement(data: dict[str, Any]) -> dict[str, Any]:
    """``env:`` and ``sandbox: {network: false}``: what the agent's tool processes may reach."""
    env = data.get("env") or []
    env = [env] if isinstance(env, str) else env
    if not isinstance(env, list) or not all(isinstance(name, str) for name in env):
        raise AgentFileError("'env' must be a list of variable names, like [GITHUB_TOKEN]", 1)
    sandbox = data.get("sandbox")
    sandbox = {} if sandbox is None else sandbox  # `sandbox: off` is an error, not a default
    network = sandbox.get("network", True) if isinstance(sandbox, dict) else None
    if not isinstance(network, bool):
        raise AgentFileError("'sandbox' must look like {network: false}", 1)
    return {"env": tuple(name.strip() for name in env if name.strip()), "network": network}


def _mcp_servers(raw: Any) -> tuple[str, ...]:
    """``mcp: [github, postgres]`` (or one comma-separated string)."""
    if raw in (None, False, "", []):
        return ()
    if isinstance(raw, str):
        raw = raw.split(",")
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise AgentFileError("'mcp' must be a list of MCP server names", 1)
    return tuple(dict.fromkeys(item.strip() for item in raw if item.strip()))


def _map_tools(declared: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """Map declared names to Baton's; unknown names are kept and reported."""
    mapped: list[str] = []
    unknown: list[str] = []
    for name in declared:
        lowered = name.casefold()
        baton = lowered if lowered in BATON_TOOLS else CLAUDE_TOOL_NAMES.get(lowered)
        if baton is None and name.startswith(MCP_PREFIX):
            baton = name  # an MCP tool, offered by the own loop when its server runs
        elif baton is None:
            unknown.append(name)
            baton = name
        if baton not in mapped:
            mapped.append(baton)
    return tuple(mapped), unknown


#: Fields whose value decides what the agent may do: read leniently they would be dropped or
#: misread (a flow list cut short, a nested ``params:`` block, an alias).
_RUN_SHAPING_FIELDS = (
    "tools",
    "params",
    "backend",
    "model",
    "env",
    "sandbox",
    "output",
    "mcp",
    "acp",
)


def _misread_field(data: dict[str, Any]) -> str | None:
    """The run-shaping field the lenient reading could not have understood, if any."""
    for key in _RUN_SHAPING_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        if value == "" or value[0] in "[{&*|>!":
            return key
    return None


def _lenient_read(
    front: str, error: DefinitionYAMLError, path: str
) -> tuple[dict[str, Any], Diagnostic]:
    """Fall back to ``key: value`` lines after strict YAML failed; the diagnostic says how
    bad that is (a warning, or an error that keeps the agent from running)."""
    data = _lenient_frontmatter(front)
    line = None if error.line is None else error.line + 1  # + the opening '---' line
    where = f" at line {line}" if line else ""
    if not (data.get("name") and data.get("description")):
        raise AgentFileError(f"frontmatter is not valid YAML{where}: {error.reason}", line)
    misread = _misread_field(data)
    if misread is not None:
        line = _key_line(front, misread) or line
        where = f" at line {line}" if line else ""
        message = (
            f"frontmatter is not valid YAML{where} ({error.reason}); '{misread}' cannot be "
            "read, so this agent will not run until the file is fixed"
        )
        return data, Diagnostic(path=path, line=line, message=message, severity="error")
    message = (
        f"frontmatter is not valid YAML{where} ({error.reason}); read it line by line instead. "
        "Quote values that contain ': ' or start with '*'."
    )
    return data, Diagnostic(path=path, line=line, message=message, severity="warning")


def parse_agent_text(
    text: str, *, path: str | None = None, source: Source = "user"
) -> AgentDefinition:
    """Parse the text of an agent file (BOM and CRLF tolerated).

    Raises :class:`AgentFileError` when the text is not a loadable agent. Problems that still
    allow listing it (lenient YAML, unknown tools) become :attr:`AgentDefinition.problems`.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    front, body, _ = split_frontmatter(text)
    problems: list[Diagnostic] = []
    try:
        data = load_definition_yaml(front) if front.strip() else {}
    except DefinitionYAMLError as error:
        data, problem = _lenient_read(front, error, path or "")
        problems.append(problem)
    misread = bool(problems) and problems[0].severity == "error"
    if not isinstance(data, dict):
        raise AgentFileError("frontmatter must be a set of 'key: value' lines", 2)

    for required in ("name", "description"):
        value = data.get(required)
        if value is None or not str(value).strip():
            raise AgentFileError(f"missing required field '{required}'", 1)

    declared: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    if data.get("tools") not in (None, "", []) and not misread:
        declared = tuple(_tool_list(data["tools"]))
        tools, unknown = _map_tools(list(declared))
        if unknown:
            problems.append(
                Diagnostic(
                    path=path or "",
                    line=_key_line(front, "tools"),
                    message=f"unknown tools kept as written: {', '.join(unknown)}",
                    severity="warning",
                )
            )

    extra = read_extra_fields({} if misread else data)
    problems += [
        Diagnostic(
            path=path or "",
            line=_key_line(front, note.key),
            message=note.message,
            severity=note.severity,
        )
        for note in extra.notes
    ]
    acp = None if misread else _acp_command(data.get("acp"), front)
    backend = None if misread else (data.get("backend") or ("acp" if acp else None))
    model = data.get("model")
    model_text = str(model).strip() if model is not None else ""
    try:
        return AgentDefinition(
            name=str(data["name"]).strip(),
            description=str(data["description"]).strip(),
            tools=tools,
            declared_tools=declared,
            model=None if model_text in ("", "inherit") or misread else model_text,
            backend=backend,
            acp=acp,
            params={} if misread else (data.get("params") or {}),
            **extra.definition_fields(),
            system_prompt=body.strip("\n"),
            source=source,
            path=path,
            problems=tuple(problems),
            **_confinement({} if misread else data),
            mcp=() if misread else _mcp_servers(data.get("mcp")),
        )
    except ValidationError as error:
        raise AgentFileError(
            format_validation_error(error), _key_line(front, _first_field(error)) or 1
        ) from None


def _acp_command(value: Any, front: str) -> AcpCommand | None:
    """``acp:`` read (``None`` when absent); a value that names no runnable agent is an error
    on its line."""
    if value is None:
        return None
    try:
        return parse_acp_field(value)
    except ValueError as error:
        raise AgentFileError(str(error), _key_line(front, "acp") or 1) from None


def _key_line(front: str, key: str | None) -> int | None:
    """The file line of top-level ``key:`` (the opening ``---`` is line 1)."""
    line = key_line(front, key)
    return None if line is None else line + 1


def _first_field(error: ValidationError) -> str | None:
    errors = error.errors()
    loc = errors[0]["loc"] if errors else ()
    return str(loc[0]) if loc else None


def load_agent_file(path: Path, source: Source) -> AgentDefinition:
    """Read and parse one file; raises :class:`AgentFileError` with the reason."""
    try:
        raw = read_file(path, MAX_AGENT_FILE_BYTES + 1).data  # once per look: trust hashed it
    except OSError as error:
        raise AgentFileError(f"cannot read: {error.strerror or error}") from None
    if len(raw) > MAX_AGENT_FILE_BYTES:
        raise AgentFileError("the file is over 1 MB; agent files are small text files")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise AgentFileError("not UTF-8 text", line) from None
    return parse_agent_text(text, path=str(path), source=source)


# --------------------------------------------------------------------------------------------
# Discovery


@dataclass(frozen=True)
class AgentFolder:
    path: Path
    source: Source


@dataclass
class AgentCatalog:
    """The outcome of one discovery: effective agents, what they shadow, and diagnostics."""

    agents: list[AgentDefinition] = field(default_factory=list)
    shadowed: list[AgentDefinition] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    folders: list[AgentFolder] = field(default_factory=list)
    project_root: Path | None = None

    def get(self, name: str) -> AgentDefinition | None:
        wanted = name.casefold()
        return next((a for a in self.agents if a.key == wanted), None)

    def names(self) -> list[str]:
        return [a.name for a in self.agents]

    @property
    def project_agents(self) -> list[AgentDefinition]:
        return [a for a in self.agents if a.source == "project"]


def find_project_root(cwd: Path, markers: Iterable[str] = PROJECT_AGENT_DIRS) -> Path | None:
    """The nearest folder, from ``cwd`` upwards, holding one of ``markers``.

    The home folder itself is never a project: ``~/.claude/agents`` and ``~/.pi`` are the
    user's own configuration, not a project's.
    """
    markers = tuple(markers)
    home = os.path.realpath(Path.home())
    folder = os.path.realpath(cwd)
    while True:  # on strings: asked at every step's start, pathlib's objects were most of it
        if folder != home and any(os.path.isdir(os.path.join(folder, m)) for m in markers):
            return Path(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def agent_folders(cwd: Path, scope: Scope) -> tuple[list[AgentFolder], Path | None]:
    """Folders to read, lowest precedence first, and the project root if one was found."""
    folders = [AgentFolder(builtin_dir("agents"), "builtin")]
    if scope in ("user", "both"):
        folders.append(AgentFolder(paths.pi_agent_dir() / "agents", "user"))
        folders.append(AgentFolder(paths.config_dir() / "agents", "user"))
    root = None
    if scope in ("project", "both"):
        root = find_project_root(cwd)
        if root is not None:
            folders.extend(AgentFolder(root / sub, "project") for sub in PROJECT_AGENT_DIRS)
    return [f for f in folders if f.path.is_dir()], root


def list_definition_files(folder: Path, pattern: str, diagnostics: list[Diagnostic]) -> list[Path]:
    """Files matching ``pattern`` directly in ``folder`` (no recursion), sorted.

    Symlinks are followed; loops and dangling links become diagnostics instead of errors.
    """
    found: list[Path] = []
    try:
        entries = sorted(folder.glob(pattern))
    except OSError as error:
        diagnostics.append(Diagnostic(path=str(folder), message=f"cannot list: {error}"))
        return found
    for entry in entries:
        if entry.is_symlink():
            try:
                target = entry.resolve(strict=True)
            except RuntimeError:
                diagnostics.append(Diagnostic(path=str(entry), message="symlink loop"))
                continue
            except OSError:
                diagnostics.append(
                    Diagnostic(path=str(entry), message="dangling symlink (target is missing)")
                )
                continue
            if not target.is_file():
                continue
        elif not entry.is_file():
            continue
        found.append(entry)
    return found


def discover_agents(
    cwd: Path | None = None,
    scope: Scope = "both",
    cache: ParseCache[AgentDefinition] | None = None,
) -> AgentCatalog:
    """Find and parse every agent visible from ``cwd`` in ``scope``.

    With a ``cache`` (the GUI keeps one), only files changed since the last discovery are
    parsed again.
    """
    folders, root = agent_folders(Path.cwd() if cwd is None else Path(cwd), scope)
    catalog = AgentCatalog(folders=folders, project_root=root)
    effective: dict[str, AgentDefinition] = {}
    for folder in folders:
        seen_here: set[str] = set()
        for file in list_definition_files(folder.path, "*.md", catalog.diagnostics):
            try:
                agent = (
                    load_agent_file(file, folder.source)
                    if cache is None
                    else cache.get(
                        file, folder.source, partial(load_agent_file, source=folder.source)
                    )
                )
            except AgentFileError as error:
                catalog.diagnostics.append(
                    Diagnostic(
                        path=str(file),
                        line=error.line,
                        message=str(error),
                        severity=error.severity,
                    )
                )
                continue
            catalog.diagnostics.extend(agent.problems)
            if agent.key in seen_here:
                catalog.diagnostics.append(
                    Diagnostic(
                        path=str(file),
                        message=f"another file in this folder already defines '{agent.name}'; "
                        "this one is ignored",
                        severity="warning",
                    )
                )
                continue
            seen_here.add(agent.key)
            previous = effective.get(agent.key)
            if previous is not None:
                catalog.shadowed.append(previous)
                agent = agent.model_copy(update={"overrides": previous.path})
            effective[agent.key] = agent
    order = {"project": 0, "user": 1, "builtin": 2}
    catalog.agents = sorted(effective.values(), key=lambda a: (order[a.source], a.key))
    return catalog
