"""User settings (``config.yaml`` in the config folder, architecture: "File formats").

Secrets never live here: a provider names the environment variable holding its API key, or
says the key is in the system keyring (see :mod:`core.safety.secrets`). Saving validates the whole
model first and writes atomically, so an invalid edit is never saved half-way.

``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` act as the default provider when none is configured,
so a user with those set needs no setup at all.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.config import paths
from core.config.atomic import atomic_write_text
from core.config.pricing import ModelPrice
from core.config.validation import format_validation_error

PolicyValue = Literal["allow", "ask", "deny"]
BackendChoice = Literal["openai", "pi", "claude", "acp"]

#: Read-only tools run freely; anything that changes the world asks (architecture: "Tools,
#: approvals and trust").
DEFAULT_POLICY: dict[str, PolicyValue] = {
    "read": "allow",
    "grep": "allow",
    "find": "allow",
    "ls": "allow",
    "bash": "ask",
    "edit": "ask",
    "write": "ask",
    "document": "allow",
    "document.update": "allow",
    "document.update_other": "ask",
    "document.retype": "ask",
    "document.delete": "ask",
}


class Provider(BaseModel):
    """An OpenAI-compatible endpoint."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    base_url: str = Field(min_length=1)
    api_key_env: str | None = None
    """Environment variable holding the key (e.g. ``OPENAI_API_KEY``)."""
    api_key_in_keyring: bool = False
    """The key is stored in the system keyring under service ``baton``, user = ``name``."""
    json_schema_output: bool = False
    """The server honours ``response_format: json_schema`` (OpenAI, vLLM): agents that declare
    an ``output:`` shape send it. Others are asked in the prompt and checked afterwards."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """The request field that bounds an answer's length: OpenAI's reasoning models accept only
    ``max_completion_tokens``; every other compatible server reads ``max_tokens``."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        url = url.strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        if url_has_credentials(url):
            raise ValueError(CREDENTIALS_IN_URL)
        return url


CREDENTIALS_IN_URL = (
    "must not contain a user name or key (user:key@host); remove them from the URL and put "
    "the key in the provider's API key field (an environment variable or the system keyring)"
)
"""Never echoes the URL: the key in it would reach error messages, logs and run files."""


def url_has_credentials(url: str) -> bool:
    """Whether ``url`` carries ``user[:password]@`` before its host."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "@" in url
    return bool(parts.username or parts.password) or "@" in parts.netloc


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(default=40, ge=1, le=1000)
    max_tool_calls_per_turn: int = Field(default=64, ge=1)
    """Tool calls run from one answer; the rest are refused back to the model with the reason
    (an answer asking for 100,000 would otherwise run them all)."""
    max_answer_bytes: int = Field(default=10_000_000, ge=10_000)
    """Largest model answer (its streamed bytes); past it the step fails."""
    step_timeout_s: float | None = Field(default=None, gt=0)
    """Ends a step that runs longer than this (None: no limit)."""
    bash_timeout_s: float = Field(default=120.0, gt=0)
    tool_output_chars: int = Field(default=50_000, ge=1_000)
    document_max_chars: int = Field(default=10_000, ge=100)
    document_page_size: int = Field(default=20, ge=1, le=200)
    document_read_tokens: int = Field(default=2_000, ge=100)
    connect_timeout_s: float = Field(default=15.0, gt=0)
    silence_timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=20)
    handoff_chars: int = Field(default=50_000, ge=1_000)
    """Most characters of a step's answer handed to the next step (``{previous}``)."""


class SandboxSettings(BaseModel):
    """How ``bash`` is confined (see :mod:`core.safety.sandbox`)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Sandbox bash where the platform allows it (bubblewrap, sandbox-exec)."""
    network: bool = True
    """Network inside the sandbox; ``baton run --no-network`` turns it off for one run."""


