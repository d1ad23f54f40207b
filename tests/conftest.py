"""Shared fixtures. Every test runs with temporary config, data and home folders, so nothing a
test does touches the real home, and no user agent or setting leaks into a test."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.llm_server import LLMServer
from tests.qt_waits import PatientQtBot

pytest_plugins = ["pytester"]  # the suite's own checks are tested by running pytest on samples

FIXTURES = Path(__file__).resolve().parent / "fixtures"
"""Transcripts of the real pi and Claude Code CLIs, recorded by ``tests/fixtures/record.py``."""


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
    # No real desktop: a notification must never reach the person running the tests (the
    # tests of notifications start their own bus: tests/notification_service.py).
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={home / 'no-bus'}")
    # No real keyring: a test must never read or write the user's secrets.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    yield home


LEFTOVER_GRACE_S = 5.0
"""How long a test's threads and child processes get to end on their own after it."""


@pytest.fixture(autouse=True)
def no_leftover_threads_or_processes() -> Iterator[None]:
    """Fail a test that leaves a thread or a child process running (napari's dangling-thread
    check, extended to processes): a leak in one test becomes a flaky hang in another.
    Leftover processes are killed so the rest of the suite is not affected."""
    threads_before = set(threading.enumerate())
    me = psutil.Process()
    children_before = {child.pid for child in me.children(recursive=True)}
    yield
    leftovers = [c for c in me.children(recursive=True) if c.pid not in children_before]
    _gone, alive = psutil.wait_procs(leftovers, timeout=LEFTOVER_GRACE_S)
    described = []
    for process in alive:
        try:
            described.append(" ".join(process.cmdline()) or process.name())
            process.kill()
        except psutil.Error:
            continue
    new_threads = [
        t
        for t in threading.enumerate()
        # A "dummy" thread is a foreign (Qt) thread that ran Python code: Qt owns and ends it.
        if t not in threads_before and not isinstance(t, threading._DummyThread)
    ]
    for thread in new_threads:
        thread.join(timeout=LEFTOVER_GRACE_S)
    running = [t.name for t in new_threads if t.is_alive()]
    problems = []
    if described:
        problems.append(f"child processes still running after the test: {described}")
    if running:
        problems.append(f"threads still running after the test: {running}")
    if problems:
        pytest.fail("; ".join(problems))


@pytest.fixture
def user_presets(isolated_home: Path) -> Path:
    """Baton's user preset folder (``<config>/presets``), created."""
    folder = isolated_home / "config" / "presets"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def fixtures_dir() -> Path:
    """``tests/fixtures``: ``pi/<version>/`` and ``claude/<version>/`` transcripts."""
    return FIXTURES


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def qtbot(qapp: Any, request: pytest.FixtureRequest) -> PatientQtBot:
    """pytest-qt's ``qtbot`` whose waits on conditions allow a busy machine its time
    (``tests/qt_waits.py``)."""
    return PatientQtBot(request)


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A started scripted OpenAI-compatible server (see ``tests/llm_server.py``); stopped,
    with its threads joined, after the test."""
    with LLMServer() as server:
        yield server
