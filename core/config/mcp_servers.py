"""MCP server configuration: the user's ``<config>/mcp.json``, a project's ``.mcp.json``, and
which servers a project leaves off (architecture: "Tools, approvals and trust").

Both files use Claude Code's schema, so one written for Claude Code, Cursor or Codex works as
is::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                  "env": {"DEBUG": "1"}},
        "tracker": {"type": "http", "url": "https://mcp.example.com/mcp",
                    "headers": {"Authorization": "Bearer ${TRACKER_TOKEN}"}}}}

Baton reads three optional keys of its own per server (other programs ignore them):
``network`` (false cuts a sandboxed stdio server off the network), ``sandbox`` (false runs it
unconfined) and ``startupTimeout`` (seconds). Whatever else a file holds is kept when Baton
writes it back (atomically). A project's file only *describes* servers here; whether they may
start is the trust store's question (:mod:`core.safety.checkout_programs` lists them for it).

Per-project choices ("this server is off in that project") live in
``<config>/mcp_projects.json``, never in the checkout: a project cannot switch a user's
server on for itself.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.config import paths
from core.config.atomic import atomic_write_text
from core.config.looks import read_file

PROJECT_FILE = ".mcp.json"
USER_FILE = "mcp.json"
PROJECTS_FILE = "mcp_projects.json"
FILE_LIMIT = 1_000_000
"""Bytes read of one configuration file; a bigger one is reported, not read."""
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""Names that make a tool name ``mcp__<server>__<tool>`` readable and unambiguous."""
DEFAULT_STARTUP_TIMEOUT_S = 30.0

Transport = Literal["stdio", "http", "sse"]
Origin = Literal["user", "project"]


class McpServer(BaseModel):
    """One server, as Claude Code's ``mcpServers`` entries describe it."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    type: Transport = "stdio"
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    network: bool = True
    """Baton's own: a sandboxed stdio server keeps the network unless this is false."""
    sandbox: bool = True
    """Baton's own: false runs a stdio server outside the bash sandbox."""
    startup_timeout_s: float = Field(DEFAULT_STARTUP_TIMEOUT_S, alias="startupTimeout", gt=0)

    @property
    def transport(self) -> Transport:
        """``http`` for an entry with a URL and no type (Cursor writes them so)."""
        if self.type == "stdio" and not self.command and self.url:
            return "http"
        return self.type

    def describe(self) -> str:
        """The command line or URL, as the trust question and ``baton mcp list`` show it."""
        if self.transport == "stdio":
            return shlex.join([self.command, *self.args])
        return self.url

    def to_json(self) -> dict[str, Any]:
        """The entry as written back to a file (defaults left out, like the programs that
        wrote it)."""
        data: dict[str, Any] = {}
        if self.transport == "stdio":
            data["command"] = self.command
            if self.args:
                data["args"] = list(self.args)
            if self.env:
                data["env"] = dict(self.env)
            if self.cwd:
                data["cwd"] = self.cwd
        else:
            data["type"] = self.transport
            data["url"] = self.url
            if self.headers:
                data["headers"] = dict(self.headers)
        if not self.network:
            data["network"] = False
        if not self.sandbox:
            data["sandbox"] = False
        if self.startup_timeout_s != DEFAULT_STARTUP_TIMEOUT_S:
            data["startupTimeout"] = self.startup_timeout_s
        return data


@dataclass(frozen=True)
class ServerEntry:
    """A configured server with where it came from."""

    name: str
    server: McpServer
    origin: Origin
    source: Path


@dataclass
class ServerFile:
    """What one configuration file says: its servers and what could not be read."""

    path: Path
    servers: dict[str, McpServer] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def user_file() -> Path:
    return paths.config_dir() / USER_FILE


def project_file(root: Path) -> Path:
    return root / PROJECT_FILE


def read_server_file(path: Path) -> ServerFile:
    """The servers of ``path`` (none when it is absent); never raises: an entry that cannot be
    read is a problem naming it, and the others still load."""
    found = ServerFile(path)
    data = _read_json(path, found.problems)
    raw = data.get("mcpServers") if isinstance(data, dict) else None
    if data is not None and not isinstance(raw, dict):
        if raw is not None or not isinstance(data, dict):
            found.problems.append(f"{path}: 'mcpServers' must be an object")
        return found
    for name, spec in (raw or {}).items():
        if not SERVER_NAME.match(str(name)):
            found.problems.append(
                f"{path}: server name {name!r} must be letters, digits, '-' or '_' (at most 64)"
            )
            continue
        try:
            server = McpServer.model_validate(spec)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "entry"
            found.problems.append(f"{path}: server {name}: {where}: {first['msg']}")
            continue
        if server.transport == "stdio" and not server.command:
            found.problems.append(f"{path}: server {name} has neither a command nor a url")
            continue
        found.servers[str(name)] = server
    return found


