"""Shared fixtures. Every test runs with temporary config, data and home folders, so nothing a
test does touches the real home, and no user agent or setting leaks into a test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import LLMServer

SHARED = Path(__file__).resolve().parents[2] / "shared"
"""``../shared`` beside the checkout: reference transcripts. Tests that read it skip without it."""


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("BATON_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("BATON_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for variable in (
        "PI_CODING_AGENT_DIR",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(variable, raising=False)
    # No real keyring: a test must never read or write the user's secrets.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    yield home


@pytest.fixture
def user_presets(isolated_home: Path) -> Path:
    """Baton's user preset folder (``<config>/presets``), created."""
    folder = isolated_home / "config" / "presets"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared (reference transcripts) is not present on this machine")
    return SHARED


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A started scripted OpenAI-compatible server (see ``tests/llm_server.py``); stopped,
    with its threads joined, after the test."""
    with LLMServer() as server:
        yield server
