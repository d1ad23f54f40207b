"""Hostile and broken definitions on the command line: ``baton agents``, ``baton presets``
and ``baton run`` against the scripted server."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.config import paths
from core.config.settings import save_settings
from core.model.events import RunStarted, event_from_json
from tests.llm_server import LLMServer, Reply

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def configured(llm_server: LLMServer) -> LLMServer:
    save_settings(llm_server.settings())
    return llm_server


def write_agent(folder: Path, name: str, front: str = "", body: str = "Do it.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(
        f"---\nname: {name}\ndescription: {name} agent\n{front}---\n{body}\n", encoding="utf-8"
    )
    return path


def alias_bomb() -> str:
    letters = "abcdefghi"
    lines = ["a: &a [" + ", ".join(["x"] * 9) + "]"]
    for before, name in itertools.pairwise(letters):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{before}"] * 9) + "]")
    return "\n".join(lines) + "\ntools: *i\n"


def baton(*args: str) -> subprocess.CompletedProcess[str]:
    """``baton`` in a child process: a hang fails the test at the timeout instead of
    hanging the suite."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_alias_bomb_is_refused_and_the_other_agents_still_run(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = tmp_path / ".baton" / "agents"
    bomb = write_agent(agents, "bomb", alias_bomb())
    write_agent(agents, "good", "tools: read\n")

    listed = baton("agents", "--json", "--cwd", str(tmp_path))
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert {"bomb", "good"} <= {a["name"] for a in report["agents"]}
    (problem,) = [d for d in report["diagnostics"] if d["path"] == str(bomb)]
    assert problem["severity"] == "error"
    assert "aliases expand to more than 10,000 values" in problem["message"]
    assert problem["line"] == 13  # the "tools: *i" line

    configured.queue(Reply.answer("fine"))
    ran = ["run", "--agent", "good", "--task", "hi", "--trust-project", "--cwd", str(tmp_path)]
    assert main(ran) == 0
    assert len(configured.requests) == 1
    capsys.readouterr()

    refused = ["run", "--agent", "bomb", "--task", "hi", "--trust-project"]
    assert main([*refused, "--cwd", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"agent 'bomb' cannot run: {bomb}:13: " in err
    assert len(configured.requests) == 1


def test_cut_short_yaml_is_an_error_with_its_line_and_never_runs(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_agent(paths.config_dir() / "agents", "lister", "model: m\ntools: [read, ls\n")
    assert main(["agents", "--json", "--cwd", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "lister" in [a["name"] for a in report["agents"]]  # listed, with its mark
    (problem,) = [d for d in report["diagnostics"] if d["path"] == str(path)]
    assert problem["line"] == 5
    assert "at line 5" in problem["message"] and problem["severity"] == "error"

    assert main(["run", "--agent", "lister", "--task", "x", "--cwd", str(tmp_path)]) == 2
    assert "'tools' cannot be read" in capsys.readouterr().err
    assert configured.requests == []


NINE_PARALLEL = "name: wide\nmode: parallel\nsteps:\n" + "".join(
    "  - {agent: scout, task: x}\n" for _ in range(9)
)


@pytest.mark.parametrize(
    ("name", "content", "line", "reason"),
    [
        ("badyaml", b"name: badyaml\nsteps: [\n  {agent: scout, task: x\n", 4, "not valid YAML"),
        ("five", b"name: five\nsteps: 5\n", 2, "steps: Input should be a valid list"),
        ("loop", b"name: loop\nmode: loop\nsteps: [{agent: scout, task: x}]\n", 2, "mode:"),
        ("empty", b"name: empty\nsteps: []\n", 2, "at least 1 item"),
        ("binary", b"name: binary\n\x00\x01\x02\xff", 2, "a binary file"),
        ("wide", NINE_PARALLEL.encode(), 3, "at most 8"),
        ("bomb", f"name: bomb\n{alias_bomb()}".replace("tools", "steps").encode(), 6, "aliases"),
    ],
)
def test_broken_presets_are_diagnosed_and_run_says_why(
    configured: LLMServer,
    tmp_path: Path,
    user_presets: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: bytes,
    line: int,
    reason: str,
) -> None:
    path = user_presets / f"{name}.yaml"
    path.write_bytes(content)

    assert main(["presets", "--json", "--cwd", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "implement" in [p["name"] for p in report["presets"]]
    (problem,) = [d for d in report["diagnostics"] if d["path"] == str(path)]
    assert reason in problem["message"]
    assert problem["line"] == line

    assert main(["run", name, "go", "--cwd", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"preset '{name}' cannot run: {path}:{line}: " in err and reason in err
    assert "unknown preset" not in err
    assert configured.requests == []


def test_preset_naming_an_unknown_agent_is_diagnosed(
    tmp_path: Path, user_presets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = user_presets / "review.yaml"
    path.write_text(
        "name: review\nsteps:\n  - {agent: scout, task: a}\n  - {agent: critic, task: b}\n",
        encoding="utf-8",
    )
    assert main(["presets", "--cwd", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    assert "review !" in table
    assert f"error: {path}:4: step 2: unknown agent 'critic'" in table


def test_user_text_is_never_expanded_again(
    configured: LLMServer, tmp_path: Path, user_presets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (user_presets / "recur.yaml").write_text(
        "name: recur\nmode: chain\nsteps:\n  - {agent: scout, task: 'start $1'}\n"
        "  - {agent: planner, task: 'then {previous}'}\n",
        encoding="utf-8",
    )
    configured.queue(Reply.answer("got {previous} and $1"), Reply.answer("ok"))
    assert main(["run", "recur", "X{previous}Y", "--cwd", str(tmp_path)]) == 0
    first, second = configured.requests
    assert first.user_text == "start X{previous}Y"
    assert second.user_text == "then got {previous} and $1"


def test_chain_takes_several_pairs_after_one_flag(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured.queue(Reply.answer("found"), Reply.answer("planned"))
    code = main(
        ["run", "--chain", "scout=find X", "planner=plan: {previous}", "--cwd", str(tmp_path)]
    )
    assert code == 0
    assert [r.user_text for r in configured.requests] == ["find X", "plan: found"]
    capsys.readouterr()

    assert main(["run", "--chain", "scout=find X", "planner", "--cwd", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--chain takes NAME=TASK pairs, not 'planner'" in err
    assert "--chain scout='find X' planner='plan: {previous}'" in err


def test_json_prints_run_started_first(
    configured: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json`` still starts with run_started; its new ``params`` field is empty when no
    agent of the run declares any."""
    configured.queue(Reply.answer("done"))
    assert main(["run", "--agent", "scout", "--task", "t", "--json", "--cwd", str(tmp_path)]) == 0
    first = event_from_json(capsys.readouterr().out.splitlines()[0])
    assert isinstance(first, RunStarted) and first.params == {}


def test_a_broken_override_is_not_replaced_by_the_preset_it_overrides(
    configured: LLMServer, tmp_path: Path, user_presets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = user_presets / "implement.yaml"
    path.write_text("name: implement\nmode: loop\nsteps: [{agent: worker, task: $@}]\n")
    assert main(["run", "implement", "x", "--cwd", str(tmp_path)]) == 2
    assert f"preset 'implement' cannot run: {path}:2: mode:" in capsys.readouterr().err
    assert configured.requests == []
