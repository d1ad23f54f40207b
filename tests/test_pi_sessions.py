"""pi's session files live in Baton's data folder until their run is deleted; deleting a run
removes its own steps' files and nothing else (not a parent's, not a file a run file names
outside the sessions folder)."""

from __future__ import annotations

from pathlib import Path

from core.backends.pi_sessions import sessions_dir
from core.config.paths import data_dir
from core.model.events import Event, PlannedStep, RunFinished, RunStarted, StepFinished, StepStarted
from core.record.run_files import RunIndex
from tests.test_runs_cli import save


def pi_run(run_id: str, sessions: list[tuple[str, str | None]]) -> list[Event]:
    """A finished pi run whose steps name ``(session file, reused_from)``."""
    plan = [PlannedStep(agent="worker", task=f"t{i}", cwd="/w") for i in range(len(sessions))]
    events: list[Event] = [
        RunStarted(
            run_id=run_id, mode="chain", steps=plan, cwd="/w", started_at="2026-12-03T10:00:00"
        )
    ]
    for i, (session, reused) in enumerate(sessions):
        events.append(
            StepStarted(run_id=run_id, step=i, agent="worker", task=f"t{i}", backend="pi", cwd="/w")
        )
        events.append(
            StepFinished(
                run_id=run_id, step=i, status="ok", output="o", session=session, reused_from=reused
            )
        )
    events.append(RunFinished(run_id=run_id, status="ok"))
    return events


def test_sessions_are_in_the_private_data_folder() -> None:
    folder = sessions_dir()
    assert folder.parent == data_dir()
    assert folder.stat().st_mode & 0o777 == 0o700


def test_deleting_a_run_deletes_its_own_session_files_only(tmp_path: Path) -> None:
    folder = sessions_dir()
    parents = folder / "2026-12-03_parent.jsonl"
    own = folder / "2026-12-03_own.jsonl"
    other = folder / "2026-12-03_other.jsonl"
    outside = tmp_path / "project" / "notes.jsonl"
    outside.parent.mkdir()
    linked = folder / "2026-12-03_link.jsonl"
    for path in (parents, own, other, outside):
        path.write_text("{}\n")
    linked.symlink_to(outside)
    save(pi_run("parent", [(str(parents), None)]))
    save(
        pi_run(
            "child",
            [
                (str(parents), "parent"),  # reused: the parent's file, kept with the parent
                (str(own), None),
                (str(outside), None),  # a run file is data: never outside the folder
                (str(linked), None),
                ("relative.jsonl", None),
                ("a-claude-session-id", None),
            ],
        )
    )

    RunIndex().delete("child")

    assert not own.exists()
    assert parents.exists() and other.exists() and outside.exists() and linked.is_symlink()
    RunIndex().delete("parent")
    assert not parents.exists()
    assert other.exists()
