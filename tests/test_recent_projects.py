"""Recent projects: what File ▸ Open Recent lists and which project a start-up opens."""

from __future__ import annotations

from pathlib import Path

from core.config.paths import config_dir
from core.config.recent_projects import (
    FILE_NAME,
    KEEP,
    forget_projects,
    is_no_project,
    recent_projects,
    remember_project,
    start_folder,
)


def test_newest_first_once_each_and_at_most_keep(tmp_path: Path) -> None:
    folders = [tmp_path / f"p{n}" for n in range(KEEP + 3)]
    for folder in folders:
        folder.mkdir()
        remember_project(folder)
    remember_project(folders[3])
    recent = recent_projects()
    assert recent[0] == folders[3].resolve()
    assert len(recent) == KEEP and len(set(recent)) == KEEP
    forget_projects()
    assert recent_projects() == []


def test_a_deleted_project_or_a_broken_file_is_skipped(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    remember_project(gone)
    gone.rmdir()
    assert recent_projects() == []
    (config_dir() / FILE_NAME).write_text("{not json", encoding="utf-8")
    assert recent_projects() == []
    (config_dir() / FILE_NAME).write_text('{"recent": [1, null, ""]}', encoding="utf-8")
    assert recent_projects() == []
    kept = tmp_path / "kept"
    kept.mkdir()
    assert remember_project(kept) == [kept.resolve()]  # a broken file is replaced whole


def test_a_desktop_start_opens_the_last_project_never_the_home_folder(
    isolated_home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert is_no_project(isolated_home) and is_no_project(Path("/"))
    assert start_folder(isolated_home) is None  # nothing opened yet: the window asks
    assert start_folder(Path("/")) is None
    assert start_folder(project) == project  # started in a project (a terminal): that one
    remember_project(project)
    assert start_folder(isolated_home) == project.resolve()
    assert start_folder(Path("/")) == project.resolve()
