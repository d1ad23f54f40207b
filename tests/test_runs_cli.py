"""``baton runs``: list, export, import and delete saved runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.cli import main
from core.model.events import Event, RunFinished, RunStarted, TextDelta
from core.record.liveness import LivenessLock
from core.record.run_files import (
    INTERRUPTED_ERROR,
    Redactor,
    RunIndex,
    RunWriter,
    load_run,
    run_file,
)
from tests.test_run_state import sample_run


def save(events: Sequence[Event], index: RunIndex | None = None) -> Path:
    writer = RunWriter(events[0].run_id, Redactor())
    for event in events:
        writer.write(event)
    writer.close()
    (index or RunIndex()).add_file(writer.path)
    return writer.path


def test_list_shows_saved_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "list"]) == 0
    assert "No saved runs yet." in capsys.readouterr().out
    save(sample_run())
    assert main(["runs", "list"]) == 0
    out = capsys.readouterr().out
    assert "r1" in out and "failed" in out and "implement x" in out
    assert out.splitlines()[0].split() == ["RUN", "STATUS", "TIME", "NAME", "USAGE"]
    assert main(["runs", "list", "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)
    assert record["status"] == "error"
    assert record["usage"]["input"] == 1200
    assert record["finished_at"] == "2026-12-03T10:00:01+00:00"


def test_export_markdown_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    save(sample_run())
    assert main(["runs", "export", "r1"]) == 0
    assert capsys.readouterr().out.startswith("# implement x")
    assert main(["runs", "export", "r1", "--format", "json"]) == 0
    events = json.loads(capsys.readouterr().out)
    assert events[0]["type"] == "run_started" and len(events) == len(sample_run())
    assert main(["runs", "export", "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_import_a_baton_run_file_and_refuse_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "copy.jsonl"
    elsewhere.write_text(
        "\n".join(e.model_dump_json() for e in sample_run()) + "\n", encoding="utf-8"
    )
    assert main(["runs", "import", str(elsewhere)]) == 0
    record = RunIndex().get("r1")
    assert record is not None and load_run(Path(record.path)) == sample_run()
    assert main(["runs", "import", str(elsewhere)]) == 2
    assert "already in the history" in capsys.readouterr().err


def test_import_rejects_unknown_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n", encoding="utf-8")
    assert main(["runs", "import", str(junk)]) == 2
    assert main(["runs", "import", str(tmp_path / "missing.jsonl")]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2 and all(line.startswith("baton runs import: ") for line in errors)


def test_import_a_pi_transcript(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    transcript = fixtures_dir / "pi" / "pi-1.6.0" / "simple.jsonl"
    assert main(["runs", "import", str(transcript)]) == 0
    [record] = RunIndex().list()
    assert record.status == "ok"
    assert record.usage.turns >= 1
    events = load_run(Path(record.path))
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)


def test_delete_removes_file_and_row(capsys: pytest.CaptureFixture[str]) -> None:
    path = save(sample_run())
    assert main(["runs", "delete", "r1"]) == 0
    assert not path.exists() and RunIndex().get("r1") is None
    assert main(["runs", "delete", "r1"]) == 2


def test_a_run_reads_running_while_its_owner_holds_the_lock_then_interrupted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    events = [e for e in sample_run() if not isinstance(e, RunFinished)]
    lock = LivenessLock(run_file(events[0].run_id))
    path = save(events)
    with open(path, "a", encoding="utf-8") as file:
        file.write('{"type": "text_delta", "run_id": "r1", "ste')  # the owner died mid-line
    assert RunIndex().get("r1").status == "running"  # type: ignore[union-attr]
    assert len(load_run(path)) == len(events)
    lock.release()  # what the operating system does when the owner dies

    assert main(["runs", "list"]) == 0
    assert " interrupted " in capsys.readouterr().out
    assert main(["runs", "list", "--json"]) == 0
    [record] = json.loads(capsys.readouterr().out)
    assert record["status"] == "interrupted" and record["error"] == INTERRUPTED_ERROR
    *kept, last = load_run(path)
    assert kept == events
    assert isinstance(last, RunFinished) and last.status == "interrupted"
    assert last.ts == max(e.ts for e in events)
    assert last.usage.input == 1200 and last.usage.turns == 2
    assert RunIndex().get("r1").finished_at is not None  # type: ignore[union-attr]
    assert len(load_run(path)) == len(events) + 1  # appended once, not at every look


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = save(sample_run()[:3])
    with open(path, "a", encoding="utf-8") as file:
        file.write('{"type": "text_delta", "run_id": "r1", "ste')
    events = load_run(path)
    # Indexing the unfinished, ownerless file already recorded it as interrupted.
    assert events[:3] == sample_run()[:3] and isinstance(events[3], RunFinished)
    assert len(events) == 4 and not any(isinstance(e, TextDelta) for e in events)


def test_an_index_from_before_run_origins_gets_the_column(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "runs.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE runs (id TEXT PRIMARY KEY, mode TEXT NOT NULL, preset TEXT,"
            " agents TEXT NOT NULL, args TEXT NOT NULL, cwd TEXT NOT NULL,"
            " started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL, duration_s REAL,"
            " usage TEXT NOT NULL, error TEXT, path TEXT NOT NULL)"
        )
        db.execute(
            "INSERT INTO runs VALUES ('old', 'single', NULL, '[\"scout\"]', '[]', '/w',"
            " '2026-01-01T00:00:00+00:00', NULL, 'ok', 1.0, '{}', NULL, '/w/old.jsonl')"
        )
    index = RunIndex(path)
    (record,) = index.list()
    assert record.id == "old" and record.origin is None
