"""Which backend runs a step, and how to get one.

Backends are imported lazily by name, so a run through Baton's own loop never imports the
subprocess machinery of the CLI backends and vice versa. Each backend class takes no
constructor arguments: everything it needs arrives in the :class:`StepContext`.

Choice, most specific first: the run's ``--backend``, the agent's ``backend:``, the settings'
``default_backend``, then the fallback (architecture: "Backends") — a configured
OpenAI-compatible provider, else ``pi`` on PATH, else ``claude`` on PATH, else ``openai`` (whose
error then says how to set up a provider).
"""

from __future__ import annotations

import importlib
from typing import cast

from core.backends.base import Backend
from core.config.program_locations import locate_program
from core.config.settings import Settings
from core.definitions.agents import AgentDefinition

OWN_LOOP = "openai"
"""The name of Baton's own agent loop over an OpenAI-compatible endpoint."""
BACKENDS: dict[str, str] = {
    OWN_LOOP: "core.backends.openai_compat:OpenAICompatBackend",
    "pi": "core.backends.pi_cli:PiBackend",
    "claude": "core.backends.claude_cli:ClaudeBackend",
    "acp": "core.backends.acp_backend:AcpBackend",
}


class UnknownBackendError(ValueError):
    pass


def create_backend(name: str) -> Backend:
    try:
        module_name, class_name = BACKENDS[name].split(":")
    except KeyError:
        raise UnknownBackendError(
            f"unknown backend '{name}' (choose from {', '.join(BACKENDS)})"
        ) from None
    backend_class = getattr(importlib.import_module(module_name), class_name)
    return cast(Backend, backend_class())


def default_backend(settings: Settings) -> str:
    if settings.default_backend:
        return settings.default_backend
    if settings.provider() is not None:
        return OWN_LOOP
    if locate_program("pi", settings.pi_path):
        return "pi"
    if locate_program("claude", settings.claude_path):
        return "claude"
    return OWN_LOOP


def backend_for(agent: AgentDefinition, run_backend: str | None, settings: Settings) -> str:
    return run_backend or agent.backend or default_backend(settings)