def write_server(path: Path, name: str, server: McpServer) -> None:
    """Add or replace ``name`` in ``path``, keeping everything else the file holds."""
    if not SERVER_NAME.match(name):
        raise ValueError(f"server name {name!r} must be letters, digits, '-' or '_'")
    data = _editable(path)
    data.setdefault("mcpServers", {})[name] = server.to_json()
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def replace_servers(path: Path, servers: Mapping[str, McpServer]) -> None:
    """Make ``path`` hold exactly ``servers`` (Settings ▸ MCP saving), keeping its other keys;
    a file that does not exist and would stay empty is not created."""
    if not servers and not path.exists():
        return
    for name in servers:
        if not SERVER_NAME.match(name):
            raise ValueError(f"server name {name!r} must be letters, digits, '-' or '_'")
    data = _editable(path)
    data["mcpServers"] = {name: server.to_json() for name, server in servers.items()}
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def remove_server(path: Path, name: str) -> bool:
    """Remove ``name`` from ``path``; False when it was not there."""
    data = _editable(path)
    servers = data.get("mcpServers", {})
    if name not in servers:
        return False
    del servers[name]
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True


def configured_servers(root: Path | None, *, project_trusted: bool) -> list[ServerEntry]:
    """Every server that may run for a step in ``root``: the user's, then the project's (only
    once trusted; a project server of the same name wins, as in Claude Code), minus those the
    person switched off for this project."""
    entries: dict[str, ServerEntry] = {}
    user = read_server_file(user_file())
    for name, server in user.servers.items():
        entries[name] = ServerEntry(name, server, "user", user.path)
    if root is not None and project_trusted:
        project = read_server_file(project_file(root))
        for name, server in project.servers.items():
            entries[name] = ServerEntry(name, server, "project", project.path)
    off = disabled_in(root) if root is not None else set()
    return [entry for name, entry in entries.items() if name not in off]


def configuration_problems(root: Path | None, *, project_trusted: bool) -> list[str]:
    """What :func:`configured_servers` could not read (a step that uses MCP says so)."""
    problems = read_server_file(user_file()).problems
    if root is not None and project_trusted:
        problems += read_server_file(project_file(root)).problems
    return problems


# -- per-project switches ----------------------------------------------------------------------


def projects_file() -> Path:
    return paths.config_dir() / PROJECTS_FILE


def disabled_in(root: Path) -> set[str]:
    """The servers the person switched off for the project at ``root``."""
    data = _read_json(projects_file(), [])
    record = data.get(str(root.resolve())) if isinstance(data, dict) else None
    off = record.get("disabled") if isinstance(record, dict) else None
    return {str(name) for name in off} if isinstance(off, list) else set()


def set_enabled(root: Path, name: str, enabled: bool) -> None:
    """Switch ``name`` on or off for the project at ``root``."""
    path = projects_file()
    data = _read_json(path, [])
    data = data if isinstance(data, dict) else {}
    key = str(root.resolve())
    found = data.get(key)
    record: dict[str, Any] = found if isinstance(found, dict) else {}
    off = set(disabled_in(root))
    (off.discard if enabled else off.add)(name)
    record["disabled"] = sorted(off)
    data[key] = record
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


# -- importing other programs' configuration ---------------------------------------------------

ImportSource = Literal["claude", "cursor"]


def import_sources(kind: ImportSource, project: Path | None = None) -> list[Path]:
    """The files ``baton mcp import`` reads: Claude Code's ``~/.claude.json`` (its user and
    per-project servers) and the project's ``.mcp.json``; Cursor's ``~/.cursor/mcp.json``."""
    home = Path.home()
    if kind == "cursor":
        found = [home / ".cursor" / "mcp.json"]
        if project is not None:
            found.append(project / ".cursor" / "mcp.json")
        return found
    found = [home / ".claude.json"]
    if project is not None:
        found.append(project / PROJECT_FILE)
    return found


def servers_to_import(kind: ImportSource, project: Path | None = None) -> ServerFile:
    """Every server the other program's files configure (later files win by name)."""
    merged = ServerFile(Path("<import>"))
    for path in import_sources(kind, project):
        found = read_server_file(path)
        merged.servers.update(found.servers)
        merged.problems += found.problems
        if kind == "claude" and path.name == ".claude.json" and project is not None:
            merged.servers.update(_claude_project_servers(path, project, merged.problems))
    return merged


