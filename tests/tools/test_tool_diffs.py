"""``preview_diff``: the diff a person approves is the change the tool then makes."""

from __future__ import annotations

from pathlib import Path

from core.tools.base import ToolContext
from core.tools.diffs import preview_diff
from core.tools.edit import EditParams, EditTool

SOURCE = "one\ntwo\nthree\nfour\n"


def test_edit_preview_is_a_unified_diff(work: Path) -> None:
    (work / "n.txt").write_text(SOURCE)
    diff = preview_diff("edit", {"path": "n.txt", "old_string": "two", "new_string": "2"}, work)
    assert diff == ("--- a/n.txt\n+++ b/n.txt\n@@ -1,4 +1,4 @@\n one\n-two\n+2\n three\n four\n")
    assert (work / "n.txt").read_text() == SOURCE  # a preview changes nothing


async def test_edit_preview_matches_what_the_edit_does(work: Path) -> None:
    (work / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    arguments = {"path": "w.txt", "old_string": "b\nc", "new_string": "B\nC"}
    diff = preview_diff("edit", arguments, work)
    assert diff is not None
    added = [
        line[1:]
        for line in diff.splitlines(keepends=True)
        if line.startswith("+") and not line.startswith("+++")
    ]
    await EditTool().run(EditParams.model_validate(arguments), ToolContext(cwd=work))
    assert "".join(added) == "B\r\nC\r\n"
    assert (work / "w.txt").read_bytes().endswith(b"B\r\nC\r\n")


def test_write_preview_of_a_new_file(work: Path) -> None:
    diff = preview_diff("write", {"path": "new/x.md", "content": "# T\nbody"}, work)
    assert diff == (
        "--- /dev/null\n+++ b/new/x.md\n@@ -0,0 +1,2 @@\n+# T\n+body\n"
        "\\ No newline at end of file\n"
    )
    assert not (work / "new").exists()


def test_write_preview_of_an_overwrite_and_of_no_change(work: Path) -> None:
    (work / "n.txt").write_text(SOURCE)
    diff = preview_diff("write", {"path": "n.txt", "content": "one\n"}, work)
    assert diff == "--- a/n.txt\n+++ b/n.txt\n@@ -1,4 +1 @@\n one\n-two\n-three\n-four\n"
    assert "no change" in str(preview_diff("write", {"path": "n.txt", "content": SOURCE}, work))


def test_refused_calls_explain_instead_of_raising(work: Path, outside: Path) -> None:
    (work / "n.txt").write_text(SOURCE)
    (work / "bin").write_bytes(b"\xff\xfe\x00")
    cases = {
        ("edit", "n.txt", "absent"): "(no preview: old_string was not found in n.txt",
        ("edit", "gone.txt", "x"): "(no preview: File not found: gone.txt",
        ("edit", "../outside/secret.txt", "TOP"): "outside the working folder",
    }
    for (tool, path, old), expected in cases.items():
        assert expected in str(
            preview_diff(tool, {"path": path, "old_string": old, "new_string": "z"}, work)
        )
    assert "incomplete or invalid" in str(preview_diff("edit", {"path": "n.txt"}, work))
    assert "binary" in str(preview_diff("write", {"path": "bin", "content": "t"}, work))
    assert "outside" in str(
        preview_diff("write", {"path": str(outside / "x"), "content": ""}, work)
    )


def test_other_tools_have_no_preview(work: Path) -> None:
    assert preview_diff("bash", {"command": "rm -rf /"}, work) is None
    assert preview_diff("read", {"path": "x"}, work) is None
