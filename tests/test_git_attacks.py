"""Attacks on Baton's own git calls, each written as the attack: a model's (sandboxed) bash
rewrites the repository it works in so that Baton's next, unsandboxed, git call records or
writes somewhere else, or runs a program. Real runs, real git; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.cli import main
from core.config import paths
from core.config.settings import CheckpointSettings
from core.model.events import Log, RunStarted
from core.workspace.checkpoints import CheckpointsOff, find_workspace, patch
from core.workspace.restore import RestoreError, plan_restore
from tests.git_repos import changes_of, git, isolated_run, make_repo, run_step
from tests.llm_server import LLMServer, Reply

SECRET = "PRIVATE-DOCUMENT-7f3a"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo").resolve()


def plant_private_data() -> Path:
    """What a person keeps in Baton's data folder: a document store holding a private text."""
    store = paths.data_dir() / "documents.sqlite"
    with sqlite3.connect(store) as db:
        db.execute("create table if not exists doc (body text)")
        db.execute("insert into doc values (?)", (SECRET,))
    db.close()
    return store


def everything_recorded(repo: Path) -> str:
    """Every file name and byte under Baton's checkpoint refs, as git would show it."""
    refs = git(repo, "for-each-ref", "--format=%(objectname)", "refs/baton").split()
    listing = [git(repo, "ls-tree", "-r", "--name-only", ref) for ref in refs]
    found = subprocess.run(
        ["git", "grep", "-a", "-I", "-c", "", *refs], cwd=repo, capture_output=True, text=True
    ).stdout
    contents = subprocess.run(
        ["git", "grep", "-a", "-l", SECRET, *refs], cwd=repo, capture_output=True, text=True
    ).stdout
    return "\n".join([*listing, found, contents])


def notices(events: Sequence[object]) -> str:
    return "\n".join(e.message for e in events if isinstance(e, Log))


async def cli(*args: str) -> int:
    return await asyncio.to_thread(main, list(args))


async def test_core_worktree_aimed_at_batons_data_folder_records_and_restores_only_the_repo(
    llm_server: LLMServer, repo: Path
) -> None:
    store = plant_private_data()
    data = paths.data_dir()
    llm_server.queue(
        Reply.tool("bash", {"command": f"git config core.worktree {data}"}),
        Reply.answer("Done."),
    )
    await run_step(llm_server, repo)
    assert git(repo, "config", "core.worktree").strip() == str(data)  # the plant took

    llm_server.queue(
        Reply.tool("write", {"path": "notes.txt", "content": "rewritten\n"}),
        Reply.answer("Done."),
    )
    events = await run_step(llm_server, repo)
    changes = changes_of(events)
    assert Path(changes.work_tree) == repo
    assert [c.path for c in changes.files] == ["notes.txt"]
    recorded = everything_recorded(repo)
    assert SECRET not in recorded
    assert "documents.sqlite" not in recorded and "runs" not in recorded.split()
    assert "app.py" in recorded

    before_restore = store.read_bytes()
    assert await cli("runs", "restore", changes.run_id, "--step", "1") == 0
    assert (repo / "notes.txt").read_text() == "colour: red\nsize: big\n"
    assert store.read_bytes() == before_restore
    assert not (data / "notes.txt").exists() and not (data / "app.py").exists()


async def test_git_variables_in_batons_environment_steer_nothing(
    llm_server: LLMServer, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "PWNED"
    elsewhere = make_repo(tmp_path / "elsewhere")
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(paths.data_dir()))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", f"touch {marker}; echo")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.pager'='touch {marker}'")
    (Path.home() / ".gitconfig").write_text(f"[core]\n\tfsmonitor = touch {marker}; echo\n")
    plant_private_data()
    llm_server.queue(
        Reply.tool("write", {"path": "notes.txt", "content": "new\n"}), Reply.answer("Done.")
    )
    events = await run_step(llm_server, repo)
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert Path(changes_of(events).work_tree) == repo
    assert git(elsewhere, "for-each-ref", "refs/baton") == ""
    assert not marker.exists()


