"""The submitter's provider world, without Ray: what a worker's environment becomes (the
submitter's values; the worker's own provider variables gone), and what never shows a key."""

from __future__ import annotations

from core.batch.provider_world import KEYRING_VARIABLE, capture
from core.config.settings import Provider, Settings
from core.safety.environment import is_secret_name

SUBMITTER = {
    "OPENAI_BASE_URL": "http://submitter.example/v1",
    "OPENAI_API_KEY": "sk-submitter-secret",
    "TEAM_KEY": "team-secret",
    "HOME": "/home/person",
}
WORKER = {
    "OPENAI_BASE_URL": "http://cluster.example/v1",
    "ANTHROPIC_API_KEY": "sk-cluster-anthropic",
    "ANTHROPIC_BASE_URL": "http://cluster-proxy.example",
    "HOME": "/home/ray",
    "PATH": "/usr/bin",
}


def test_a_worker_gets_the_submitters_provider_variables_and_loses_its_own() -> None:
    settings = Settings(
        providers=[Provider(name="team", base_url="http://team.example", api_key_env="TEAM_KEY")]
    )
    world = capture(settings, SUBMITTER)
    worker = dict(WORKER)
    assert world.apply(worker) == settings
    assert worker == {
        "OPENAI_BASE_URL": "http://submitter.example/v1",
        "OPENAI_API_KEY": "sk-submitter-secret",
        "TEAM_KEY": "team-secret",  # a configured provider's key variable travels too
        "HOME": "/home/ray",  # not a provider variable: the worker's own
        "PATH": "/usr/bin",
    }


def test_a_world_names_its_variables_never_their_values() -> None:
    text = repr(capture(Settings(), SUBMITTER))
    assert "OPENAI_API_KEY" in text
    assert "sk-submitter-secret" not in text and "submitter.example" not in text


def test_a_keyring_key_travels_under_a_variable_named_like_a_key() -> None:
    settings = Settings(
        providers=[Provider(name="vault", base_url="http://v.example", api_key_in_keyring=True)]
    )
    world = capture(settings, {})  # the test keyring holds nothing: the variable is unset
    (provider,) = world.settings.providers
    assert provider.api_key_env == KEYRING_VARIABLE.format(index=0)
    assert not provider.api_key_in_keyring
    assert is_secret_name(provider.api_key_env)  # tools' environments are scrubbed of it
    assert world.environment[provider.api_key_env] is None
