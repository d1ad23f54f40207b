"""``edit`` and ``write`` on real files: exact matches only, newline style kept, folders
created, every refusal a sentence the model can act on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.tools.base import ToolError
from core.tools.edit import EditTool
from core.tools.write import WriteTool

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


async def test_unique_replacement_reports_the_line(call, work: Path) -> None:
    (work / "m.py").write_text(SOURCE)
    out = await call(
        EditTool(),
        path="m.py",
        old_string="def g():\n    return 1",
        new_string="def g():\n    return 2",
    )
    assert out == "Edited m.py: replaced 1 occurrence at line 5."
    assert (work / "m.py").read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


async def test_ambiguous_match_is_refused_with_the_count(call, work: Path) -> None:
    (work / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"occurs 2 times in m\.py.*replace_all"):
        await call(EditTool(), path="m.py", old_string="return 1", new_string="return 3")
    assert (work / "m.py").read_text() == SOURCE


async def test_replace_all_reports_every_line(call, work: Path) -> None:
    (work / "m.py").write_text(SOURCE)
    out = await call(
        EditTool(), path="m.py", old_string="return 1", new_string="return 3", replace_all=True
    )
    assert out == "Edited m.py: replaced 2 occurrences (lines 2, 6)."
    assert (work / "m.py").read_text() == SOURCE.replace("return 1", "return 3")


async def test_not_found_hints_at_exact_whitespace(call, work: Path) -> None:
    (work / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"not found in m\.py.*whitespace"):
        await call(EditTool(), path="m.py", old_string="\treturn 1", new_string="x")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "missing.py", "old_string": "a", "new_string": "b"}, "File not found"),
        ({"path": "m.py", "old_string": "", "new_string": "b"}, "old_string is empty"),
        ({"path": "m.py", "old_string": "f", "new_string": "f"}, "identical"),
    ],
)
async def test_other_refusals(call, work: Path, arguments: dict[str, str], message: str) -> None:
    (work / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=message):
        await call(EditTool(), **arguments)


async def test_crlf_file_stays_crlf_when_quoted_with_lf(call, work: Path) -> None:
    (work / "w.txt").write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    out = await call(EditTool(), path="w.txt", old_string="beta\ngamma", new_string="BETA\nGAMMA")
    assert out == "Edited w.txt: replaced 1 occurrence at line 2."
    assert (work / "w.txt").read_bytes() == b"alpha\r\nBETA\r\nGAMMA\r\n"


async def test_crlf_file_gets_crlf_in_new_multiline_text(call, work: Path) -> None:
    (work / "w.txt").write_bytes(b"alpha\r\nbeta\r\n")
    await call(EditTool(), path="w.txt", old_string="beta", new_string="b1\nb2")
    assert (work / "w.txt").read_bytes() == b"alpha\r\nb1\r\nb2\r\n"


async def test_edit_keeps_bom_and_bytes_outside_the_change(call, work: Path) -> None:
    data = "\ufeffkeep\ttabs  \nchange me\nno newline at end".encode()
    (work / "b.txt").write_bytes(data)
    await call(EditTool(), path="b.txt", old_string="change me", new_string="changed")
    assert (work / "b.txt").read_bytes() == data.replace(b"change me", b"changed")


async def test_non_utf8_file_is_refused(call, work: Path) -> None:
    (work / "l.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ToolError, match="not UTF-8"):
        await call(EditTool(), path="l.txt", old_string="caf", new_string="cafe")
    assert (work / "l.txt").read_bytes() == b"caf\xe9\n"


async def test_write_creates_folders_and_reports_bytes(call, work: Path) -> None:
    out = await call(WriteTool(), path="a/b/c/notes.md", content="héllo\n")
    assert out == "Created a/b/c/notes.md (7 bytes)."
    assert (work / "a/b/c/notes.md").read_bytes() == "héllo\n".encode()


async def test_write_overwrites_exactly(call, work: Path) -> None:
    (work / "f.txt").write_text("old\n")
    out = await call(WriteTool(), path=str(work / "f.txt"), content="new\r\nline")
    assert out == "Overwrote f.txt (9 bytes)."
    assert (work / "f.txt").read_bytes() == b"new\r\nline"
    assert sorted(os.listdir(work)) == ["f.txt"]  # no temp file left


async def test_write_refuses_a_folder_and_a_path_through_a_file(call, work: Path) -> None:
    (work / "dir").mkdir()
    (work / "file").write_text("")
    with pytest.raises(ToolError, match="is a folder"):
        await call(WriteTool(), path="dir", content="x")
    with pytest.raises(ToolError, match=r"Cannot write file/child\.txt"):
        await call(WriteTool(), path="file/child.txt", content="x")
