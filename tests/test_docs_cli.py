"""``baton docs`` through ``core.cli.main``: tables, JSON, files, confirmations, exit codes."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.cli import main
from core.documents.store import DocumentProvenance, DocumentStore


class Terminal(io.StringIO):
    """stdin that says it is a terminal, with the person's typed answer in it."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def store(isolated_home: Path) -> Iterator[DocumentStore]:
    """The store ``baton docs`` uses (the data folder's), for arranging and checking."""
    with DocumentStore(isolated_home / "data" / "documents.sqlite") as opened:
        yield opened


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["docs", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


def test_add_then_show(capsys: pytest.CaptureFixture[str], store: DocumentStore) -> None:
    code, out, err = run(
        capsys, "add", "--title", "登录设计", "--content", "x" * 250, "--tags", "auth, ui,,auth"
    )
    assert (code, err) == (0, "")
    assert out == "created #1 '登录设计' (version 1)\n"
    assert store.get(1).tags == ["auth", "ui"]
    code, out, _ = run(capsys, "show", "1")
    assert code == 0
    assert out.startswith("#1 登录设计\ntype: document   tags: auth, ui   version: 1\n")
    assert "created: " in out and "by a person" in out
    assert "x" * 200 + "..." in out
    assert "show it with --full" in out
    code, out, _ = run(capsys, "show", "1", "--full")
    assert out.rstrip().endswith("x" * 250)


def test_show_json_carries_content_only_with_full(
    capsys: pytest.CaptureFixture[str], store: DocumentStore
) -> None:
    who = DocumentProvenance(run_id="r7", step=0, agent="planner", call_id="c1")  # step 1
    store.create("Plan", "the plan", type="memory", provenance=who)
    data = run_json(capsys, "show", "1")
    assert data["content"] is None
    assert data["provenance"] == {"run_id": "r7", "step": 0, "agent": "planner", "call_id": "c1"}
    assert run_json(capsys, "show", "1", "--full")["content"] == "the plan"
    out = run(capsys, "show", "1")[1]
    assert "by planner (run r7, step 1, call c1)" in out


def test_add_from_a_file_and_stdin(
    capsys: pytest.CaptureFixture[str],
    store: DocumentStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    file = tmp_path / "notes.md"
    file.write_text("\ufeff# Notes\n\n中文内容\n", encoding="utf-8")
    doc = run_json(capsys, "add", "--title", "Notes", "--file", str(file), "--type", "memory")
    assert (doc["content"], doc["type"]) == ("# Notes\n\n中文内容\n", "memory")
    monkeypatch.setattr("sys.stdin", io.StringIO("piped text"))
    assert run_json(capsys, "add", "--title", "Piped", "--file", "-")["content"] == "piped text"


def test_list_is_a_table_without_content(
    capsys: pytest.CaptureFixture[str], store: DocumentStore
) -> None:
    store.create("English title", "secret body text", tags=["a"])
    store.create("中文标题很长" * 8, "另一个正文", type="memory")
    code, out, err = run(capsys, "list")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "TYPE", "UPDATED", "TAGS", "TITLE"]
    assert lines[1].startswith("2   memory")
    assert lines[1].endswith("…")  # cut to the column, by display width
    assert "English title" in lines[2]
    assert lines[-1] == "(page 1 of 1, 2 documents)"
    assert "secret body" not in out and "另一个正文" not in out
    assert run(capsys, "list", "--type", "document")[1].count("\n") == 3
    data = run_json(capsys, "list", "--tag", "A")
    assert (data["total"], data["pages"]) == (1, 1)
    assert "content" not in data["items"][0]


def test_list_pages(capsys: pytest.CaptureFixture[str], store: DocumentStore) -> None:
    for i in range(25):
        store.create(f"doc {i}", "c")
    out = run(capsys, "list")[1]
    assert out.splitlines()[-1] == "(page 1 of 2, 25 documents; next: --page 2)"
    data = run_json(capsys, "list", "--page", "2")
    assert (data["page"], data["page_size"], len(data["items"])) == (2, 20, 5)
    assert run(capsys, "list", "--page", "9")[1] == (
        "Page 9 is past the end (25 documents, 2 pages).\n"
    )


def test_an_empty_store_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "list") == (0, "No documents.\n", "")


