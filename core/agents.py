"""Agent definitions: Markdown files with YAML frontmatter, found in user and project folders.

The format and rules are DESIGN §2. Three things shape this module:

* Files are written by hand and often slightly broken. A bad file never stops the others: it
  becomes a :class:`Diagnostic` (path, line, reason). Strict YAML that fails is re-read
  leniently (top-level ``key: value`` lines) and, if that yields a name and a description, the
  agent loads *with a warning* so the user can fix it in the editor.
* Agent folders also hold READMEs and notes: a Markdown file without frontmatter is reported
  quietly (``info``), not as an error.
* Precedence, lowest first: built-in (``resources/agents``), user (``~/.pi/agent/agents``, then
  ``<config>/agents``), project (``.claude/agents``, ``.pi/agents``, ``.baton/agents`` of the
  nearest ancestor holding any of them). A later definition overrides an earlier one with the
  same name (names compare case-insensitively) and records what it shadows.

Definitions are re-read at every launch (the GUI watches the folders), so edits apply at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from core import paths
from core.resources import builtin_dir
from core.validation import format_validation_error

MAX_AGENT_FILE_BYTES = 1_000_000

Source = Literal["builtin", "user", "project"]
Scope = Literal["user", "project", "both"]
Severity = Literal["error", "warning", "info"]
BackendName = Literal["openai", "pi", "claude"]

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

#: libyaml's safe loader (about 10x faster) where PyYAML was built with it.
FAST_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Project agent folders, lowest precedence first.
PROJECT_AGENT_DIRS: tuple[str, ...] = (".claude/agents", ".pi/agents", ".baton/agents")


class Diagnostic(BaseModel):
    """Something wrong (or worth knowing) about one file."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int | None = None
    message: str
    severity: Severity = "error"


class ParamSpec(BaseModel):
    """One typed input of an agent (``params:``, a Baton extension), shown as a form field and
    substituted into tasks as ``{name}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["enum", "string", "number", "integer", "boolean"] = "string"
    values: list[str] | None = None
    default: str | float | int | bool | None = None
    description: str = ""

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
    system_prompt: str = ""
    source: Source = "user"
    path: str | None = None
    overrides: str | None = None
    """Path of the definition this one shadows, if any."""
    warnings: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    """Secret-looking environment variables its tools may still see (``env: [GITHUB_TOKEN]``)."""
    network: bool = True
    """False for ``sandbox: {network: false}``: sandboxed bash gets no network."""

    @property
    def key(self) -> str:
        return self.name.casefold()

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


def _map_tools(declared: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """Map declared names to Baton's; unknown names are kept and reported."""
    mapped: list[str] = []
    unknown: list[str] = []
    for name in declared:
        lowered = name.casefold()
        baton = lowered if lowered in BATON_TOOLS else CLAUDE_TOOL_NAMES.get(lowered)
        if baton is None:
            unknown.append(name)
            baton = name
        if baton not in mapped:
            mapped.append(baton)
    return tuple(mapped), unknown


def _yaml_error_line(error: yaml.YAMLError) -> int | None:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    return None if mark is None else mark.line + 2  # +1 for 1-based, +1 for the '---' line


def parse_agent_text(
    text: str, *, path: str | None = None, source: Source = "user"
) -> AgentDefinition:
    """Parse the text of an agent file (BOM and CRLF tolerated).

    Raises :class:`AgentFileError` when the text is not a loadable agent. Problems that still
    allow loading (lenient YAML, unknown tools) become ``warnings`` on the definition.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    front, body, _ = split_frontmatter(text)
    warnings: list[str] = []
    try:
        data = yaml.load(front, Loader=FAST_SAFE_LOADER) if front.strip() else {}
    except yaml.YAMLError as error:
        data = _lenient_frontmatter(front)
        line = _yaml_error_line(error)
        where = f" at line {line}" if line else ""
        reason = getattr(error, "problem", None) or str(error).split("\n")[0]
        if not (data.get("name") and data.get("description")):
            raise AgentFileError(f"frontmatter is not valid YAML{where}: {reason}", line) from None
        warnings.append(
            f"frontmatter is not valid YAML{where} ({reason}); read it line by line instead. "
            "Quote values that contain ': ' or start with '*'."
        )
    if not isinstance(data, dict):
        raise AgentFileError("frontmatter must be a set of 'key: value' lines", 2)

    for required in ("name", "description"):
        value = data.get(required)
        if value is None or not str(value).strip():
            raise AgentFileError(f"missing required field '{required}'", 1)

    declared: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    if data.get("tools") not in (None, "", []):
        declared = tuple(_tool_list(data["tools"]))
        tools, unknown = _map_tools(list(declared))
        if unknown:
            warnings.append(f"unknown tools kept as written: {', '.join(unknown)}")

    model = data.get("model")
    model_text = str(model).strip() if model is not None else ""
    try:
        return AgentDefinition(
            name=str(data["name"]).strip(),
            description=str(data["description"]).strip(),
            tools=tools,
            declared_tools=declared,
            model=None if model_text in ("", "inherit") else model_text,
            backend=data.get("backend") or None,
            params=data.get("params") or {},
            system_prompt=body.strip("\n"),
            source=source,
            path=path,
            warnings=tuple(warnings),
            **_confinement(data),
        )
    except ValidationError as error:
        raise AgentFileError(format_validation_error(error), 1) from None


def load_agent_file(path: Path, source: Source) -> AgentDefinition:
    """Read and parse one file; raises :class:`AgentFileError` with the reason."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise AgentFileError(f"cannot read: {error.strerror or error}") from None
    if size > MAX_AGENT_FILE_BYTES:
        raise AgentFileError(f"file is {size:,} bytes; agent files over 1 MB are refused")
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise AgentFileError(f"cannot read: {error.strerror or error}") from None
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
    home = Path.home().resolve()
    current = cwd.resolve()
    for folder in (current, *current.parents):
        if folder == home:
            continue
        if any((folder / marker).is_dir() for marker in markers):
            return folder
    return None


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


def discover_agents(cwd: Path | None = None, scope: Scope = "both") -> AgentCatalog:
    """Find and parse every agent visible from ``cwd`` in ``scope``."""
    folders, root = agent_folders(Path.cwd() if cwd is None else Path(cwd), scope)
    catalog = AgentCatalog(folders=folders, project_root=root)
    effective: dict[str, AgentDefinition] = {}
    for folder in folders:
        seen_here: set[str] = set()
        for file in list_definition_files(folder.path, "*.md", catalog.diagnostics):
            try:
                agent = load_agent_file(file, folder.source)
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
            for warning in agent.warnings:
                catalog.diagnostics.append(
                    Diagnostic(path=str(file), message=warning, severity="warning")
                )
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
