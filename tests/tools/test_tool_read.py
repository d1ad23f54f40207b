"""``read``: numbered lines, windows, caps that say how to continue, clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config.settings import Limits
from core.tools.base import ToolError
from core.tools.read import MAX_LINE_CHARS, MAX_LINES, ReadTool


def numbered(work: Path, count: int, name: str = "f.txt") -> None:
    (work / name).write_text("".join(f"line {n}\n" for n in range(1, count + 1)))


async def test_lines_are_numbered(call, work: Path) -> None:
    (work / "a.py").write_text("import os\n\nprint(os.sep)\n")
    assert await call(ReadTool(), path="a.py") == "1\timport os\n2\t\n3\tprint(os.sep)\n"


async def test_offset_and_limit_select_a_window(call, work: Path) -> None:
    numbered(work, 10)
    out = await call(ReadTool(), path="f.txt", offset=4, limit=3)
    assert out.splitlines()[:3] == ["4\tline 4", "5\tline 5", "6\tline 6"]
    assert "[Showing lines 4-6 of 10. Call read with offset=7 to continue.]" in out


async def test_reading_to_the_end_has_no_continuation_note(call, work: Path) -> None:
    numbered(work, 10)
    out = await call(ReadTool(), path="f.txt", offset=8)
    assert out == "8\tline 8\n9\tline 9\n10\tline 10\n"


async def test_long_file_is_capped_at_max_lines(call, work: Path) -> None:
    numbered(work, MAX_LINES + 500)
    out = await call(ReadTool(), path="f.txt", limit=MAX_LINES + 100)
    assert f"{MAX_LINES}\tline {MAX_LINES}\n" in out
    assert f"{MAX_LINES + 1}\t" not in out
    assert f"offset={MAX_LINES + 1}" in out
    assert f"of {MAX_LINES + 500}" in out


async def test_output_budget_caps_by_characters(call, work: Path) -> None:
    (work / "wide.txt").write_text("".join(f"{n:04d} " + "x" * 195 + "\n" for n in range(50)))
    out = await call(ReadTool(), path="wide.txt", limits=Limits(tool_output_chars=1000))
    shown = [line for line in out.splitlines() if "\t" in line]
    # Each numbered line is 203 characters with its newline: four fit in 1000, a fifth would not.
    assert [line.split("\t")[0] for line in shown] == ["1", "2", "3", "4"]
    assert len("".join(shown)) <= 1000
    assert "Call read with offset=5 to continue." in out


async def test_a_very_long_line_is_cut(call, work: Path) -> None:
    (work / "min.js").write_text("y" * (MAX_LINE_CHARS * 3) + "\nnext\n")
    out = await call(ReadTool(), path="min.js")
    first, second = out.splitlines()[:2]
    assert first.startswith("1\t" + "y" * MAX_LINE_CHARS)
    assert "line cut" in first
    assert len(first) < MAX_LINE_CHARS + 100
    assert second == "2\tnext"


async def test_crlf_lines_are_shown_without_carriage_returns(call, work: Path) -> None:
    (work / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    assert await call(ReadTool(), path="win.txt") == "1\tone\n2\ttwo\n"


async def test_invalid_utf8_is_replaced_not_fatal(call, work: Path) -> None:
    (work / "latin.txt").write_bytes(b"caf\xe9\n")
    assert await call(ReadTool(), path="latin.txt") == "1\tcaf\ufffd\n"


async def test_empty_file(call, work: Path) -> None:
    (work / "empty.txt").write_text("")
    assert "empty" in await call(ReadTool(), path="empty.txt")


@pytest.mark.parametrize(
    ("setup", "path", "message"),
    [
        (lambda w: None, "missing.txt", "File not found: missing.txt"),
        (lambda w: (w / "dir").mkdir(), "dir", "is a folder"),
        (lambda w: (w / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00"), "img.png", "binary"),
    ],
)
async def test_clear_errors(call, work: Path, setup, path: str, message: str) -> None:
    setup(work)
    with pytest.raises(ToolError, match=message):
        await call(ReadTool(), path=path)


async def test_offset_past_the_end_says_how_long_the_file_is(call, work: Path) -> None:
    numbered(work, 3)
    with pytest.raises(ToolError, match=r"past the end of f\.txt, which has 3 lines"):
        await call(ReadTool(), path="f.txt", offset=10)


def test_offset_and_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ReadTool.Params.model_validate({"path": "a", "offset": 0})
    with pytest.raises(ValueError):
        ReadTool.Params.model_validate({"path": "a", "limit": -1})


async def test_a_link_in_the_hand_off_folder_is_not_followed(work: Path) -> None:
    """The hand-off allowance opens only a regular step file of the current run's folder: a
    ``step-N.md`` that is a link to another data-folder file is refused, not followed."""
    from core.config import paths
    from core.config.handoff_files import handoff_dir
    from core.tools.base import ToolContext

    folder = handoff_dir("20260101-000000-abcdef")
    folder.mkdir(parents=True)
    (folder / "step-1.md").write_text("the whole answer\n", encoding="utf-8")
    secret = paths.data_dir() / "secret.md"
    secret.write_text("private\n", encoding="utf-8")
    (folder / "step-2.md").symlink_to(secret)
    ctx = ToolContext(cwd=work, handoff_dir=folder.resolve())

    tool = ReadTool()
    whole = await tool.run(tool.Params.model_validate({"path": str(folder / "step-1.md")}), ctx)
    assert whole == "1\tthe whole answer\n"
    with pytest.raises(ToolError) as refused:
        await tool.run(tool.Params.model_validate({"path": str(folder / "step-2.md")}), ctx)
    assert "not a regular file" in str(refused.value)  # the link itself, never its target
    with pytest.raises(ToolError, match="outside the working folder"):
        await tool.run(tool.Params.model_validate({"path": str(secret)}), ctx)