class CheckpointSettings(BaseModel):
    """Per-step snapshots of the working folder (see :mod:`core.workspace.checkpoints`)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Record the folder before and after every step; ``false`` turns checkpoints off."""
    outside_git: bool = True
    """In a folder that is not in a git repository, keep a private shadow repository."""
    max_folder_mb: int = Field(default=200, ge=1)
    """A folder outside git larger than this is not snapshotted (the run says so)."""


class TelemetrySettings(BaseModel):
    """Runs exported as OpenTelemetry traces (see :mod:`core.telemetry`). The standard
    ``OTEL_*`` environment variables turn export on too; these are the window's switch.

    The headers (often an API key) are a secret: they live in the system keyring under
    :data:`TELEMETRY_HEADERS_KEY`, never in this file."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    endpoint: str | None = None
    """The OTLP/HTTP base address (``http://127.0.0.1:6006``); ``/v1/traces`` is added."""
    headers_in_keyring: bool = False
    """``name=value,name=value`` (the ``OTEL_EXPORTER_OTLP_HEADERS`` form) is in the keyring."""
    capture_content: bool = False
    """Put messages and tool arguments (redacted) on the spans; off: names and figures only."""


TELEMETRY_HEADERS_KEY = "otel-exporter-headers"
"""The keyring user (service ``baton``) holding the OTLP headers."""


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    providers: list[Provider] = Field(default_factory=list)
    default_provider: str | None = None
    default_model: str | None = None
    default_backend: BackendChoice | None = None
    model_aliases: dict[str, str] = Field(default_factory=dict)
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """Per-model prices ($ per million tokens) that come before the maintained table."""
    policy: dict[str, PolicyValue] = Field(default_factory=dict)
    """Overrides of :data:`DEFAULT_POLICY`, per tool or ``document.<action>``."""
    pi_path: str | None = None
    pi_pass_model: bool = True
    claude_path: str | None = None
    limits: Limits = Field(default_factory=Limits)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)

    def effective_policy(self) -> dict[str, PolicyValue]:
        return {**DEFAULT_POLICY, **self.policy}

    def provider(self, name: str | None = None) -> Provider | None:
        """The named provider, else the default one, else one from ``OPENAI_BASE_URL``."""
        wanted = name or self.default_provider
        for provider in self.providers:
            if wanted is None or provider.name == wanted:
                return provider
        environment_url = os.environ.get("OPENAI_BASE_URL")
        if name is None and environment_url and not url_has_credentials(environment_url):
            return Provider(
                name="environment",
                base_url=os.environ["OPENAI_BASE_URL"],
                api_key_env="OPENAI_API_KEY",
            )
        return None

    def resolve_model(self, model: str | None) -> str | None:
        """Apply an alias (``claude-sonnet-4-5`` → what the provider calls it)."""
        if model is None:
            return None
        return self.model_aliases.get(model, model)


class SettingsError(ValueError):
    """config.yaml exists but cannot be used; the message says where and why."""


def config_path() -> Path:
    return paths.config_dir() / "config.yaml"


def load_settings(path: Path | None = None) -> Settings:
    """The saved settings; :class:`SettingsError` names what is wrong (never a secret)."""
    if url_has_credentials(os.environ.get("OPENAI_BASE_URL", "")):
        raise SettingsError(f"OPENAI_BASE_URL {CREDENTIALS_IN_URL}; set OPENAI_API_KEY instead")
    path = path or config_path()
    if not path.exists():
        return Settings()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
    except yaml.YAMLError as error:
        raise SettingsError(f"{path}: not valid YAML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot read: {error}") from None
    try:
        return Settings.model_validate(data)
    except ValidationError as error:
        raise SettingsError(f"{path}: {format_validation_error(error)}") from None


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Validate, then write atomically. Only non-default values are written."""
    Settings.model_validate(settings.model_dump())
    data = settings.model_dump(mode="json", exclude_defaults=True)
    atomic_write_text(path or config_path(), yaml.safe_dump(data, sort_keys=False))
