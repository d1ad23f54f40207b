"""The real ACP agents for the integration tests, pointed at the scripted servers.

``.ci/run`` installs OpenCode (``opencode-ai``, pinned) into ``<repo>/.tools/npm-acp``;
``$BATON_OPENCODE_BIN`` points elsewhere. Without it the tests skip and say why, except under
``CI=true`` (:func:`tests.real_clis.find`). OpenCode gets a folder of its own as HOME (its
config, data, cache and state live there), a custom OpenAI-compatible provider aimed at
:class:`tests.llm_server.LLMServer`, ``permission: ask`` for edit, bash and read (without it
OpenCode asks nothing), and the variables that stop every outside fetch at start (field notes,
"ACP agents from npm").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config.acp_agents import AcpCommand
from core.definitions.agents import AgentDefinition
from tests import real_clis
from tests.llm_server import MODEL, LLMServer

OPENCODE = real_clis.Cli(
    "opencode-1.18.33",
    "BATON_OPENCODE_BIN",
    real_clis.TOOLS / "npm-acp" / "node_modules" / ".bin" / "opencode",
)

OFFLINE = {
    f"OPENCODE_DISABLE_{name}": "1"
    for name in (
        "MODELS_FETCH",
        "AUTOUPDATE",
        "LSP_DOWNLOAD",
        "DEFAULT_PLUGINS",
        "SHARE",
        "CLAUDE_CODE",
        "EXTERNAL_SKILLS",
    )
}


def opencode_config(server: LLMServer) -> dict[str, object]:
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Scripted",
        "options": {"baseURL": server.base_url, "apiKey": "any"},
        "models": {MODEL: {"name": MODEL, "tool_call": True}},
    }
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"scripted": provider},
        "model": f"scripted/{MODEL}",
        "small_model": f"scripted/{MODEL}",
        "permission": {"edit": "ask", "bash": "ask", "read": "ask"},
        "autoupdate": False,
        "share": "disabled",
    }


def opencode_agent(
    home: Path, server: LLMServer, monkeypatch: pytest.MonkeyPatch, name: str = "coder"
) -> AgentDefinition:
    """An agent running the real OpenCode against ``server``, its HOME in ``home``."""
    executable = real_clis.find(OPENCODE, monkeypatch)
    config_dir = home / ".config" / "opencode"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "opencode.json").write_text(json.dumps(opencode_config(server)), "utf-8")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        **OFFLINE,
    }
    command = AcpCommand(command=str(executable), args=("acp",), env=env, writable=("~",))
    return AgentDefinition(name=name, description="OpenCode", backend="acp", acp=command)


CODEX = real_clis.Cli(
    "codex-acp-0.16.0",
    "BATON_CODEX_ACP_BIN",
    # The platform binary itself: the npm wrapper orphans it on SIGTERM (field notes).
    real_clis.TOOLS
    / "npm-acp"
    / "node_modules"
    / "@zed-industries"
    / "codex-acp-linux-x64"
    / "bin"
    / "codex-acp",
)


def codex_agent(
    home: Path, base_url: str, monkeypatch: pytest.MonkeyPatch, name: str = "codex"
) -> AgentDefinition:
    """An agent running the real codex-acp against a Responses server at ``base_url``: its own
    CODEX_HOME (config, and the "always allow" rules it would keep), approval ``untrusted`` so
    it asks about commands, its own sandbox off (Baton's bubblewrap contains it)."""
    executable = real_clis.find(CODEX, monkeypatch)
    codex_home = home / "codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{MODEL}"\n'
        'model_provider = "scripted"\n'
        'approval_policy = "untrusted"\n'
        'sandbox_mode = "danger-full-access"\n'
        "[model_providers.scripted]\n"
        'name = "Scripted"\n'
        f'base_url = "{base_url}"\n'
        'wire_api = "responses"\n'
        'env_key = "SCRIPTED_API_KEY"\n',
        encoding="utf-8",
    )
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "any"}
    command = AcpCommand(command=str(executable), env=env, writable=("~",))
    return AgentDefinition(name=name, description="Codex", backend="acp", acp=command)
