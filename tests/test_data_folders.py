"""Baton's own folders are made when asked for and missing: a folder removed under a
running app — a person cleaning up — costs nothing written."""

from __future__ import annotations

import shutil

from core.config import paths
from core.model.events import Log
from core.record.run_files import RunWriter, read_events


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
