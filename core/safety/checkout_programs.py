"""The programs a checkout would make Claude Code or pi run on their own, before any tool call.

Claude Code reads ``.claude/settings.json``, ``.claude/settings.local.json`` and ``.mcp.json``
from the folder it starts in: hooks, ``apiKeyHelper``, a status line and MCP servers there are
commands it runs unsandboxed, without asking, at start-up or on every prompt. pi reads
``.pi/settings.json`` (packages it installs, extensions, a shell prefix for every bash call),
``.pi/mcp.json`` and ``.pi/extensions``. A cloned repository controls all of these, so they are
part of what a person trusts: :func:`program_files` feeds the trust store's fingerprint and
diff, :func:`checkout_programs` says what each file would run, with its command line, for the
trust question and for the run's header once trusted. Until then the backends start the CLIs
so that none of it is loaded (``--setting-sources user --strict-mcp-config``; pi's
``--no-approve``).

Parsing is forgiving on purpose: a file that cannot be read or parsed is itself listed (it
still needs trust, since the CLI may read it differently), never an error.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from core.config.looks import read_file

CheckoutBackend = Literal["claude", "pi"]

CLAUDE_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
CLAUDE_MCP = ".mcp.json"
PI_SETTINGS = ".pi/settings.json"
PI_MCP = ".pi/mcp.json"
PI_EXTENSIONS = ".pi/extensions"
FILE_LIMIT = 1_000_000
"""Bytes read of one file; a bigger settings file is listed as unreadable."""

_CLAUDE_HELPERS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper")
"""Claude Code settings whose value is a shell command it runs itself."""
_PI_COMMANDS = ("shellPath", "shellCommandPrefix", "npmCommand")
"""pi settings that name a program it runs (every bash call, every package install)."""


@dataclass(frozen=True)
class CheckoutProgram:
    """One program a CLI would run because the checkout says so."""

    backend: CheckoutBackend
    source: str
    """The file that says so, relative to the folder, with forward slashes."""
    kind: str
    """What it is: ``hook SessionStart``, ``apiKeyHelper``, ``MCP server``, ``pi package``…"""
    name: str
    command: str
    """The command line as the CLI would run it (or the URL of a remote MCP server)."""

    def line(self) -> str:
        """One line for a terminal or a run's header."""
        name = f" {self.name}" if self.name else ""
        return f"{self.source}: {self.kind}{name}: {self.command}"


def program_files(root: Path) -> list[Path]:
    """The checkout's files that can make a CLI run programs, as they exist now."""
    files = [root / name for name in (*CLAUDE_SETTINGS, CLAUDE_MCP, PI_SETTINGS, PI_MCP)]
    found = [path for path in files if path.is_file()]
    extensions = root / PI_EXTENSIONS
    if extensions.is_dir():
        found.extend(sorted(p for p in extensions.rglob("*") if p.is_file()))
    return found


