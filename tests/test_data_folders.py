"""Baton's own folders are taken as there for a second once seen (a batch item asked for
them a dozen times, a look at the disk each), and a folder removed under a running app —
a person cleaning up — costs nothing written."""

from __future__ import annotations

import shutil

import pytest

from core.config import paths
from core.model.events import Log
from core.record.run_files import RunWriter, read_events


def test_a_removed_data_folder_is_made_again_once_the_second_has_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = paths.data_dir()
    shutil.rmtree(folder)
    monkeypatch.setattr(paths, "SEEN_FOR_S", 0.0)
    assert paths.data_dir().is_dir()


def test_a_run_file_is_written_when_its_folder_went_within_that_second() -> None:
    RunWriter("r-before").close()  # the runs folder is seen
    shutil.rmtree(paths.data_dir())
    writer = RunWriter("r-after")
    writer.write(Log(run_id="r-after", step=None, ts=0.0, level="info", message="kept"))
    writer.close()
    assert [e.message for e in read_events(writer.path) if isinstance(e, Log)] == ["kept"]
