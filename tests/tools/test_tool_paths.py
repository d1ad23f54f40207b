"""Every way out of the working folder is refused, before any file is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.tools.base import ToolError
from core.tools.edit import EditTool
from core.tools.grep import GrepTool
from core.tools.ls import LsTool
from core.tools.paths import display_path, resolve_in_cwd
from core.tools.read import ReadTool
from core.tools.write import WriteTool


def test_relative_and_absolute_paths_inside_resolve(work: Path) -> None:
    (work / "src").mkdir()
    (work / "src" / "a.py").write_text("x\n")
    assert resolve_in_cwd("src/a.py", work) == (work / "src" / "a.py").resolve()
    assert resolve_in_cwd(str(work / "src" / "a.py"), work) == (work / "src/a.py").resolve()
    assert resolve_in_cwd("src/../src/a.py", work) == (work / "src" / "a.py").resolve()
    assert resolve_in_cwd(".", work) == work.resolve()
    assert resolve_in_cwd("new/file.txt", work) == work.resolve() / "new" / "file.txt"


@pytest.mark.parametrize("path", ["../outside/secret.txt", "..", "src/../../outside", "~/x"])
def test_dot_dot_and_home_escapes_are_refused(work: Path, outside: Path, path: str) -> None:
    (work / "src").mkdir()
    with pytest.raises(ToolError, match="is outside the working folder"):
        resolve_in_cwd(path, work)


def test_absolute_path_outside_is_refused_naming_both(work: Path, outside: Path) -> None:
    secret = outside / "secret.txt"
    with pytest.raises(ToolError) as caught:
        resolve_in_cwd(str(secret), work)
    assert str(secret) in str(caught.value)
    assert str(work.resolve()) in str(caught.value)


def test_symlinked_file_pointing_outside_is_refused(work: Path, outside: Path) -> None:
    (work / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="outside the working folder"):
        resolve_in_cwd("link.txt", work)


def test_symlinked_folder_pointing_outside_is_refused(work: Path, outside: Path) -> None:
    (work / "linked").symlink_to(outside, target_is_directory=True)
    for path in ("linked", "linked/secret.txt", "linked/new-file.txt", "linked/a/b/c.txt"):
        with pytest.raises(ToolError, match="outside the working folder"):
            resolve_in_cwd(path, work)


def test_dangling_symlink_pointing_outside_is_refused(work: Path, outside: Path) -> None:
    (work / "dangling").symlink_to(outside / "not-yet.txt")
    with pytest.raises(ToolError, match="outside the working folder"):
        resolve_in_cwd("dangling", work)


def test_symlink_staying_inside_is_allowed(work: Path) -> None:
    (work / "real.txt").write_text("hi\n")
    (work / "alias.txt").symlink_to("real.txt")
    assert resolve_in_cwd("alias.txt", work) == (work / "real.txt").resolve()


def test_working_folder_reached_through_a_symlink(tmp_path: Path, work: Path) -> None:
    (work / "a.txt").write_text("a\n")
    via = tmp_path / "via"
    via.symlink_to(work, target_is_directory=True)
    assert resolve_in_cwd("a.txt", via) == (work / "a.txt").resolve()
    assert resolve_in_cwd(str(via / "a.txt"), via) == (work / "a.txt").resolve()


def test_empty_path_and_symlink_loop_are_clear_errors(work: Path) -> None:
    with pytest.raises(ToolError, match="empty"):
        resolve_in_cwd("  ", work)
    (work / "loop").symlink_to("loop")
    with pytest.raises(ToolError):
        resolve_in_cwd("loop", work)


def test_display_path_is_relative_to_the_working_folder(work: Path) -> None:
    assert display_path(work.resolve() / "a" / "b.txt", work) == "a/b.txt"
    assert display_path(work.resolve(), work) == "."


async def test_every_file_tool_refuses_the_escape(call, work: Path, outside: Path) -> None:
    (work / "linked").symlink_to(outside, target_is_directory=True)
    attempts = [
        (ReadTool(), {"path": "../outside/secret.txt"}),
        (ReadTool(), {"path": "linked/secret.txt"}),
        (LsTool(), {"path": str(outside)}),
        (GrepTool(use_ripgrep=False), {"pattern": "SECRET", "path": "../outside"}),
        (EditTool(), {"path": "linked/secret.txt", "old_string": "TOP", "new_string": "NO"}),
        (WriteTool(), {"path": "linked/planted.txt", "content": "x"}),
        (WriteTool(), {"path": "../outside/planted.txt", "content": "x"}),
    ]
    for tool, arguments in attempts:
        with pytest.raises(ToolError, match="outside the working folder"):
            await call(tool, **arguments)
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOP SECRET\n"
