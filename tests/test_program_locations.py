"""Finding pi and claude where their installers put them when PATH does not have them (a
desktop start), and never another program than the one the person chose."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.backends.base import BackendError
from core.backends.pi_cli import find_pi
from core.backends.registry import default_backend
from core.config.program_locations import locate_program, usual_folders
from core.config.settings import Settings


def _program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_nvm_versions_come_newest_first(isolated_home: Path) -> None:
    for version in ("v18.20.1", "v22.3.0", "v20.11.0"):
        (isolated_home / ".nvm" / "versions" / "node" / version / "bin").mkdir(parents=True)
    folders = [str(f) for f in usual_folders(isolated_home)]
    nvm = [f for f in folders if "/.nvm/" in f]
    assert [Path(f).parent.name for f in nvm] == ["v22.3.0", "v20.11.0", "v18.20.1"]
    assert folders[0] == f"{isolated_home}/.local/bin"
    assert "/usr/local/bin" in folders


def test_a_program_off_path_is_found_in_a_usual_folder(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    pi = _program(isolated_home / ".npm-global" / "bin", "pi")
    claude = _program(isolated_home / ".claude" / "local", "claude")
    found = locate_program("pi")
    assert found is not None and found.path == str(pi) and found.where == "usual folder"
    assert find_pi(Settings()) == str(pi)  # the backend runs it
    assert default_backend(Settings()) == "pi"
    located = locate_program("claude")
    assert located is not None and located.path == str(claude)


def test_path_wins_over_the_usual_folders(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(isolated_home / ".local" / "bin", "pi")
    on_path = _program(tmp_path / "bin", "pi")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    found = locate_program("pi")
    assert found is not None and (found.path, found.where) == (str(on_path), "path")


def test_a_chosen_program_that_is_gone_is_not_replaced_by_another(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    _program(isolated_home / ".local" / "bin", "pi")
    assert locate_program("pi", str(tmp_path / "gone" / "pi")) is None
    with pytest.raises(BackendError, match="not found at"):
        find_pi(Settings(pi_path=str(tmp_path / "gone" / "pi")))
    chosen = _program(tmp_path / "mine", "pi")
    found = locate_program("pi", str(chosen))
    assert found is not None and (found.path, found.where) == (str(chosen), "settings")


def test_a_non_executable_file_in_a_usual_folder_is_not_a_program(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    folder = isolated_home / ".local" / "bin"
    folder.mkdir(parents=True)
    (folder / "pi").write_text("not a program")
    assert locate_program("pi") is None
