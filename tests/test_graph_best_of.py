"""best_of: N attempts in N worktrees, the judge's pick kept in the run's folder, the other
worktrees (and branches) removed."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path
from typing import Any

from core.model.events import BestOfPicked, StepStarted, ToolCallStarted
from tests.graph_runs import agent_of, graph_runner
from tests.llm_server import LLMServer, Reply

BEST = """\
name: best
mode: graph
steps:
  - name: attempt
    agent: worker
    task: "Write the greeting: $@"
    best_of: {n: 3, judge: pick}
  - name: pick
    agent: reviewer
    task: "Pick the best:\\n{outputs}"
"""


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True
    ).stdout


def repository(folder: Path) -> Path:
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.email", "t@example.com")
    git(folder, "config", "user.name", "T")
    (folder / "README.md").write_text("hello\n", encoding="utf-8")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "start")
    return folder


async def test_best_of_three_keeps_the_judges_pick_and_removes_the_rest(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    repo = repository(tmp_path / "repo")
    versions = itertools.count(1)

    def respond(body: dict[str, Any]) -> Reply:
        if agent_of(body) == "reviewer":
            return Reply.answer(
                'The best is attempt#2.\n```json\n{"passed": true, "issues": []}\n```'
            )
        if not any(m.get("role") == "tool" for m in body["messages"]):
            return Reply.tool(
                "write", {"path": "greeting.txt", "content": f"version {next(versions)}\n"}
            )
        return Reply.answer("written")

    llm_server.responder = respond
    runner, events = graph_runner(
        llm_server, BEST, repo, settings=llm_server.settings(policy={"write": "allow"})
    )
    result = await runner.run()
    assert result.status == "ok", result.error
    branches = {e.step: e.branch for e in events if isinstance(e, StepStarted) and e.branch}
    assert sorted(branches.values()) == ["attempt#1", "attempt#2", "attempt#3"]
    written = {
        branches[e.step]: e.arguments["content"]
        for e in events
        if isinstance(e, ToolCallStarted) and e.step in branches
    }
    (picked,) = [e for e in events if isinstance(e, BestOfPicked)]
    assert (picked.node, picked.winner, picked.by) == ("attempt", "attempt#2", "judge")
    judge_task = next(r.user_text for r in llm_server.requests if agent_of(r.body) == "reviewer")
    for branch in ("attempt#1", "attempt#2", "attempt#3"):
        assert f"## {branch}\n\nwritten" in judge_task
    # The winner's change is staged in the person's checkout; the others left no trace.
    assert (repo / "greeting.txt").read_text(encoding="utf-8") == written["attempt#2"]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["greeting.txt"]
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert git(repo, "branch", "--list", "baton/*") == ""
