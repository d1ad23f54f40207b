"""``grep`` over real files, run with ripgrep (when installed) and with the Python fallback:
both must give the same answers, ``.gitignore`` included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.config.settings import Limits
from core.tools.base import ToolError
from core.tools.grep import GrepTool

HAS_RG = shutil.which("rg") is not None


@pytest.fixture(params=["python", "ripgrep"])
def grep(request: pytest.FixtureRequest) -> GrepTool:
    if request.param == "ripgrep" and not HAS_RG:
        pytest.skip("ripgrep (rg) is not installed; the Python fallback is tested instead")
    return GrepTool(use_ripgrep=request.param == "ripgrep")


@pytest.fixture
def tree(work: Path) -> Path:
    files = {
        "src/app.py": "import os\ndef main():\n    return TODO_fix\n",
        "src/util.py": "# todo: later\nVALUE = 1\n",
        "src/ui/view.tsx": "const x = 'TODO_fix';\n",
        "README.md": "Nothing to do here.\nTODO_fix the docs\n",
        ".env.example": "TODO_fix=1\n",
        "build/gen.py": "TODO_fix generated\n",
        "notes.log": "TODO_fix in a log\n",
        "keep.log": "TODO_fix kept log\n",
        "vendor/lib/.gitignore": "*.py\n",
        "vendor/lib/mod.py": "TODO_fix vendored\n",
        "vendor/lib/mod.c": "TODO_fix in C\n",
        ".git/HEAD": "TODO_fix inside git\n",
    }
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    (work / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (work / "blob.bin").write_bytes(b"TODO_fix\x00\x01\x02")
    return work


async def test_matches_as_path_line_text_respecting_gitignore(call, tree: Path, grep) -> None:
    out = await call(grep, pattern="TODO_fix")
    assert out.splitlines() == [
        ".env.example:1:TODO_fix=1",
        "README.md:2:TODO_fix the docs",
        "keep.log:1:TODO_fix kept log",
        "src/app.py:3:    return TODO_fix",
        "src/ui/view.tsx:1:const x = 'TODO_fix';",
        "vendor/lib/mod.c:1:TODO_fix in C",
    ]


async def test_glob_and_path_narrow_the_search(call, tree: Path, grep) -> None:
    assert (await call(grep, pattern="TODO_fix", glob="*.{py,tsx}")).splitlines() == [
        "src/app.py:3:    return TODO_fix",
        "src/ui/view.tsx:1:const x = 'TODO_fix';",
    ]
    assert (await call(grep, pattern="TODO_fix", glob="src/**/*.tsx")).splitlines() == [
        "src/ui/view.tsx:1:const x = 'TODO_fix';"
    ]
    assert (await call(grep, pattern="TODO_fix", glob="!*.{md,c,log,tsx}")).splitlines() == [
        ".env.example:1:TODO_fix=1",
        "src/app.py:3:    return TODO_fix",
    ]
    assert (await call(grep, pattern="TODO_fix", path="src", glob="ui/*")).splitlines() == [
        "src/ui/view.tsx:1:const x = 'TODO_fix';"
    ]
    assert (await call(grep, pattern="TODO_fix", path="src/ui")).splitlines() == [
        "src/ui/view.tsx:1:const x = 'TODO_fix';"
    ]
    assert (await call(grep, pattern="later", path="src/util.py")).splitlines() == [
        "src/util.py:1:# todo: later"
    ]


async def test_ignore_case(call, tree: Path, grep) -> None:
    out = await call(grep, pattern="todo:", ignore_case=True, glob="*.py")
    assert out.splitlines() == ["src/util.py:1:# todo: later"]
    assert "No matches" in await call(grep, pattern="TODO:", glob="*.py")


async def test_regex_syntax(call, tree: Path, grep) -> None:
    out = await call(grep, pattern=r"^VALUE\s*=\s*\d+$")
    assert out == "src/util.py:2:VALUE = 1"


async def test_limit_caps_and_says_so(call, work: Path, grep) -> None:
    (work / "many.txt").write_text("hit\n" * 30)
    out = await call(grep, pattern="hit", limit=5)
    lines = out.splitlines()
    assert lines[:5] == [f"many.txt:{n}:hit" for n in range(1, 6)]
    assert "Only the first 5 matching lines are shown" in lines[5]


async def test_output_budget_caps_too(call, work: Path, grep) -> None:
    (work / "wide.txt").write_text(("hit " + "x" * 200 + "\n") * 40)
    out = await call(grep, pattern="hit", limit=1000, limits=Limits(tool_output_chars=1000))
    assert len(out) < 1400
    assert "Only the first" in out


async def test_invalid_regex_is_a_tool_error(call, tree: Path, grep) -> None:
    with pytest.raises(ToolError, match=r"(?i)regular expression|regex"):
        await call(grep, pattern="(unclosed")


async def test_missing_path_and_no_match(call, tree: Path, grep) -> None:
    with pytest.raises(ToolError, match="Path not found: nowhere"):
        await call(grep, pattern="x", path="nowhere")
    assert await call(grep, pattern="zzz_absent") == "No matches for 'zzz_absent' in .."


async def test_symlinks_are_not_followed_out(call, work: Path, outside: Path, grep) -> None:
    (work / "mine.txt").write_text("SECRET? no\n")
    (work / "linked").symlink_to(outside, target_is_directory=True)
    (work / "alias.txt").symlink_to(outside / "secret.txt")
    assert await call(grep, pattern="SECRET") == "mine.txt:1:SECRET? no"


async def test_falls_back_to_python_without_ripgrep_on_path(
    call, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tree / "no-such-bin"))
    out = await call(GrepTool(), pattern="TODO_fix", glob="*.c")
    assert out == "vendor/lib/mod.c:1:TODO_fix in C"
