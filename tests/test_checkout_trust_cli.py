"""A hostile checkout against the real Claude Code and pi CLIs: nothing it names runs before
trust.

The folder carries no agent files, only what the CLIs read by themselves: Claude Code's
``.claude/settings.json`` (``apiKeyHelper``, ``SessionStart`` and ``UserPromptSubmit`` hooks,
``enableAllProjectMcpServers``), ``.claude/settings.local.json`` and a ``.mcp.json`` server;
pi's ``.pi/settings.json`` (a shell prefix, a package) and ``.pi/extensions``. Every program
they name leaves a marker file when it runs. Untrusted, the run is refused (the question lists
every program with its command line); run without the project's files, no marker appears;
trusted, the programs are listed in the step (and Claude's hooks do run).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.config.settings import Settings
from core.definitions.agents import AgentCatalog, AgentDefinition
from core.model.events import Event, Log, StepFinished
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.approvals import approve_all, deny_all
from core.safety.trust import TrustStore
from core.safety.untrusted import UntrustedProjectError
from tests import real_clis
from tests.anthropic_server import AnthropicServer, reply
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.integration

SCOUT = AgentDefinition(
    name="scout", description="d", tools=("read",), system_prompt="You are the scout."
)
BASHER = AgentDefinition(
    name="scout", description="d", tools=("read", "bash"), system_prompt="You are the scout."
)


def _touch(markers: Path, name: str) -> str:
    return f"touch {markers / name}"


def hostile_claude_checkout(work: Path, markers: Path) -> None:
    """Everything Claude Code would run by itself from a folder, each leaving a marker."""
    (work / ".claude").mkdir(parents=True)
    settings = {
        "apiKeyHelper": f"{_touch(markers, 'api-key-helper')}; echo sk-ant-test-dummy",
        "enableAllProjectMcpServers": True,
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": _touch(markers, "session-start")}]}
            ],
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": _touch(markers, "prompt-submit")}]}
            ],
        },
    }
    (work / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    local = {
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": _touch(markers, "local-hook")}]}
            ]
        }
    }
    (work / ".claude" / "settings.local.json").write_text(json.dumps(local), encoding="utf-8")
    server = {"command": "sh", "args": ["-c", _touch(markers, "mcp-server")]}
    (work / ".mcp.json").write_text(json.dumps({"mcpServers": {"helper": server}}))


def hostile_pi_checkout(work: Path, markers: Path) -> None:
    """What pi reads from a folder by itself: settings naming programs, and an extension."""
    (work / ".pi" / "extensions").mkdir(parents=True)
    settings = {
        "shellCommandPrefix": f"{_touch(markers, 'shell-prefix')};",
        "packages": ["npm:baton-hostile-package-that-does-not-exist"],
    }
    (work / ".pi" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    extension = (
        'import { writeFileSync } from "node:fs";\n'
        f'writeFileSync("{markers / "extension"}", "ran");\n'
        "export default function (pi) {}\n"
    )
    (work / ".pi" / "extensions" / "hostile.ts").write_text(extension, encoding="utf-8")


def _runner(request: RunRequest, settings: Settings, events: list[Event]) -> Runner:
    return Runner(
        request,
        settings=settings,
        responder=deny_all,
        listeners=[events.append],
        record=False,
        agents=AgentCatalog(agents=[SCOUT]),
    )


def _logs(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, Log)]


def _marks(markers: Path) -> set[str]:
    return {p.name for p in markers.iterdir()}


# ------------------------------------------------------------------------------ Claude Code


@pytest.fixture(params=real_clis.CLAUDE_CLIS, ids=lambda cli: cli.name)
def offline_claude(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, AnthropicServer]:
    path = real_clis.find(request.param, monkeypatch)
    server = AnthropicServer()
    server.__enter__()
    request.addfinalizer(lambda: server.__exit__(None, None, None))
    real_clis.point_claude_at(server.url, monkeypatch)
    return path, server


async def _claude_run(
    claude: Path, server: AnthropicServer, work: Path, **request_fields: Any
) -> tuple[str, list[Event]]:
    server.script = [reply("All done.")]
    request = RunRequest(
        mode="single",
        steps=[StepSpec("scout", "Say done")],
        cwd=work,
        backend="claude",
        **request_fields,
    )
    events: list[Event] = []
    runner = _runner(request, Settings(claude_path=str(claude)), events)
    result = await asyncio.wait_for(runner.run(), 120)
    finished = [e for e in events if isinstance(e, StepFinished)]
    assert finished and finished[-1].output == "All done.", events
    return result.status, events


async def test_a_hostile_claude_checkout_runs_nothing_before_trust(
    offline_claude: tuple[Path, AnthropicServer], tmp_path: Path
) -> None:
    claude, server = offline_claude
    work, markers = tmp_path / "work", tmp_path / "markers"
    markers.mkdir()
    hostile_claude_checkout(work, markers)

    # No agent files, yet the run is refused, and the question names every program.
    request = RunRequest(mode="single", steps=[StepSpec("scout", "x")], cwd=work, backend="claude")
    with pytest.raises(UntrustedProjectError) as refused:
        _runner(request, Settings(claude_path=str(claude)), []).prepare()
    text = str(refused.value)
    for marker in ("api-key-helper", "session-start", "prompt-submit", "local-hook", "mcp-server"):
        assert str(markers / marker) in text
    assert _marks(markers) == set()

    # "Run without the project's files": the CLI starts, and loads none of them.
    status, events = await _claude_run(claude, server, work, scope="user")
    assert status == "ok"
    assert _marks(markers) == set()
    assert any("not loaded" in m and "session-start" in m for m in _logs(events))

    # Trusted: the step lists what the settings run, and the hooks do run.
    TrustStore().trust(work)
    status, events = await _claude_run(claude, server, work)
    assert status == "ok"
    shown = [m for m in _logs(events) if m.startswith("the trusted project's settings run")]
    assert shown and all(str(markers / m) in shown[0] for m in ("session-start", "mcp-server"))
    assert _marks(markers) == {
        "api-key-helper",
        "session-start",
        "prompt-submit",
        "local-hook",
        "mcp-server",
    }

    # A changed hook asks again, with the diff; and is not loaded meanwhile.
    for path in markers.iterdir():
        path.unlink()
    settings = json.loads((work / ".claude" / "settings.json").read_text())
    settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] = _touch(markers, "changed")
    (work / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    with pytest.raises(UntrustedProjectError):
        _runner(request, Settings(claude_path=str(claude)), []).prepare()
    (change,) = TrustStore().changes(work)
    assert change.path == ".claude/settings.json" and str(markers / "changed") in change.diff
    status, events = await _claude_run(claude, server, work, scope="user")
    assert status == "ok" and _marks(markers) == set()


# ------------------------------------------------------------------------------------- pi


@pytest.fixture(params=real_clis.PI_CLIS, ids=lambda cli: cli.name)
def real_pi(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    llm_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[str, Path, Path]:
    executable = real_clis.find(request.param, monkeypatch)
    return request.param.name, executable, real_clis.configure_pi(tmp_path, llm_server, monkeypatch)


async def _pi_run(
    pi: Path, server: LLMServer, work: Path, **request_fields: Any
) -> tuple[str, list[Event]]:
    server.queue(Reply.tool("bash", {"command": "echo hi"}), Reply.answer("All done."))
    request = RunRequest(
        mode="single",
        steps=[StepSpec("scout", "Say done")],
        cwd=work,
        backend="pi",
        **request_fields,
    )
    events: list[Event] = []
    runner = Runner(
        request,
        settings=Settings(pi_path=str(pi)),
        responder=approve_all,
        listeners=[events.append],
        record=False,
        agents=AgentCatalog(agents=[BASHER]),
    )
    result = await asyncio.wait_for(runner.run(), 120)
    return result.status, events


async def test_a_hostile_pi_checkout_runs_nothing_before_trust(
    real_pi: tuple[str, Path, Path], llm_server: LLMServer, tmp_path: Path
) -> None:
    name, pi, work = real_pi
    markers = tmp_path / "markers"
    markers.mkdir()
    hostile_pi_checkout(work, markers)

    request = RunRequest(mode="single", steps=[StepSpec("scout", "x")], cwd=work, backend="pi")
    with pytest.raises(UntrustedProjectError) as refused:
        _runner(request, Settings(pi_path=str(pi)), []).prepare()
    assert str(markers / "shell-prefix") in str(refused.value)
    assert ".pi/extensions/hostile.ts" in str(refused.value)
    assert "baton-hostile-package" in str(refused.value)

    status, events = await _pi_run(pi, llm_server, work, scope="user")
    assert _marks(markers) == set()
    if name == "pi-0.73":
        # pi 0.73 cannot ignore the folder's settings: the step is refused, never started.
        assert status == "error"
        finished = [e for e in events if isinstance(e, StepFinished)]
        assert finished and "always loads this folder's .pi settings" in (finished[-1].error or "")
    else:
        assert status == "ok", events
        assert any("not loaded" in m and "shell-prefix" in m for m in _logs(events))

    TrustStore().trust(work)
    status, events = await _pi_run(pi, llm_server, work)
    assert status == "ok", events
    shown = [m for m in _logs(events) if m.startswith("the trusted project's settings run")]
    assert shown and str(markers / "shell-prefix") in shown[0]
    assert "never loaded" in shown[0]  # the extension: Baton starts pi without extensions
    assert _marks(markers) == {"shell-prefix"}  # the trusted prefix ran; no extension did
