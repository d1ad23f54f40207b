"""The symlink race, run as the attack: while the file tools work on ``d/…``, another thread
(standing in for a parallel task's ``bash``) flips ``d`` between a folder and a symlink out of
the working folder — or to Baton's config folder, which lies inside it when a run works in the
home folder. Nothing may land outside, nothing outside may be read, and ``rules.json`` must never
appear in the config folder. Each test runs with ``openat2`` and with the ``O_NOFOLLOW`` walk
that replaces it on older kernels.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.config import paths
from core.tools import beneath
from core.tools.base import ToolContext, ToolError
from core.tools.confined_read import confined_argv
from core.tools.edit import EditParams, EditTool
from core.tools.grep import GrepParams, GrepTool
from core.tools.ls import LsParams, LsTool
from core.tools.read import ReadParams, ReadTool
from core.tools.write import WriteParams, WriteTool

ROUNDS = 400
SECRET = "TOP-SECRET-OUTSIDE"


@pytest.fixture(params=["openat2", "walk"])
def resolution(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of opening beneath the folder; ``openat2`` only where the kernel has it."""
    if request.param == "openat2" and not beneath.openat2_works():
        pytest.skip("this kernel has no openat2; the walk is tested instead")
    if request.param == "walk":
        monkeypatch.setattr(beneath, "openat2_works", lambda: False)
    return str(request.param)


FLIPPER = """
import os, shutil, sys
link, target, parked = sys.argv[1:4]
flips = 0
while True:
    try:
        if os.path.lexists(parked):  # the symlink is up (or a write made a folder meanwhile)
            if os.path.islink(link):
                os.unlink(link)
            elif os.path.isdir(link):
                shutil.rmtree(link)
            os.rename(parked, link)
        else:
            os.rename(link, parked)
            os.symlink(target, link)
        flips += 1
        if flips == 50:
            print("flipping", flush=True)
    except OSError:
        pass
"""
"""A separate process, as a parallel task's ``bash`` is: it runs truly alongside the tools
(a thread would mostly wait for the GIL and flip only between two tool calls)."""


@contextlib.contextmanager
def flipping(link: Path, target: str, seed: str | None = None) -> Iterator[None]:
    """``link`` made a folder (holding ``x.txt`` with ``seed``), then flipped meanwhile."""
    link.mkdir()
    if seed is not None:
        (link / "x.txt").write_text(seed)
    parked = link.with_name(link.name + ".parked")
    with subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(link), target, str(parked)],
        stdout=subprocess.PIPE,
        text=True,
    ) as flipper:
        try:
            assert flipper.stdout is not None
            assert flipper.stdout.readline() == "flipping\n"  # the race really runs
            yield
        finally:
            flipper.kill()


def files_in(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file())


def run_many(coroutines: list[object]) -> list[str | ToolError]:
    """Run tool calls one after another in one loop; a refusal is an outcome, not a failure."""

    async def each() -> list[str | ToolError]:
        outcomes: list[str | ToolError] = []
        for coroutine in coroutines:
            try:
                outcomes.append(await coroutine)  # type: ignore[misc]
            except ToolError as refused:
                outcomes.append(refused)
        return outcomes

    return asyncio.run(each())


