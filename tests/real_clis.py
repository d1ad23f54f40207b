"""Where the real pi and Claude Code CLIs are, for the integration tests.

``.ci/run`` installs them into ``<repo>/.tools/``: pi 0.73.1 and Claude Code 2.0.76 in
``npm/``, the current pi 1.x with the Node ≥ 22.19 it needs in ``npm-pi1/``, the newest Claude
Code in ``npm-claude/``. ``$BATON_PI_BIN``, ``$BATON_PI1_BIN``, ``$BATON_CLAUDE_BIN`` and
``$BATON_CLAUDE_NEW_BIN`` point elsewhere. Without a CLI the tests skip and say why — except
under ``CI=true``, where a missing CLI is a failure: CI must never pass by skipping them
(:func:`missing`, which the other tests of a program CI installs use too).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from tests.llm_server import MODEL, LLMServer

TOOLS = Path(__file__).resolve().parents[1] / ".tools"


@dataclass(frozen=True)
class Cli:
    name: str
    """As the tests' ids show it: ``pi-0.73``, ``pi-1.x``, ``claude-2.0.76``, ``claude-newest``."""
    variable: str
    default: Path


PI_CLIS = (
    Cli("pi-0.73", "BATON_PI_BIN", TOOLS / "npm" / "node_modules" / ".bin" / "pi"),
    Cli("pi-1.x", "BATON_PI1_BIN", TOOLS / "npm-pi1" / "node_modules" / ".bin" / "pi"),
)
CLAUDE_CLIS = (
    Cli("claude-2.0.76", "BATON_CLAUDE_BIN", TOOLS / "npm" / "node_modules" / ".bin" / "claude"),
    Cli(
        "claude-newest",
        "BATON_CLAUDE_NEW_BIN",
        TOOLS / "npm-claude" / "node_modules" / ".bin" / "claude",
    ),
)


MCP_SERVERS = {
    "filesystem": TOOLS / "npm-mcp" / "node_modules" / ".bin" / "mcp-server-filesystem",
    "everything": TOOLS / "npm-mcp" / "node_modules" / ".bin" / "mcp-server-everything",
}
"""The reference MCP servers from npm (``.ci/run`` installs them pinned into ``npm-mcp``)."""


def find_mcp_server(name: str) -> Path:
    """The executable of a reference MCP server; skips (fails under CI) when absent."""
    path = MCP_SERVERS[name]
    if not path.is_file():
        missing(f"the MCP server {name} is not installed at {path} (.ci/run installs it)")
    if shutil.which("node") is None:
        missing(f"Node.js is not on PATH: the MCP server {name} cannot run")
    return path


def missing(reason: str) -> NoReturn:
    """Skip a test whose real program is absent, but fail it under ``CI=true``: ``.ci/run``
    installs every such program, so CI must never pass by skipping (the real CLIs, the MCP
    servers, ``dbus-daemon`` for the notification tests)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: CI installs it, so the test must run, not skip)")
    pytest.skip(reason)


def find(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The executable of ``cli``; the Node next to it (npm's ``node`` package) goes first on
    PATH, so pi 1.x runs on the Node it needs."""
    override = os.environ.get(cli.variable)
    path = Path(override) if override else cli.default
    if not path.is_file():
        missing(f"{cli.name} is not installed at {path} (set ${cli.variable}; .ci/run installs it)")
    local_node = path.parent / "node"
    if local_node.exists():
        monkeypatch.setenv("PATH", f"{path.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    elif shutil.which("node") is None:
        missing(f"Node.js is not on PATH: {cli.name} cannot run")
    return path


def configure_pi(tmp_path: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pi's config folder pointing at ``server``; returns a working folder with notes.txt."""
    agent_dir = tmp_path / "pi-agent"
    agent_dir.mkdir()
    cost = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    model = {"id": MODEL, "contextWindow": 128000, "maxTokens": 4096, "cost": cost}
    provider = {"baseUrl": server.base_url, "api": "openai-completions", "apiKey": "any"}
    models = {"providers": {"local": {**provider, "models": [model]}}}
    (agent_dir / "models.json").write_text(json.dumps(models), encoding="utf-8")
    settings = {"defaultProvider": "local", "defaultModel": MODEL, "retry": {"enabled": False}}
    (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    monkeypatch.setenv("PI_OFFLINE", "1")
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("The launch code word is: marigold.\n", encoding="utf-8")
    return work


def point_claude_at(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's environment for a scripted Anthropic server at ``url``: a dummy key, and
    no traffic of its own (telemetry, update checks)."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
    for name in (
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
    ):
        monkeypatch.setenv(name, "1")
