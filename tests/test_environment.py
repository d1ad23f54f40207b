"""The environment tool processes get: secrets removed unless an agent asks for them."""

from __future__ import annotations

import pytest

from core.config.settings import Provider, Settings
from core.safety.environment import (
    CLAUDE_PROVIDER_KEYS,
    PI_PROVIDER_KEYS,
    cli_environment,
    is_secret_name,
    known_key_names,
    scrubbed_env,
)


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "anthropic_auth_token",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "NPM_TOKEN",
        "CLIENT_SECRET",
        "DJANGO_SECRET_KEY",
        "PGPASSWORD",
        "MYSQL_ROOT_PASSWORD",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "STRIPE_APIKEY",
        "OPENAI_KEY",
    ],
)
def test_credential_names_are_secret(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "LANG", "TERM", "PYTHONPATH", "VIRTUAL_ENV", "TOKENIZERS_PARALLELISM"]
)
def test_ordinary_names_are_kept(name: str) -> None:
    assert not is_secret_name(name)


def test_known_key_names_are_the_providers_variables() -> None:
    settings = Settings(
        providers=[
            Provider(name="a", base_url="http://a", api_key_env="MY_PROVIDER"),
            Provider(name="b", base_url="http://b", api_key_in_keyring=True),
        ]
    )
    assert known_key_names(settings) == ("MY_PROVIDER",)


def test_scrub_removes_secrets_and_known_key_names_but_keeps_what_the_agent_lists() -> None:
    base = {
        "PATH": "/bin",
        "GITHUB_TOKEN": "ghp_1",
        "OPENAI_API_KEY": "sk-1",
        "MY_PROVIDER": "sk-2",
        "HOME": "/h",
    }
    env = scrubbed_env(allow=["github_token"], known=["MY_PROVIDER"], base=base)
    assert env == {"PATH": "/bin", "GITHUB_TOKEN": "ghp_1", "HOME": "/h"}


def test_a_cli_keeps_its_provider_key_and_loses_every_other_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-for-claude")
    monkeypatch.setenv("STRIPE_SECRET_KEY", "sk_live_never")
    monkeypatch.setenv("DATABASE_PASSWORD", "hunter2")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_only_if_asked")
    env = cli_environment(CLAUDE_PROVIDER_KEYS, agent_env=())
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-for-claude"
    assert not {"STRIPE_SECRET_KEY", "DATABASE_PASSWORD", "GITHUB_TOKEN"} & env.keys()
    assert cli_environment(PI_PROVIDER_KEYS, agent_env=("GITHUB_TOKEN",))["GITHUB_TOKEN"]
