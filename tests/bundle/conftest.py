"""The bundle acceptance test: the built app (``dist/Baton/baton``, or the installed
``/usr/bin/baton``), not the virtual environment, driven as a person drives it.

It runs only when ``BATON_BUNDLE`` names the executable (``.ci/run`` sets it after the build and
again after installing the .deb); otherwise every test here is skipped. ``BATON_BUNDLE`` may
also be a command line (``"python -m gui.launcher"``) to try the tests against a source tree.
Only the model is scripted (tests/llm_server.py, tests/anthropic_server.py).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.config.settings import Settings, save_settings
from tests.llm_server import LLMServer

COMMAND = os.environ.get("BATON_BUNDLE", "")
TIMEOUT_S = 300


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    skip = pytest.mark.skip(reason="set BATON_BUNDLE=path/to/baton to test a built app")
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.bundle)
            if not COMMAND:
                item.add_marker(skip)


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        """The exit status and the end of the output: enough to see what went wrong."""
        out, err = self.out[-3000:], self.err[-2000:]
        return f"exit {self.code}\n--- stdout (end)\n{out}\n--- stderr\n{err}"

    def json(self) -> Any:
        return json.loads(self.out)


class Baton:
    """The app under test, run as a child process in the test's environment (temporary home,
    config and data folders: see tests/conftest.py)."""

    def __init__(self, command: list[str]) -> None:
        self.command = command

    def __call__(
        self, *args: str, cwd: Path | None = None, expect: int | None = 0, **env: str
    ) -> Result:
        environment = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "PYTHONPATH")}
        environment.pop("WAYLAND_DISPLAY", None)
        environment["QT_QPA_PLATFORM"] = "offscreen"
        environment.update(env)
        done = subprocess.run(
            [*self.command, *args],
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        result = Result(done.returncode, done.stdout, done.stderr)
        if expect is not None:
            assert result.code == expect, f"baton {' '.join(args)}: {result!s}"
        return result

    def runs(self) -> list[dict[str, Any]]:
        """``baton runs list --json``, newest first."""
        listed: list[dict[str, Any]] = self("runs", "list", "--json").json()
        return listed


@pytest.fixture
def baton() -> Baton:
    return Baton(shlex.split(COMMAND))


@pytest.fixture
def model(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """The scripted model, configured the way a new user does: only ``OPENAI_BASE_URL``."""
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    return llm_server


def configure(**values: Any) -> None:
    """Baton's settings file, as the Settings view writes it."""
    save_settings(Settings.model_validate(values))