def test_400_writes_through_a_flipping_symlink_never_land_outside(
    resolution: str, work: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ctx = ToolContext(cwd=work)
    with flipping(work / "d", str(outside)):
        outcomes = run_many(
            [
                WriteTool().run(WriteParams(path="d/x.txt", content=f"write {n}"), ctx)
                for n in range(ROUNDS)
            ]
        )
    assert files_in(outside) == []
    assert any(isinstance(outcome, str) for outcome in outcomes)  # the folder side worked


def test_400_edits_through_a_flipping_symlink_never_change_a_file_outside(
    resolution: str, work: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("old text\n")
    ctx = ToolContext(cwd=work)
    with flipping(work / "d", str(outside), "old text\n"):
        run_many(
            [
                EditTool().run(EditParams(path="d/x.txt", old_string="old", new_string="new"), ctx)
                for _ in range(ROUNDS)
            ]
        )
    assert (outside / "x.txt").read_text() == "old text\n"
    assert [path.name for path in files_in(outside)] == ["x.txt"]


def test_400_reads_and_lists_through_a_flipping_symlink_never_show_a_file_outside(
    resolution: str, work: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text(SECRET + "\n")
    (outside / f"{SECRET}.txt").write_text("name\n")
    ctx = ToolContext(cwd=work)
    with flipping(work / "d", str(outside), "inside\n"):
        calls: list[object] = []
        for n in range(ROUNDS // 2):
            calls.append(ReadTool().run(ReadParams(path="d/x.txt"), ctx))
            calls.append(LsTool().run(LsParams(path="d"), ctx))
            calls.append(GrepTool(use_ripgrep=False).run(GrepParams(pattern="SECRET|in"), ctx))
            if n % 10 == 0:  # ripgrep (confined) costs a process start: fewer rounds
                calls.append(GrepTool().run(GrepParams(pattern="SECRET|inside"), ctx))
        outcomes = run_many(calls)
    assert all(SECRET not in str(outcome) for outcome in outcomes)
    assert any("inside" in str(outcome) for outcome in outcomes)


def test_rules_json_aimed_at_batons_config_folder_through_a_flipping_symlink_never_lands(
    resolution: str, isolated_home: Path
) -> None:
    """A run in the home folder: Baton's config folder is inside the working folder, so the
    symlink (relative, ``config``) never leaves it — only the protected-folder check stops it."""
    config = paths.config_dir()
    assert config.parent == isolated_home
    before = sorted(path.name for path in config.iterdir())
    ctx = ToolContext(cwd=isolated_home)
    allow_bash = '{"allow": ["Bash"]}'
    with flipping(isolated_home / "d", "config"):
        run_many(
            [
                WriteTool().run(WriteParams(path=path, content=allow_bash), ctx)
                for _ in range(ROUNDS // 2)
                for path in ("d/rules.json", f"d/agents/{uuid.uuid4().hex}/evil.md")
            ]
        )
    assert sorted(path.name for path in config.iterdir()) == before
    assert not (config / "rules.json").exists()


def test_a_relative_symlink_that_stays_inside_is_still_followed(
    resolution: str, work: Path
) -> None:
    (work / "real").mkdir()
    (work / "alias").symlink_to("real")
    ctx = ToolContext(cwd=work)
    outcome = run_many([WriteTool().run(WriteParams(path="alias/a.txt", content="hi"), ctx)])
    assert outcome == ["Created real/a.txt (2 bytes)."]
    assert (work / "real" / "a.txt").read_text() == "hi"


def test_open_beneath_refuses_every_way_out(resolution: str, work: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text(SECRET)
    (work / "up").symlink_to("..")
    (work / "abs").symlink_to(str(tmp_path))
    (work / "loop").symlink_to("loop")
    root_fd = os.open(work, beneath.DIR_FLAGS)
    try:
        for path in ("../outside.txt", "up/outside.txt", "abs/outside.txt", "a/../../outside.txt"):
            with pytest.raises(OSError) as raised:
                os.close(beneath.open_beneath(root_fd, path, os.O_RDONLY))
            assert raised.value.errno in (18, 2), path  # EXDEV (or ENOENT for a/ missing)
        with pytest.raises(OSError):
            os.close(beneath.open_beneath(root_fd, "loop", os.O_RDONLY))
    finally:
        os.close(root_fd)


@pytest.mark.skipif(
    confined_argv(["/bin/true"], root=Path("/"), ignore_top=Path("/"), protected=()) is None,
    reason="no bubblewrap here: grep uses the Python walker instead of ripgrep",
)
def test_ripgrep_sees_only_the_working_folder(work: Path, tmp_path: Path) -> None:
    """Whatever path ripgrep is handed or walks into, nothing outside the folder exists for it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text(SECRET + "\n")
    (work / "in.txt").write_text("inside\n")
    rg = shutil.which("rg") or pytest.skip("ripgrep is not installed")
    command = confined_argv(
        [rg, "--no-config", "-r", "", "-e", "SECRET|inside", ".", str(outside)],
        root=work,
        ignore_top=work,
        protected=(),
    )
    assert command is not None
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert SECRET not in done.stdout and "inside" not in done.stdout
    assert "in.txt" in done.stdout