def _claude_project_servers(path: Path, project: Path, problems: list[str]) -> dict[str, McpServer]:
    """Claude Code keeps "local" servers under ``projects.<folder>.mcpServers``."""
    data = _read_json(path, problems)
    projects = data.get("projects") if isinstance(data, dict) else None
    record = projects.get(str(project.resolve())) if isinstance(projects, dict) else None
    raw = record.get("mcpServers") if isinstance(record, dict) else None
    servers: dict[str, McpServer] = {}
    for name, spec in (raw or {}).items() if isinstance(raw, dict) else ():
        try:
            servers[str(name)] = McpServer.model_validate(spec)
        except ValidationError:
            problems.append(f"{path}: project server {name} cannot be read")
    return servers


def configured_secret_values(projects: Iterable[Path] = ()) -> list[str]:
    """The literal secrets of the user's servers and of the ``.mcp.json`` of ``projects``:
    header values, environment values that are secrets by name or by look, credentials in a
    URL or an argument. Each is redacted from every output: what Baton sends to a server, and
    what a project's file holds in plain text (a model reading ``.mcp.json`` must not copy a
    token into a run file, and the trust question and ``baton mcp list`` must not show it)."""
    values: list[str] = []
    files = [user_file(), *(project_file(root) for root in dict.fromkeys(projects))]
    for path in files:
        for server in read_server_file(path).servers.values():
            values += server_secret_values(server)
    return values


def server_secret_values(server: McpServer) -> list[str]:
    """One server's literal secrets, as written and with ``${VAR}`` expanded."""
    values: list[str] = []
    found = [
        *server.headers.values(),
        *(v for k, v in server.env.items() if _SECRETISH.search(k) or looks_secret(v)),
        *(arg.partition("=")[2] or arg for arg in server.args if looks_secret(arg)),
    ]
    password = _url_password(server.url)
    if password:
        found.append(password)
    for value in found:
        for form in dict.fromkeys((value, expand_env(value))):
            values.append(form)
            scheme, _, token = form.partition(" ")
            if token and scheme.casefold() in ("bearer", "basic", "token"):
                values.append(token)
    return values


def looks_secret(value: str) -> bool:
    """Whether a value whose name says nothing looks like a credential: one word without a
    slash, colon or space holding a run of 16 or more letters *and* digits (``sk-live-4f9a…``,
    ``ghp_…``) — not a path, a URL, a package name or a date."""
    word = value.partition("=")[2] if value.startswith("-") else value
    if not _CREDENTIAL.fullmatch(word):
        return False
    return any(
        len(run) >= 16 and any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        for run in re.split(r"[-_.+=]", word)
    )


# -- helpers -----------------------------------------------------------------------------------

_SECRETISH = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)
_CREDENTIAL = re.compile(r"[A-Za-z0-9_\-.+=]{16,}")
"""A credential's shape: one word without a slash, a colon or a space."""


def _url_password(url: str) -> str | None:
    try:
        return urlsplit(url).password or None
    except ValueError:
        return None


def expand_env(text: str, env: Mapping[str, str] | None = None) -> str:
    """``${VAR}`` and ``${VAR:-default}`` as Claude Code expands them in ``.mcp.json``."""
    source = os.environ if env is None else env

    def value(match: re.Match[str]) -> str:
        return source.get(match.group(1)) or (match.group(3) or "")

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}", value, text)


def _read_json(path: Path, problems: list[str]) -> Any:
    try:
        data = read_file(path, FILE_LIMIT + 1).data
    except FileNotFoundError:
        return None
    except OSError as error:
        problems.append(f"{path}: cannot read ({error.strerror or error})")
        return None
    if len(data) > FILE_LIMIT:
        problems.append(f"{path}: larger than {FILE_LIMIT} bytes; not read")
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError as error:
        problems.append(f"{path}: not JSON ({error})")
        return None


def _editable(path: Path) -> dict[str, Any]:
    """The file's JSON object to change and write back; refuses to overwrite one it cannot
    read (the person's other settings would be lost)."""
    problems: list[str] = []
    data = _read_json(path, problems)
    if problems:
        raise ValueError(problems[0])
    if data is None:
        return {"mcpServers": {}}
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise ValueError(f"{path}: not an object with 'mcpServers'; not changed")
    return data