def fingerprint(root: Path) -> str:
    """SHA-256 over the program files' names and contents: a backend compares it with the one
    trusted, so a file changed after the trust question (by an earlier step) is not loaded."""
    digest = hashlib.sha256()
    for path in program_files(root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        try:
            digest.update(hashlib.sha256(read_file(path).data).digest())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


def checkout_programs(root: Path, backend: CheckoutBackend | None = None) -> list[CheckoutProgram]:
    """What the checkout at ``root`` would run, for one backend or (None) both."""
    found: list[CheckoutProgram] = []
    if backend in (None, "claude"):
        for name in CLAUDE_SETTINGS:
            found += _claude_settings(root, name)
        found += _mcp_servers(root, CLAUDE_MCP, "claude")
    if backend in (None, "pi"):
        found += _pi_settings(root)
        found += _mcp_servers(root, PI_MCP, "pi")
        extensions = root / PI_EXTENSIONS
        if extensions.is_dir():
            for path in sorted(p for p in extensions.rglob("*") if p.is_file()):
                relative = path.relative_to(root).as_posix()
                found.append(CheckoutProgram("pi", relative, "pi extension", "", relative))
    return found


def _read(root: Path, name: str, backend: CheckoutBackend) -> tuple[Any, CheckoutProgram | None]:
    """The parsed JSON of ``root/name`` (None when absent), or the entry saying it is
    unreadable."""
    path = root / name
    if not path.is_file():
        return None, None
    try:
        data = read_file(path, FILE_LIMIT + 1).data
        if len(data) > FILE_LIMIT:
            raise ValueError(f"larger than {FILE_LIMIT} bytes")
        return json.loads(data.decode("utf-8")), None
    except (OSError, ValueError) as error:
        return None, CheckoutProgram(backend, name, "unreadable file", "", f"(not read: {error})")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return shlex.join(value)
    return json.dumps(value, ensure_ascii=False)


def _claude_settings(root: Path, name: str) -> list[CheckoutProgram]:
    data, unreadable = _read(root, name, "claude")
    if unreadable is not None:
        return [unreadable]
    if not isinstance(data, dict):
        return []
    found: list[CheckoutProgram] = []
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else [groups]:
                matcher = group.get("matcher", "") if isinstance(group, dict) else ""
                inner = group.get("hooks") if isinstance(group, dict) else None
                for hook in inner if isinstance(inner, list) else [group]:
                    command = hook.get("command") if isinstance(hook, dict) else hook
                    kind = f"hook {event}"
                    found.append(
                        CheckoutProgram("claude", name, kind, _text(matcher), _text(command))
                    )
    for key in _CLAUDE_HELPERS:
        if key in data:
            found.append(CheckoutProgram("claude", name, key, "", _text(data[key])))
    status = data.get("statusLine")
    if isinstance(status, dict) and "command" in status:
        found.append(CheckoutProgram("claude", name, "statusLine", "", _text(status["command"])))
    env = data.get("env")
    if isinstance(env, dict):
        for variable, value in env.items():
            found.append(CheckoutProgram("claude", name, "environment", variable, _text(value)))
    servers = data.get("mcpServers")
    if isinstance(servers, dict):
        found += _servers(servers, name, "claude")
    for key in ("enabledPlugins", "extraKnownMarketplaces", "pluginDirs"):
        if data.get(key):
            found.append(CheckoutProgram("claude", name, "plugins", key, _text(data[key])))
    return found


def _mcp_servers(root: Path, name: str, backend: CheckoutBackend) -> list[CheckoutProgram]:
    data, unreadable = _read(root, name, backend)
    if unreadable is not None:
        return [unreadable]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    return _servers(servers, name, backend) if isinstance(servers, dict) else []


def _servers(
    servers: dict[str, Any], source: str, backend: CheckoutBackend
) -> list[CheckoutProgram]:
    found: list[CheckoutProgram] = []
    for server, spec in servers.items():
        if isinstance(spec, dict) and "command" in spec:
            args = spec.get("args")
            argv = [_text(spec["command"])]
            argv += [_text(arg) for arg in args] if isinstance(args, list) else []
            command = shlex.join(argv)
        elif isinstance(spec, dict) and "url" in spec:
            command = _text(spec["url"])
        else:
            command = _text(spec)
        found.append(CheckoutProgram(backend, source, "MCP server", str(server), command))
    return found


def _pi_settings(root: Path) -> list[CheckoutProgram]:
    data, unreadable = _read(root, PI_SETTINGS, "pi")
    if unreadable is not None:
        return [unreadable]
    if not isinstance(data, dict):
        return []
    found: list[CheckoutProgram] = []
    packages = data.get("packages")
    for package in packages if isinstance(packages, list) else []:
        source = package.get("source") if isinstance(package, dict) else package
        found.append(CheckoutProgram("pi", PI_SETTINGS, "pi package", "", _text(source)))
    extensions = data.get("extensions")
    for extension in extensions if isinstance(extensions, list) else []:
        found.append(CheckoutProgram("pi", PI_SETTINGS, "pi extension", "", _text(extension)))
    for key in _PI_COMMANDS:
        if key in data:
            found.append(CheckoutProgram("pi", PI_SETTINGS, key, "", _text(data[key])))
    return found
