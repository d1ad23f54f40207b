"""The environment a tool subprocess gets: Baton's own, minus every secret.

The model is assumed hostile, and whatever a child process can read it can print: ``printenv``
in ``bash`` would hand every key in Baton's environment to the model. :func:`scrubbed_env`
removes the variables Baton knows hold keys (the providers' ``api_key_env``) and everything
named like a credential (:func:`is_secret_name`), except the names an agent's frontmatter
asks for (``env: [GITHUB_TOKEN]``, shown in the trust dialog).

The pi and Claude Code backends call it for their CLI's environment too, passing their own
provider key in ``allow`` so the CLI can still authenticate::

    env = scrubbed_env(
        allow=(*ctx.agent.env, "ANTHROPIC_API_KEY"), known=known_key_names(ctx.settings)
    )
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.config.settings import Settings

SECRET_NAME = re.compile(
    r"""^(?:
        .*_API_KEY | .*APIKEY.* | .*_API_KEY_.* | .*_KEY | .*_TOKEN | .*_TOKEN_.* | GITHUB_TOKEN
        | .*_SECRET | .*_SECRET_.* | .*SECRET_KEY.* | .*PASSWORD.* | .*PASSWD.*
        | .*_ACCESS_KEY.* | .*_PRIVATE_KEY | .*CREDENTIALS? | AWS_.*
        | OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
"""Names that hold credentials by convention (``*_KEY``, ``*_TOKEN``, ``AWS_*``...), and the
OTLP exporter's headers (a telemetry service's API key travels there)."""


def is_secret_name(name: str) -> bool:
    """Whether an environment variable named ``name`` probably holds a credential."""
    return SECRET_NAME.match(name) is not None


def scrubbed_env(
    *,
    allow: Iterable[str] = (),
    known: Iterable[str] = (),
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """``base`` (default: Baton's environment) without secrets.

    ``known`` are names Baton knows hold keys (removed whatever they are called); ``allow``
    are names kept even so. Names compare case-insensitively (Windows ignores case).
    """
    source = os.environ if base is None else base
    allowed = {name.upper() for name in allow}
    removed = {name.upper() for name in known}
    return {
        name: value
        for name, value in source.items()
        if name.upper() in allowed or (name.upper() not in removed and not is_secret_name(name))
    }


def known_key_names(settings: Settings) -> tuple[str, ...]:
    """The variables the configured providers read their keys from (``api_key_env``)."""
    return tuple(p.api_key_env for p in settings.providers if p.api_key_env)


PI_PROVIDER_KEYS = (
    "AI_GATEWAY_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "AZURE_OPENAI_API_KEY",
    "CEREBRAS_API_KEY", "CLOUDFLARE_API_KEY", "COPILOT_GITHUB_TOKEN", "DEEPSEEK_API_KEY",
    "FIREWORKS_API_KEY", "GEMINI_API_KEY", "GOOGLE_CLOUD_API_KEY", "GROQ_API_KEY",
    "KIMI_API_KEY", "MINIMAX_API_KEY", "MINIMAX_CN_API_KEY", "MISTRAL_API_KEY",
    "MOONSHOT_API_KEY", "OPENAI_API_KEY", "OPENCODE_API_KEY", "OPENROUTER_API_KEY",
    "XAI_API_KEY", "ZAI_API_KEY",
)  # fmt: skip
"""The model-provider keys pi reads (from pi-ai's provider table): pi needs its own to work."""

CLAUDE_PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
"""What Claude Code authenticates with."""


def cli_environment(provider_keys: Iterable[str], agent_env: Iterable[str]) -> dict[str, str]:
    """The environment for a pi or Claude Code process: scrubbed like a tool's, except the
    CLI's own model-provider keys (it must reach its model) and what the agent asks for.
    Everything else secret — a database password, a cloud token — stays out of reach of the
    CLI's own tools, which Baton cannot sandbox."""
    return scrubbed_env(allow=(*provider_keys, *agent_env))
