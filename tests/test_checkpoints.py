"""Checkpoints, diffs and restores on real git repositories, with real runs: Baton's own agent
loop, its edit / write / bash tools, and the scripted LLM server (the only fake)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.cli import main
from core.config import paths
from core.model.events import Log, StepChanges
from core.record.run_files import RunIndex, load_run
from tests.git_repos import (
    changes_of,
    git,
    make_repo,
    run_parallel_edits,
    run_step,
    three_changes,
    user_state,
)
from tests.llm_server import LLMServer, Reply


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


async def test_a_step_s_edit_new_file_and_sed_are_its_changes_and_restore_undoes_all_three(
    llm_server: LLMServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = user_state(repo)
    three_changes(llm_server)
    events = await run_step(llm_server, repo)

    changes = changes_of(events)
    shown = {(c.path, c.status, c.added, c.removed) for c in changes.files}
    assert shown == {
        ("app.py", "modified", 1, 1),
        ("docs/new.md", "added", 1, 0),
        ("notes.txt", "modified", 1, 1),
    }  # run.log is ignored, staged.txt was changed before the step: neither is the step's
    after = user_state(repo)
    assert {k: after[k] for k in ("index", "stash", "reflog", "branches", "head")} == {
        k: before[k] for k in ("index", "stash", "reflog", "branches", "head")
    }
    assert set(after["status"].splitlines()) == {
        *before["status"].splitlines(),
        " M app.py",
        " M notes.txt",
        "?? docs/",
    }

    run_id = changes.run_id
    assert await cli("runs", "diff", run_id, "--step", "1") == 0
    patch = capsys.readouterr().out
    assert "-    return 'hello'\n+    return 'hi'" in patch
    assert "+++ b/docs/new.md" in patch and "-colour: red\n+colour: blue" in patch

    assert await cli("runs", "restore", run_id, "--step", "1") == 0
    assert "to before step 1: 3 files changed" in capsys.readouterr().out
    assert user_state(repo) == before
    assert (repo / "app.py").read_text(encoding="utf-8") == "def greet():\n    return 'hello'\n"
    assert not (repo / "docs").exists()
    assert (repo / "run.log").exists()  # ignored files are not the checkpoint's to touch

    # The restore is itself checkpointed: undoing it brings the step's work back.
    assert await cli("runs", "restore", run_id, "--undo") == 0
    said = capsys.readouterr().out  # what the undo did, not the restore's words again
    assert said.startswith(f"Undid the latest restore of {repo} (to before step 1): the folder")
    assert "back as it was before that restore; 3 files changed" in said
    assert "Restored" not in said
    assert (repo / "docs" / "new.md").read_text(encoding="utf-8") == "# New\n"
    assert "blue" in (repo / "notes.txt").read_text(encoding="utf-8")
    recorded = [e for e in load_run(run_file_of(run_id)) if isinstance(e, StepChanges)]
    assert [e.kind for e in recorded] == ["step", "restore", "restore"]


async def cli(*args: str) -> int:
    """``baton ...`` as typed (its own event loop, so off this test's)."""
    return await asyncio.to_thread(main, list(args))


def run_file_of(run_id: str) -> Path:
    record = RunIndex().get(run_id)
    assert record is not None
    return Path(record.path)


async def test_restore_over_a_commit_made_since_is_refused_with_the_reason(
    llm_server: LLMServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    three_changes(llm_server)
    run_id = changes_of(await run_step(llm_server, repo)).run_id
    git(repo, "commit", "-q", "-am", "keep the agent's work")
    committed = git(repo, "rev-parse", "HEAD")

    assert await cli("runs", "restore", run_id, "--step", "1") == 1
    message = capsys.readouterr().err
    assert "refused" in message and "HEAD moved since the run's last checkpoint" in message
    assert "--yes" in message
    assert "hi" in (repo / "app.py").read_text(encoding="utf-8")
    assert git(repo, "rev-parse", "HEAD") == committed


async def test_restore_over_later_edits_lists_them_and_needs_yes(
    llm_server: LLMServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    three_changes(llm_server)
    run_id = changes_of(await run_step(llm_server, repo)).run_id
    (repo / "app.py").write_text("my own edit\n", encoding="utf-8")

    assert await cli("runs", "restore", run_id, "--step", "1") == 1
    message = capsys.readouterr().err
    assert "1 file changed since the run's last checkpoint" in message
    assert "modified app.py" in message
    assert (repo / "app.py").read_text(encoding="utf-8") == "my own edit\n"

    assert await cli("runs", "restore", run_id, "--step", "1", "--yes") == 0
    assert "hello" in (repo / "app.py").read_text(encoding="utf-8")
    assert await cli("runs", "restore", run_id, "--undo") == 0
    assert (repo / "app.py").read_text(encoding="utf-8") == "my own edit\n"


async def test_deleting_the_run_prunes_its_refs(llm_server: LLMServer, repo: Path) -> None:
    llm_server.queue(Reply.answer("Nothing to change."))
    events = await run_step(llm_server, repo)
    changes = changes_of(events)
    assert changes.files == []
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/baton").split()
    assert refs == [f"refs/baton/{changes.run_id}/1/after", f"refs/baton/{changes.run_id}/1/before"]
    RunIndex().delete(changes.run_id)
    assert git(repo, "for-each-ref", "refs/baton") == ""


async def test_a_filter_driver_planted_in_the_repository_config_never_runs(
    llm_server: LLMServer, repo: Path
) -> None:
    marker = repo.parent / "PWNED"
    llm_server.queue(
        Reply.tool(
            "bash",
            {
                "command": f"git config filter.evil.clean 'touch {marker}; cat' && "
                f"git config core.fsmonitor 'touch {marker}' && "
                "echo '*.txt filter=evil' > .gitattributes && echo changed > notes.txt"
            },
        ),
        Reply.answer("Done."),
    )
    events = await run_step(llm_server, repo)
    assert {c.path for c in changes_of(events).files} == {".gitattributes", "notes.txt"}
    assert not marker.exists()


async def test_a_folder_outside_git_is_recorded_in_a_private_shadow_repository(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("colour: red\n", encoding="utf-8")
    llm_server.queue(
        Reply.tool("bash", {"command": "sed -i 's/red/blue/' notes.txt"}), Reply.answer("ok")
    )
    changes = changes_of(await run_step(llm_server, folder))
    assert changes.shadow and Path(changes.git_dir).is_relative_to(paths.data_dir())
    assert [(c.path, c.status) for c in changes.files] == [("notes.txt", "modified")]
    assert not (folder / ".git").exists()
    assert await cli("runs", "restore", changes.run_id, "--step", "1") == 0
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "colour: red\n"


async def test_a_large_folder_outside_git_says_why_it_has_no_checkpoints(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "blob.bin").write_bytes(b"\0" * (2 * 1024 * 1024))
    llm_server.queue(Reply.answer("ok"))
    events = await run_step(llm_server, folder, checkpoints={"max_folder_mb": 1})
    assert not [e for e in events if isinstance(e, StepChanges)]
    (notice,) = [e for e in events if isinstance(e, Log) and e.level == "warning"]
    assert "more than the 1 MB limit" in notice.message and "max_folder_mb" in notice.message


async def test_checkpoints_switched_off_record_nothing(llm_server: LLMServer, repo: Path) -> None:
    llm_server.queue(Reply.answer("ok"))
    events = await run_step(llm_server, repo, checkpoints={"enabled": False})
    assert not [e for e in events if isinstance(e, StepChanges)]
    assert git(repo, "for-each-ref", "refs/baton") == ""


async def test_a_parallel_run_has_one_checkpoint_pair_for_the_whole_run(
    llm_server: LLMServer, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Parallel tasks share the folder at once: one pair around them all, the changes of
    both tasks together (not attributed to either), a diff and a restore of the whole run."""
    before = user_state(repo)
    events = await run_parallel_edits(llm_server, repo)

    (changes,) = [e for e in events if isinstance(e, StepChanges)]
    assert (changes.kind, changes.step) == ("run", None)
    assert {(c.path, c.status) for c in changes.files} == {
        ("app.py", "modified"),
        ("docs/new.md", "added"),
    }
    run_id = changes.run_id
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/baton").split()
    assert refs == [f"refs/baton/{run_id}/run/after", f"refs/baton/{run_id}/run/before"]
    after = user_state(repo)
    kept = ("index", "stash", "reflog", "branches", "head")
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}

    assert await cli("runs", "diff", run_id) == 0
    patch = capsys.readouterr().out
    assert "+    return 'hi'" in patch and "+++ b/docs/new.md" in patch
    assert await cli("runs", "diff", run_id, "--step", "2") == 1
    assert "recorded for the whole run, not per task" in capsys.readouterr().err

    assert await cli("runs", "restore", run_id, "--step", "1") == 0
    assert "to before the run: 2 files changed" in capsys.readouterr().out
    assert user_state(repo) == before
    RunIndex().delete(run_id)
    assert git(repo, "for-each-ref", "refs/baton") == ""
