"""Worktree isolation on a real git repository: a real run works in its own worktree on branch
``baton/<run-id>``; the person's checkout is untouched until they merge; discard removes the
worktree and the branch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.cli import main
from core.model.errors import RunError
from core.model.events import Event, RunStarted, StepChanges
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from tests.git_repos import git, isolated_run, make_repo, user_state
from tests.llm_server import LLMServer

KEPT = ("status", "index", "stash", "head")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = make_repo(tmp_path / "repo")
    (folder / ".worktreeinclude").write_text("debug.log\n", encoding="utf-8")
    return folder


async def started_run(server: LLMServer, folder: Path) -> tuple[RunStarted, list[Event]]:
    events = await isolated_run(server, folder)
    started = events[0]
    assert isinstance(started, RunStarted) and started.worktree is not None
    return started, events


def exists(path: str) -> bool:
    return Path(path).exists()


async def cli(*args: str) -> int:
    return await asyncio.to_thread(main, list(args))


async def test_the_run_works_in_its_worktree_and_a_fast_forward_brings_its_work_home(
    llm_server: LLMServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = user_state(repo)
    main_commit = git(repo, "rev-parse", "main")
    started, events = await started_run(llm_server, repo)
    info = started.worktree
    assert info is not None
    worktree = Path(info.path)
    assert info.branch == f"baton/{started.run_id}" and info.base == main_commit.strip()
    assert started.cwd == str(worktree) and not worktree.is_relative_to(repo)
    assert (worktree / "debug.log").read_text(encoding="utf-8") == "ignored\n"  # included
    assert "hi" in (worktree / "app.py").read_text(encoding="utf-8")
    changes = [e for e in events if isinstance(e, StepChanges)]
    assert {c.path for c in changes[0].files} == {"app.py", "docs/new.md", "notes.txt"}

    after = user_state(repo)  # the person's checkout: not a byte changed
    assert {k: after[k] for k in KEPT} == {k: before[k] for k in KEPT}
    assert git(repo, "rev-parse", "main") == main_commit
    assert "hello" in (repo / "app.py").read_text(encoding="utf-8")

    assert await cli("runs", "merge", started.run_id) == 0
    assert "fast-forwarded" in capsys.readouterr().out
    assert "hi" in (repo / "app.py").read_text(encoding="utf-8")
    assert (repo / "docs" / "new.md").exists()
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == f"Baton run {started.run_id}"
    assert not exists(info.path)
    assert git(repo, "branch", "--list", info.branch) == ""
    assert "staged.txt" in git(repo, "diff", "--cached", "--name-only")  # still staged

    assert await cli("runs", "discard", started.run_id) == 1  # merged: nothing left to discard
    err = capsys.readouterr().err
    assert err == (
        f"baton runs discard: nothing to discard: the worktree {info.path} and the branch "
        f"{info.branch} are gone already (the run was merged, or discarded before)\n"
    )


async def test_discard_removes_the_worktree_and_the_branch(
    llm_server: LLMServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = user_state(repo)
    started, _events = await started_run(llm_server, repo)
    info = started.worktree
    assert info is not None and exists(info.path)
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/baton").split() == [
        f"refs/heads/{info.branch}"
    ]

    assert await cli("runs", "discard", started.run_id) == 0
    assert "Removed the worktree" in capsys.readouterr().out
    assert not exists(info.path)
    assert git(repo, "branch", "--list", info.branch) == ""
    assert git(repo, "worktree", "list").count("\n") == 1
    assert user_state(repo) == before


async def test_a_worktree_run_outside_git_is_refused_before_anything_runs(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    request = RunRequest(
        mode="single",
        steps=[StepSpec(agent="worker", task="x")],
        cwd=tmp_path,
        isolation="worktree",
    )
    with pytest.raises(RunError, match="needs a git repository"):
        await Runner(request, settings=llm_server.settings()).run()
    assert llm_server.requests == []


async def test_a_worktree_that_cannot_be_made_ends_the_run_with_the_reason(
    llm_server: LLMServer, repo: Path
) -> None:
    git(repo, "branch", "baton/taken")
    request = RunRequest(
        mode="single",
        steps=[StepSpec(agent="worker", task="x")],
        cwd=repo,
        isolation="worktree",
    )
    runner = Runner(request, settings=llm_server.settings(), run_id="taken")
    finished = await runner.run()
    assert finished.status == "error"
    assert finished.error is not None and "baton/taken" in finished.error
    assert "already exists" in finished.error
    assert llm_server.requests == []
