"""A ``base_url`` with credentials in it is refused, and the refusal never repeats the key."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.config.settings import Provider, SettingsError, config_path, load_settings
from core.config.validation import format_validation_error

KEY = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    "url", [f"http://user:{KEY}@host/v1", f"https://{KEY}@api.example.com/v1", f"http://:{KEY}@h"]
)
def test_provider_refuses_credentials_in_base_url(url: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Provider(name="p", base_url=url)
    message = format_validation_error(caught.value)
    assert "API key field" in message and KEY not in message


def test_config_yaml_with_a_key_in_base_url_is_refused_without_echoing_it() -> None:
    config_path().write_text(f"providers:\n- name: p\n  base_url: http://me:{KEY}@h/v1\n")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "API key field" in str(caught.value) and KEY not in str(caught.value)


def test_openai_base_url_with_a_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://me:{KEY}@h/v1")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "OPENAI_API_KEY" in str(caught.value) and KEY not in str(caught.value)


def test_plain_urls_are_fine() -> None:
    assert Provider(name="p", base_url="http://127.0.0.1:8080/v1/").base_url.endswith("/v1")