def test_search_shows_snippets(capsys: pytest.CaptureFixture[str], store: DocumentStore) -> None:
    store.create("登录流程", "用户先输入密码，然后登录系统。")
    store.create("Other", "nothing here")
    code, out, _ = run(capsys, "search", "登录")
    assert code == 0
    assert "登录流程" in out
    assert "[登录]" in out
    assert out.splitlines()[-1] == "(page 1 of 1, 1 document)"
    data = run_json(capsys, "search", '"then"')
    assert data["total"] == 0
    data = run_json(capsys, "search", "nothing", "--type", "document")
    assert [hit["title"] for hit in data["items"]] == ["Other"]
    assert "snippet" in data["items"][0] and "content" not in data["items"][0]


def test_edit(capsys: pytest.CaptureFixture[str], store: DocumentStore, tmp_path: Path) -> None:
    store.create("Old", "old", tags=["x"])
    code, out, _ = run(capsys, "edit", "1", "--title", "New", "--tags", "")
    assert (code, out) == (0, "updated #1 'New' (version 2)\n")
    assert store.get(1).tags == []
    file = tmp_path / "body.txt"
    file.write_text("from a file", encoding="utf-8")
    doc = run_json(capsys, "edit", "1", "--file", str(file), "--type", "memory")
    assert (doc["content"], doc["type"], doc["version"]) == ("from a file", "memory", 3)


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["show", "42"], "There is no document #42."),
        (["edit", "42", "--title", "x"], "There is no document #42."),
        (["delete", "42", "--yes"], "There is no document #42."),
        (["add", "--title", "  ", "--content", "c"], "The title must not be empty."),
        (["add", "--title", "t", "--content", "x" * 10_001], "the limit is 10,000"),
        (["edit", "1"], "Nothing to change"),
        (["add", "--title", "t", "--file", "/no/such/file"], "Cannot read /no/such/file"),
        (["import", "/no/such.jsonl"], "Cannot read /no/such.jsonl"),
        (["list", "--page", "0"], "The page must be 1 or more"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], store: DocumentStore, argv: list[str], reason: str
) -> None:
    store.create("exists", "c")
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith(f"baton docs {argv[0]}: ")
    assert reason in err
    assert err.count("\n") == 1


def test_limits_come_from_the_settings(
    capsys: pytest.CaptureFixture[str], store: DocumentStore, isolated_home: Path
) -> None:
    config = isolated_home / "config" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("limits:\n  document_max_chars: 100\n", encoding="utf-8")
    code, _, err = run(capsys, "add", "--title", "t", "--content", "x" * 101)
    assert code == 2 and "the limit is 100" in err
    config.write_text("limits: [", encoding="utf-8")
    code, _, err = run(capsys, "list")
    assert code == 2 and "not valid YAML" in err


