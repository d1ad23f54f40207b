"""Baton's own folders are made when asked for and missing: a folder removed under a
running app — a person cleaning up — costs nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

from core.config import paths
from core.model.events import Log
from core.record.run_files import RunWriter, read_events
from core.run.steer_spool import SteerMessage, SteerWatcher, post
from core.safety.rule_store import RuleStore


def test_a_removed_data_folder_is_made_again_when_next_asked_for() -> None:
    folder = paths.data_dir()
    shutil.rmtree(folder)
    assert paths.data_dir().is_dir()


def test_a_run_file_is_written_when_its_folder_was_removed() -> None:
    RunWriter("r-before").close()
    shutil.rmtree(paths.data_dir())
    writer = RunWriter("r-after")
    writer.write(Log(run_id="r-after", step=None, ts=0.0, level="info", message="kept"))
    writer.close()
    assert [e.message for e in read_events(writer.path) if isinstance(e, Log)] == ["kept"]


def test_a_rule_is_saved_when_the_config_folder_was_removed(tmp_path: Path) -> None:
    rules = RuleStore()  # made while the folder was there
    shutil.rmtree(paths.config_dir())
    rules.add(tmp_path, "allow", "read")
    assert [str(rule) for rule in RuleStore().for_project(tmp_path).rules["allow"]] == ["read"]


def test_a_steer_message_is_posted_when_the_data_folder_was_removed() -> None:
    taken: list[str] = []

    def deliver(step: int | None, text: str) -> int:
        taken.append(text)
        return 1

    watcher = SteerWatcher("r-live", deliver)
    shutil.rmtree(paths.data_dir())
    post("r-live", SteerMessage(text="look at the tests too"))
    assert watcher.take() == 1
    assert taken == ["look at the tests too"]
