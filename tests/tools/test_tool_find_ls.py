"""``find`` (glob, sorted, ``.gitignore``) and ``ls`` (everything, folders marked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config.settings import Limits
from core.tools.base import ToolError
from core.tools.find import FindTool
from core.tools.ls import LsTool


@pytest.fixture
def tree(work: Path) -> Path:
    for name in (
        "setup.py",
        "src/pkg/__init__.py",
        "src/pkg/core.py",
        "src/pkg/data.json",
        "src/main.py",
        "tests/test_core.py",
        ".venv/lib/site.py",
        "dist/out.py",
        ".github/ci.yml",
        ".git/hooks/pre.py",
    ):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("")
    (work / ".gitignore").write_text(".venv/\n/dist\n")
    return work


async def test_recursive_glob_sorted_and_gitignore_aware(call, tree: Path) -> None:
    out = await call(FindTool(), pattern="**/*.py")
    assert out.splitlines() == [
        "setup.py",
        "src/main.py",
        "src/pkg/__init__.py",
        "src/pkg/core.py",
        "tests/test_core.py",
    ]


async def test_name_glob_matches_at_any_depth_and_path_narrows(call, tree: Path) -> None:
    assert (await call(FindTool(), pattern="*.json")).splitlines() == ["src/pkg/data.json"]
    assert (await call(FindTool(), pattern="*.py", path="src/pkg")).splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/core.py",
    ]
    assert (await call(FindTool(), pattern="src/*.py")).splitlines() == ["src/main.py"]
    assert (await call(FindTool(), pattern="*.{yml,json}")).splitlines() == [
        ".github/ci.yml",
        "src/pkg/data.json",
    ]


async def test_limit_keeps_the_first_in_order_and_says_so(call, tree: Path) -> None:
    lines = (await call(FindTool(), pattern="**/*.py", limit=2)).splitlines()
    assert lines[:2] == ["setup.py", "src/main.py"]
    assert "Only the first 2 files are shown" in lines[2]


async def test_find_errors_and_no_match(call, tree: Path) -> None:
    assert "No files match" in await call(FindTool(), pattern="*.rs")
    with pytest.raises(ToolError, match="is a file"):
        await call(FindTool(), pattern="*", path="setup.py")
    with pytest.raises(ToolError, match="not found"):
        await call(FindTool(), pattern="*", path="nope")


async def test_ls_lists_everything_sorted_with_folder_marks(call, tree: Path) -> None:
    (tree / "alias").symlink_to("src")
    out = await call(LsTool())
    assert out.splitlines() == [
        ".git/",
        ".github/",
        ".gitignore",
        ".venv/",
        "alias -> src",
        "dist/",
        "setup.py",
        "src/",
        "tests/",
    ]
    assert (await call(LsTool(), path="src/pkg")).splitlines() == [
        "__init__.py",
        "core.py",
        "data.json",
    ]


async def test_ls_cap_empty_and_errors(call, work: Path) -> None:
    for n in range(30):
        (work / f"f{n:02d}").write_text("")
    out = await call(LsTool(), limit=10)
    assert out.splitlines()[:10] == [f"f{n:02d}" for n in range(10)]
    assert "[20 more entries not shown; 30 total.]" in out
    (work / "empty").mkdir()
    assert "empty" in await call(LsTool(), path="empty")
    with pytest.raises(ToolError, match="is a file"):
        await call(LsTool(), path="f00")
    with pytest.raises(ToolError, match="not found"):
        await call(LsTool(), path="missing")
    long_names = await call(LsTool(), limits=Limits(tool_output_chars=1000))
    assert len(long_names) <= 1100
