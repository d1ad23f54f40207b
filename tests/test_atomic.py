"""Atomic writes: permissions computed without touching the process-wide umask."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from core.config.atomic import atomic_write_text

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


@posix_only
def test_new_files_get_0644_less_the_umask_and_existing_files_keep_their_mode(
    tmp_path: Path,
) -> None:
    old = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    kept = tmp_path / "kept.txt"
    kept.write_text("a")
    kept.chmod(0o600)
    atomic_write_text(kept, "b")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and kept.read_text() == "b"
    atomic_write_text(tmp_path / "exact.txt", "x", mode=0o600)
    assert stat.S_IMODE((tmp_path / "exact.txt").stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exact.txt", "kept.txt", "new.txt"]


@posix_only
def test_a_folder_another_thread_creates_during_a_write_is_not_world_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack on the old code, made deterministic: it read the umask by setting it to 0
    for a moment; another thread creating a folder in that moment got 0777. Here the other
    thread runs exactly whenever the umask changes during the write."""
    real_umask = os.umask
    made: list[int] = []

    def umask_with_a_thread_in_between(mask: int) -> int:
        previous = real_umask(mask)
        folder = tmp_path / f"made-{len(made)}"
        other = threading.Thread(target=folder.mkdir)
        other.start()
        other.join()
        made.append(stat.S_IMODE(folder.stat().st_mode))
        return previous

    old = real_umask(0o022)
    try:
        monkeypatch.setattr(os, "umask", umask_with_a_thread_in_between)
        atomic_write_text(tmp_path / "a" / "config.yaml", "x")
        monkeypatch.undo()
        (tmp_path / "concurrent").mkdir()
    finally:
        real_umask(old)
    assert made == []  # the umask is never touched, so there is no moment to exploit
    assert stat.S_IMODE((tmp_path / "concurrent").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "a" / "config.yaml").stat().st_mode) == 0o644