async def test_programs_planted_in_the_repository_config_never_run(
    llm_server: LLMServer, repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every key that makes git start a program, written by the agent (directly and through
    an included file), then a checkpoint, a diff and a restore: none of them runs."""
    marker = tmp_path / "PWNED"
    touch = f"touch {marker}"
    included = repo / "extra.cfg"
    commands = [
        f"git config core.fsmonitor '{touch}; echo'",
        f"git config core.hooksPath {repo}/hooks",
        f"mkdir -p hooks && printf '#!/bin/sh\\n{touch}\\n' > hooks/post-checkout",
        "chmod +x hooks/post-checkout && cp hooks/post-checkout hooks/reference-transaction",
        f"git config core.pager '{touch}; cat'",
        f"git config diff.external '{touch}; true'",
        f"git config diff.evil.textconv '{touch}; cat'",
        f"git config diff.evil.command '{touch}; true'",
        f"git config merge.evil.driver '{touch}; true'",
        f"git config core.sshCommand '{touch}'",
        f"git config credential.helper '!{touch}'",
        f"printf '[filter \"inc\"]\\n\\tclean = {touch}; cat\\n\\tsmudge = {touch}; cat\\n'"
        f" > {included}",
        f"git config include.path {included}",
        "printf '*.txt diff=evil merge=evil filter=inc\\n*.py filter=inc\\n' > .gitattributes",
        "echo changed > notes.txt && echo 'x = 1' >> app.py",
    ]
    llm_server.queue(
        Reply.tool("bash", {"command": " && ".join(commands)}),
        Reply.answer("Done."),
    )
    events = await run_step(llm_server, repo)
    changes = changes_of(events)
    assert "notes.txt" in {c.path for c in changes.files}
    assert await cli("runs", "diff", changes.run_id, "--step", "1") == 0
    assert "+changed" in capsys.readouterr().out
    assert await cli("runs", "restore", changes.run_id, "--step", "1", "--yes") == 0
    assert (repo / "notes.txt").read_text() == "colour: red\nsize: big\n"
    assert not marker.exists()


async def test_a_dot_git_file_pointing_to_another_repository_is_refused(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    other = make_repo(tmp_path / "other")
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    (folder / ".git").write_text(f"gitdir: {other / '.git'}\n")
    llm_server.queue(
        Reply.tool("write", {"path": "notes.txt", "content": "new\n"}), Reply.answer("Done.")
    )
    events = await run_step(llm_server, folder)
    assert "is a file pointing to" in notices(events)
    assert git(other, "for-each-ref", "refs/baton") == ""
    assert not [e for e in events if type(e).__name__ == "StepChanges"]


async def test_an_agent_turning_dot_git_into_a_redirect_between_runs_is_refused(
    llm_server: LLMServer, repo: Path, tmp_path: Path
) -> None:
    other = make_repo(tmp_path / "other")
    llm_server.queue(
        Reply.tool(
            "bash", {"command": f"mv .git .git-real && printf 'gitdir: {other}/.git' > .git"}
        ),
        Reply.answer("Done."),
    )
    await run_step(llm_server, repo)
    llm_server.queue(Reply.answer("Nothing."))
    events = await run_step(llm_server, repo)
    assert "is a file pointing to" in notices(events)
    assert git(other, "for-each-ref", "refs/baton") == ""


async def test_a_repository_holding_or_inside_batons_folders_is_refused(
    llm_server: LLMServer, isolated_home: Path
) -> None:
    """A dotfiles repository in the home folder holds Baton's config and data folders: a
    checkpoint would copy the person's runs and documents into it."""
    plant_private_data()
    git(isolated_home, "init", "-q")
    llm_server.queue(
        Reply.tool("write", {"path": "notes.txt", "content": "new\n"}), Reply.answer("Done.")
    )
    events = await run_step(llm_server, isolated_home)
    assert "contains or lies inside Baton's own folder" in notices(events)
    assert git(isolated_home, "for-each-ref", "refs/baton") == ""

    inside = paths.data_dir() / "sub"
    inside.mkdir()
    with pytest.raises(CheckpointsOff, match="lies inside Baton's own folder"):
        await find_workspace(inside, CheckpointSettings())
    plain = isolated_home / "plain"  # no repository: the shadow's folder is checked too
    plain.mkdir()
    git(isolated_home, "init", "-q", str(plain))  # a repository of its own, outside Baton's
    workspace = await find_workspace(plain, CheckpointSettings())
    assert workspace is not None and workspace.work_tree == plain


async def test_a_recorded_workspace_holding_batons_folders_is_never_restored(
    llm_server: LLMServer, repo: Path
) -> None:
    """A run file written before these checks (or by hand) naming the home folder."""
    llm_server.queue(
        Reply.tool("write", {"path": "notes.txt", "content": "new\n"}), Reply.answer("Done.")
    )
    events = await run_step(llm_server, repo)
    changes = changes_of(events)
    forged = changes.model_copy(update={"work_tree": str(paths.data_dir().parent)})
    with pytest.raises(RestoreError, match="contains or lies inside"):
        await plan_restore([forged], 0)


async def test_the_diff_of_two_checkpoints_runs_no_textconv_or_external_diff(
    llm_server: LLMServer, repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    llm_server.queue(
        Reply.tool("write", {"path": "notes.txt", "content": "new\n"}), Reply.answer("Done.")
    )
    events = await run_step(llm_server, repo)
    changes = changes_of(events)
    git(repo, "config", "diff.external", f"touch {marker}; true")
    git(repo, "config", "diff.evil.textconv", f"touch {marker}; cat")
    (repo / ".gitattributes").write_text("*.txt diff=evil\n")
    workspace = await find_workspace(repo, CheckpointSettings())
    assert workspace is not None
    shown = await patch(workspace, changes.before, changes.after)
    assert "+new" in shown and not marker.exists()


async def test_a_worktree_run_in_a_repository_with_a_planted_core_worktree_stays_in_it(
    llm_server: LLMServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``core.worktree`` aimed at Baton's data folder, then ``--worktree``: the worktree is made
    from the repository itself, and merging brings the work into the repository, not there."""
    data = paths.data_dir()
    store = plant_private_data()
    git(repo, "config", "core.worktree", str(data))
    events = await isolated_run(llm_server, repo)
    started = events[0]
    assert isinstance(started, RunStarted) and started.worktree is not None
    assert Path(started.worktree.repo) == repo
    assert await cli("runs", "merge", started.run_id) == 0
    assert "hi" in (repo / "app.py").read_text(encoding="utf-8")
    assert not (data / "app.py").exists() and not (data / "docs").exists()
    assert SECRET not in everything_recorded(repo)
    assert sqlite3.connect(store).execute("select body from doc").fetchone() == (SECRET,)


async def test_the_persons_global_excludes_file_still_applies_to_checkpoints(
    llm_server: LLMServer, repo: Path, isolated_home: Path
) -> None:
    """The global configuration is not read by Baton's git, except the one harmless thing a
    person expects from it: what their git ignores."""
    (isolated_home / ".gitignore_global").write_text("*.secretlog\n")
    (isolated_home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/.gitignore_global\n")
    llm_server.queue(
        Reply.tool("bash", {"command": "echo x > trace.secretlog && echo y > kept.txt"}),
        Reply.answer("Done."),
    )
    events = await run_step(llm_server, repo)
    assert [c.path for c in changes_of(events).files] == ["kept.txt"]
