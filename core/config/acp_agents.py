"""Agents spoken to over the Agent Client Protocol: how one is started, and the known ones.

An agent file names its ACP agent (``backend: acp``, ``acp: {command: opencode, args: [acp]}``)
or just a known agent by name (``acp: opencode``); the table below is also what Settings shows,
with how to install each (architecture: "Backends"). ``writable`` lists the folders the agent
keeps its own state in: when Baton runs the agent inside its sandbox, those (beside the working
folder and a private ``/tmp``) are the only places it may write. A leading ``~`` there means
the agent's ``HOME`` — the one its ``env`` gives it, else the person's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class AcpCommand(BaseModel):
    """How to start one ACP agent: the program, its arguments, extra environment variables."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    """Set on top of Baton's scrubbed environment (values as written, never secrets: name a
    variable in the agent's ``env:`` list to let a secret through)."""
    writable: tuple[str, ...] = ()
    """The agent's own state folders, writable inside the sandbox."""
    mode: str | None = None
    """A session mode set after ``session/new`` (Claude's adapter: ``default``, which asks)."""

    def writable_paths(self) -> list[Path]:
        """:attr:`writable` with ``~`` read as the agent's HOME."""
        home = self.env.get("HOME") or os.environ.get("HOME") or str(Path.home())
        paths = []
        for entry in self.writable:
            text = home + entry[1:] if entry == "~" or entry.startswith("~/") else entry
            paths.append(Path(text))
        return paths


@dataclass(frozen=True)
class KnownAcpAgent:
    """An agent Baton knows how to start, for Settings and for ``acp: <name>``."""

    name: str
    label: str
    command: AcpCommand
    install: str
    model_api: str
    """Which model API it speaks: what a provider (or a scripted server) must offer."""


_OPENCODE_STATE = (
    "~/.local/share/opencode",
    "~/.local/state/opencode",
    "~/.cache/opencode",
    "~/.config/opencode",
)

KNOWN_ACP_AGENTS: tuple[KnownAcpAgent, ...] = (
    KnownAcpAgent(
        "opencode",
        "OpenCode",
        AcpCommand(command="opencode", args=("acp",), writable=_OPENCODE_STATE),
        "npm install -g opencode-ai",
        "OpenAI Chat Completions",
    ),
    KnownAcpAgent(
        "codex",
        "Codex (codex-acp)",
        AcpCommand(command="codex-acp", writable=("~/.codex",)),
        "npm install -g @zed-industries/codex-acp",
        "OpenAI Responses API",
    ),
    KnownAcpAgent(
        "gemini",
        "Gemini CLI",
        AcpCommand(command="gemini", args=("--acp",), writable=("~/.gemini",)),
        "npm install -g @google/gemini-cli",
        "Gemini API",
    ),
    KnownAcpAgent(
        "claude-acp",
        "Claude (claude-agent-acp)",
        AcpCommand(command="claude-agent-acp", writable=("~/.claude",), mode="default"),
        "npm install -g @agentclientprotocol/claude-agent-acp",
        "Anthropic Messages API",
    ),
)


def known_acp_agent(name: str) -> KnownAcpAgent | None:
    folded = name.strip().casefold()
    return next((agent for agent in KNOWN_ACP_AGENTS if agent.name == folded), None)


def parse_acp_field(value: Any) -> AcpCommand:
    """An agent file's ``acp:`` value: a known agent's name, or ``{command, args, env, …}``.

    Raises ``ValueError`` with a sentence for the person."""
    if isinstance(value, str):
        known = known_acp_agent(value)
        if known is None:
            names = ", ".join(agent.name for agent in KNOWN_ACP_AGENTS)
            raise ValueError(
                f"'acp: {value}' is not a known ACP agent ({names}); "
                "write acp: {command: …, args: […]}"
            )
        return known.command
    if not isinstance(value, Mapping):
        raise ValueError("'acp' must be a known agent's name or {command: …, args: […]}")
    data = dict(value)
    if isinstance(data.get("args"), str):
        data["args"] = [data["args"]]
    if isinstance(data.get("writable"), str):
        data["writable"] = [data["writable"]]
    if isinstance(data.get("env"), Mapping):
        data["env"] = {str(k): str(v) for k, v in data["env"].items()}
    try:
        return AcpCommand.model_validate(data)
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise ValueError(f"'acp.{where}': {problem['msg']}") from None