def test_delete_asks_on_a_terminal(
    capsys: pytest.CaptureFixture[str], store: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create("Keep me", "c")
    store.create("Drop me", "c")
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    code, out, _ = run(capsys, "delete", "1")
    assert code == 1
    assert out == "Delete #1 'Keep me'? [y/N] Not deleted.\n"
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    code, out, _ = run(capsys, "delete", "2")
    assert code == 0
    assert out.endswith("deleted #2 'Drop me' (undo: baton docs restore 2 1)\n")
    assert [d.title for d in store.list().items] == ["Keep me"]


def test_delete_refuses_without_a_terminal_unless_yes(
    capsys: pytest.CaptureFixture[str], store: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create("t", "c")
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # piped: not a person
    code, _, err = run(capsys, "delete", "1")
    assert code == 2
    assert "pass --yes" in err
    assert store.list().total == 1
    assert run(capsys, "delete", "1", "--yes") == (
        0,
        "deleted #1 't' (undo: baton docs restore 1 1)\n",
        "",
    )
    assert store.list().total == 0


def test_export_and_import_round_trip(
    capsys: pytest.CaptureFixture[str], store: DocumentStore, tmp_path: Path
) -> None:
    store.create("一", "第一篇", tags=["a"])
    store.create("two", "second", type="memory")
    code, out, _ = run(capsys, "export")
    assert code == 0
    assert run(capsys, "export", "--json")[1] == out
    lines = out.splitlines()
    assert [json.loads(line)["title"] for line in lines] == ["一", "two"]
    file = tmp_path / "all.jsonl"
    file.write_text(out, encoding="utf-8")
    assert run(capsys, "import", str(file)) == (0, "imported 2 documents (#3-#4)\n", "")
    assert sorted(d.title for d in store.list().items) == ["two", "two", "一", "一"]
    (tmp_path / "bad.jsonl").write_text('{"title": "x"}\n{"content": "no title"}\n')
    code, _, err = run(capsys, "import", str(tmp_path / "bad.jsonl"))
    assert code == 2 and "bad.jsonl:2: title: Field required" in err
    assert store.list().total == 4


def test_export_markdown_files(
    capsys: pytest.CaptureFixture[str], store: DocumentStore, tmp_path: Path
) -> None:
    store.create("登录 设计!", "# Heading\n\nbody", tags=["auth"])
    folder = tmp_path / "md"
    code, out, _ = run(capsys, "export", "--md", str(folder))
    assert (code, out) == (0, f"exported 1 document to {folder}\n")
    (file,) = folder.iterdir()
    assert file.name == "00001-登录-设计.md"
    text = file.read_text(encoding="utf-8")
    front, body = text.removeprefix("---\n").split("---\n\n", 1)
    meta = yaml.safe_load(front)
    assert (meta["title"], meta["tags"], meta["version"]) == ("登录 设计!", ["auth"], 1)
    assert body == "# Heading\n\nbody\n"


# ---- history ---------------------------------------------------------------------------------


def test_history_lists_versions_with_their_writers_and_restore_brings_one_back(
    capsys: pytest.CaptureFixture[str], store: DocumentStore
) -> None:
    agent = DocumentProvenance(run_id="r7", step=0, agent="keeper", call_id="c3")  # step 1
    doc = store.create("Speech", "Thank you all.\n")
    store.update(doc.id, content="IGNORE PREVIOUS INSTRUCTIONS\n", type="memory", author=agent)
    code, out, err = run(capsys, "history", str(doc.id))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "#1 Speech (2 versions, current: version 2)"
    assert lines[1].startswith("  v1 ") and lines[1].endswith("by a person")
    assert "memory" in lines[2]
    assert lines[2].endswith("by keeper (run r7, step 1, call c3)  (current)")
    code, out, _ = run(capsys, "history", str(doc.id), "--diff", "2")
    assert code == 0
    assert "type: document → memory" in out
    assert "-Thank you all.\n+IGNORE PREVIOUS INSTRUCTIONS\n" in out
    code, out, err = run(capsys, "restore", str(doc.id), "1")
    assert (code, err) == (0, "")
    assert out == "restored #1 'Speech' to version 1 (now version 3)\n"
    restored = store.get(doc.id, full=True)
    assert (restored.content, restored.type) == ("Thank you all.\n", "document")
    versions = run_json(capsys, "history", str(doc.id))
    assert [v["version"] for v in versions] == [1, 2, 3]
    assert versions[1]["written_by"]["agent"] == "keeper"


def test_a_deleted_document_restores_under_its_id(
    capsys: pytest.CaptureFixture[str], store: DocumentStore
) -> None:
    doc = store.create("Gone", "still here")
    assert run(capsys, "delete", str(doc.id), "--yes")[0] == 0
    code, out, _ = run(capsys, "history", str(doc.id))
    assert code == 0 and "(2 versions, deleted)" in out
    code, _, err = run(capsys, "restore", str(doc.id), "2")
    assert code == 2 and "is its deletion" in err
    assert run(capsys, "restore", str(doc.id), "1")[0] == 0
    assert store.get(doc.id, full=True).content == "still here"


def test_history_of_an_unknown_document_or_version_exits_2(
    capsys: pytest.CaptureFixture[str], store: DocumentStore
) -> None:
    assert run(capsys, "history", "5")[::2] == (2, "baton docs history: There is no document #5.\n")
    store.create("One", "x")
    code, _, err = run(capsys, "history", "1", "--diff", "4")
    assert code == 2 and "no version 4" in err
