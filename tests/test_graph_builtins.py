"""The built-in graph presets run end to end with ``baton run`` against the scripted server:
review-loop converges, fan-in merges both plans, best-of-3 keeps the reviewer's pick once the
gate says continue."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.model.events import BestOfPicked, LoopFinished, RunFinished, event_from_json
from tests.graph_runs import agent_of, review
from tests.llm_server import LLMServer, Reply, last_user_text


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[Any]:
    capsys.readouterr()
    code = main(["run", *args, "--json", "--scope", "user"])
    events = [event_from_json(line) for line in capsys.readouterr().out.splitlines()]
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert code == 0, finished.error
    return events


def test_review_loop(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    reviews = iter([review("critical"), review("minor")])
    llm_server.responder = lambda body: Reply.answer(
        next(reviews) if agent_of(body) == "reviewer" else "changed"
    )
    events = run_json(capsys, "review-loop", "add retries", "--cwd", str(tmp_path))
    (end,) = [e for e in events if isinstance(e, LoopFinished)]
    assert (end.status, end.iterations) == ("converged", 2)
    assert len(llm_server.requests) == 4  # work, check, fix, check


def test_fan_in(llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    save_settings(llm_server.settings())
    llm_server.responder = lambda body: Reply.answer(
        "smallest plan" if "smallest" in last_user_text(body) else
        "thorough plan" if "thorough" in last_user_text(body) else "notes"
    )  # fmt: skip
    run_json(capsys, "fan-in", "add retries", "--cwd", str(tmp_path))
    merge = llm_server.requests[-1].user_text
    assert "## plan-simple\n\nsmallest plan" in merge
    assert "## plan-thorough\n\nthorough plan" in merge


def test_best_of_3(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings(policy={"write": "allow"}))
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.email=t@e", "-c", "user.name=T", "commit", "-q", "--allow-empty", "-m", "0"],
    ):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    written: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        agent = agent_of(body)
        if agent == "reviewer":
            return Reply.answer("attempt#3 is the best.\n" + review())
        if "Implement" in last_user_text(body) and not any(
            m.get("role") == "tool" for m in body["messages"]
        ):
            written.append(f"take {len(written) + 1}\n")
            return Reply.tool("write", {"path": "out.txt", "content": written[-1]})
        return Reply.answer("ok")

    llm_server.responder = respond
    events = run_json(capsys, "best-of-3", "a greeting", "--cwd", str(repo), "--gate", "continue")
    (picked,) = [e for e in events if isinstance(e, BestOfPicked)]
    assert (picked.winner, picked.by) == ("attempt#3", "judge")
    tools = [e for e in events if e.type == "tool_call_started"]
    third = next(e for e in tools if e.step is not None and _branch(events, e.step) == "attempt#3")
    assert (repo / "out.txt").read_text(encoding="utf-8") == third.arguments["content"]
    keep = llm_server.requests[-1].user_text
    assert keep.startswith('The change picked for "a greeting" is now in this folder.')
    listing = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list", "--porcelain"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert listing.count("worktree ") == 1
    assert len(written) == 3  # three takes were written, one kept


def _branch(events: list[Any], step: int) -> str | None:
    return next((e.branch for e in events if e.type == "step_started" and e.step == step), None)
