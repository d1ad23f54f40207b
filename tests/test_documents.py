"""The document store: records, limits, versions and conflicts, listing, reading, the schema."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

import pytest

from core.config.settings import Limits
from core.documents.schema import SCHEMA_VERSION
from core.documents.store import (
    DocumentConflict,
    DocumentError,
    DocumentNotFound,
    DocumentProvenance,
    DocumentStore,
    DocumentSummary,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DocumentStore]:
    with DocumentStore(tmp_path / "documents.sqlite") as opened:
        yield opened


def small_store(tmp_path: Path, **limits: int) -> DocumentStore:
    return DocumentStore(tmp_path / "small.sqlite", limits=Limits(**limits))


# ---- records -----------------------------------------------------------------------------


def test_create_returns_the_full_record(store: DocumentStore) -> None:
    doc = store.create("  Login   plan ", "short text", tags=[" auth ", "ui", "AUTH", "", "ui"])
    assert doc.id >= 1
    assert doc.title == "Login plan"
    assert doc.content == "short text"
    assert doc.type == "document"
    assert doc.tags == ["auth", "ui"]
    assert doc.summary == ""
    assert doc.chars == len("short text")
    assert doc.version == 1
    assert doc.provenance.by_person
    assert doc.created == doc.updated
    assert doc.created.tzinfo == UTC


def test_summary_is_the_first_200_characters_of_long_content(store: DocumentStore) -> None:
    exactly = store.create("a", "x" * 200)
    longer = store.create("b", "登" * 150 + "y" * 51)
    assert exactly.summary == ""
    assert longer.summary == ("登" * 150 + "y" * 50) + "..."


def test_provenance_is_kept(store: DocumentStore) -> None:
    who = DocumentProvenance(run_id="r1", step=2, agent="planner", call_id="c9")
    doc = store.create("Plan", "p", type="memory", provenance=who)
    again = store.get(doc.id)
    assert again.provenance == who
    assert not again.provenance.by_person
    assert again.type == "memory"


def test_get_returns_content_only_when_full(store: DocumentStore) -> None:
    doc = store.create("t", "body")
    assert store.get(doc.id).content is None
    assert store.get(doc.id, full=True).content == "body"


@pytest.mark.parametrize("title", ["", "   ", "\n\t"])
def test_an_empty_title_is_refused(store: DocumentStore, title: str) -> None:
    with pytest.raises(DocumentError, match="title must not be empty"):
        store.create(title, "x")


def test_content_over_the_limit_is_refused_with_the_numbers(tmp_path: Path) -> None:
    with small_store(tmp_path, document_max_chars=100) as store:
        store.create("fits", "x" * 100)
        with pytest.raises(DocumentError, match=r"101 characters; the limit is 100"):
            store.create("too long", "x" * 101)
        doc = store.create("ok", "y")
        with pytest.raises(DocumentError, match="the limit is 100"):
            store.update(doc.id, content="z" * 101)
        assert store.get(doc.id, full=True).content == "y"


def test_bad_type_and_tags_are_refused(store: DocumentStore) -> None:
    with pytest.raises(DocumentError, match="'memory' or 'document'"):
        store.create("t", "c", type="note")
    with pytest.raises(DocumentError, match="list of strings"):
        store.create("t", "c", tags="auth")
    with pytest.raises(DocumentError, match="at most 32 tags"):
        store.create("t", "c", tags=[f"t{i}" for i in range(40)])


# ---- updates, versions and conflicts -----------------------------------------------------


def test_update_changes_fields_and_bumps_the_version(store: DocumentStore) -> None:
    doc = store.create("Old", "old text", tags=["a"])
    new = store.update(doc.id, title="New", content="n" * 250, tags=["b", "c"], type="memory")
    assert (new.title, new.type, new.tags, new.version) == ("New", "memory", ["b", "c"], 2)
    assert new.summary == "n" * 200 + "..."
    assert new.chars == 250
    assert new.updated > doc.updated
    assert new.created == doc.created


def test_an_update_that_changes_nothing_writes_nothing(store: DocumentStore) -> None:
    doc = store.create("Same", "same", tags=["x"])
    again = store.update(doc.id, title="Same", content="same", tags=["x"])
    assert again.version == 1
    assert again.updated == doc.updated


def test_an_edit_of_an_older_version_is_a_conflict_carrying_the_current_one(
    store: DocumentStore,
) -> None:
    doc = store.create("Notes", "person's first text")
    # The GUI opened version 1; meanwhile an agent appended to it.
    store.update(doc.id, content="agent's text")
    with pytest.raises(DocumentConflict) as conflict:
        store.update(doc.id, content="person's edit", expected_version=doc.version)
    assert conflict.value.current.version == 2
    assert conflict.value.current.content == "agent's text"
    assert "changed meanwhile" in str(conflict.value)
    # Nothing was overwritten; "keep mine" retries against the version now stored.
    assert store.get(doc.id, full=True).content == "agent's text"
    kept = store.update(doc.id, content="person's edit", expected_version=2)
    assert (kept.content, kept.version) == ("person's edit", 3)


def test_a_delete_of_an_older_version_is_a_conflict(store: DocumentStore) -> None:
    doc = store.create("t", "c")
    store.update(doc.id, content="changed")
    with pytest.raises(DocumentConflict):
        store.delete(doc.id, expected_version=1)
    assert store.get(doc.id).id == doc.id


def test_unknown_ids_are_not_found(store: DocumentStore) -> None:
    for call in (
        lambda: store.get(999),
        lambda: store.update(999, title="x"),
        lambda: store.delete(999),
        lambda: store.read(999),
    ):
        with pytest.raises(DocumentNotFound, match="no document #999"):
            call()


def test_delete_returns_what_was_deleted(store: DocumentStore) -> None:
    doc = store.create("Gone soon", "c", tags=["t"])
    deleted = store.delete(doc.id)
    assert (deleted.id, deleted.title) == (doc.id, "Gone soon")
    assert not hasattr(deleted, "content")
    with pytest.raises(DocumentNotFound):
        store.get(doc.id)
    assert store.list(tag="t").total == 0


def test_concurrent_writers_in_threads_all_land(store: DocumentStore) -> None:
    doc = store.create("counter", "0")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(10):
                store.create(f"thread {n} doc {i}", "x")
                store.update(doc.id, content=f"{n}-{i}")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.list().total == 41
    assert store.get(doc.id).version == 41


# ---- listing ---------------------------------------------------------------------------------


def test_list_is_newest_change_first_without_content(store: DocumentStore) -> None:
    first = store.create("first", "1")
    second = store.create("second", "2")
    assert [d.id for d in store.list().items] == [second.id, first.id]
    store.update(first.id, content="changed")
    page = store.list()
    assert [d.id for d in page.items] == [first.id, second.id]
    assert all(type(item) is DocumentSummary for item in page.items)
    assert "content" not in page.items[0].model_dump()


def test_list_pages_and_totals(tmp_path: Path) -> None:
    with small_store(tmp_path, document_page_size=5) as store:
        for i in range(12):
            store.create(f"doc {i}", "c", type="memory" if i % 3 == 0 else "document")
        first = store.list()
        assert (first.page, first.page_size, first.total, first.pages) == (1, 5, 12, 3)
        assert len(first.items) == 5
        # Asking for more than the limit gets the limit.
        assert store.list(page_size=50).page_size == 5
        assert len(store.list(page=3).items) == 2
        assert store.list(page=4).items == []
        seen = [d.id for p in (1, 2, 3) for d in store.list(page=p).items]
        assert sorted(seen) == list(range(1, 13))
        memories = store.list(type="memory")
        assert memories.total == 4
        assert {d.type for d in memories.items} == {"memory"}
        with pytest.raises(DocumentError, match="page must be 1 or more"):
            store.list(page=0)


def test_tag_filter_ignores_case_and_follows_updates(store: DocumentStore) -> None:
    a = store.create("a", "c", tags=["Auth", "登录"])
    store.create("b", "c", tags=["ui"])
    assert [d.id for d in store.list(tag="auth").items] == [a.id]
    assert [d.id for d in store.list(tag="登录").items] == [a.id]
    store.update(a.id, tags=["ui"])
    assert store.list(tag="auth").total == 0
    assert store.list(tag="ui").total == 2
    assert store.list(tag="ui", type="memory").total == 0


# ---- reading within a token budget -------------------------------------------------------


def test_read_gives_the_summary_unless_full(store: DocumentStore) -> None:
    long = store.create("long", "word " * 100)
    short = store.create("short", "all of it")
    summary = store.read(long.id)
    assert not summary.full
    assert summary.text == long.summary
    assert summary.omitted_chars == 300
    assert "full=true" in summary.note
    whole = store.read(short.id)
    assert whole.text == "all of it"
    assert whole.note == ""


def test_a_full_read_over_the_budget_is_cut_with_a_note_and_can_continue(
    store: DocumentStore,
) -> None:
    content = "".join(f"line {i:04d} of the report\n" for i in range(400))  # ~9,600 chars
    doc = store.create("report", content)
    first = store.read(doc.id, full=True, token_budget=500)
    assert first.text.endswith("\n")
    assert len(first.text) <= 2000
    assert first.omitted_chars == len(content) - len(first.text)
    assert f"{first.omitted_chars:,} more characters" in first.note
    assert f"offset={len(first.text)}" in first.note
    pieces, offset = [first.text], len(first.text)
    while offset < len(content):
        part = store.read(doc.id, full=True, offset=offset, token_budget=500)
        pieces.append(part.text)
        offset += len(part.text)
    assert "".join(pieces) == content
    assert store.read(doc.id, full=True, token_budget=5000).note == ""


def test_cjk_text_costs_a_token_per_character(store: DocumentStore) -> None:
    doc = store.create("中文", "登录" * 300)
    cut = store.read(doc.id, full=True, token_budget=100)
    assert len(cut.text) == 100
    assert cut.omitted_chars == 500


def test_read_offset_outside_the_document_is_an_error(store: DocumentStore) -> None:
    doc = store.create("t", "abc")
    with pytest.raises(DocumentError, match="outside document"):
        store.read(doc.id, full=True, offset=4)


# ---- import / export ---------------------------------------------------------------------


def test_export_then_import_round_trips(store: DocumentStore, tmp_path: Path) -> None:
    who = DocumentProvenance(run_id="r", step=0, agent="a", call_id="c")
    store.create("one", "登录 text", tags=["x"], provenance=who)
    store.create("two", "y" * 300, type="memory")
    lines = [doc.model_dump_json() for doc in store.export()]
    file = tmp_path / "docs.jsonl"
    file.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    with DocumentStore(tmp_path / "other.sqlite") as other:
        ids = other.import_jsonl(file)
        assert len(ids) == 2
        mine = {d.title: d for d in store.export()}
        for theirs in other.export():
            original = mine[theirs.title]
            assert theirs.model_dump(exclude={"id"}) == original.model_dump(exclude={"id"})


def test_a_bad_import_line_imports_nothing(store: DocumentStore, tmp_path: Path) -> None:
    file = tmp_path / "bad.jsonl"
    good = json.dumps({"title": "fine", "content": "c"})
    file.write_text(f"{good}\n{{not json\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"bad\.jsonl:2"):
        store.import_jsonl(file)
    file.write_text(f"{good}\n{json.dumps({'title': ' ', 'content': 'c'})}\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"bad\.jsonl:2: The title must not be empty"):
        store.import_jsonl(file)
    assert store.list().total == 0


# ---- schema, files and the change signal -------------------------------------------------


def test_a_new_file_is_migrated_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "documents.sqlite"
    DocumentStore(path).close()
    DocumentStore(path).close()  # reopening is a no-op
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_a_file_from_a_newer_baton_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "documents.sqlite"
    DocumentStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(DocumentError, match="newer Baton"):
        DocumentStore(path)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "documents.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(DocumentError, match="not a usable document store"):
        DocumentStore(path)


def test_a_closed_store_says_so(tmp_path: Path) -> None:
    store = DocumentStore(tmp_path / "d.sqlite")
    store.close()
    with pytest.raises(DocumentError, match="closed"):
        store.list()


def test_change_token_sees_writes_from_any_connection(tmp_path: Path) -> None:
    path = tmp_path / "documents.sqlite"
    with DocumentStore(path) as gui, DocumentStore(path) as agent:
        token = gui.change_token()
        assert gui.change_token() == token
        doc = agent.create("from an agent", "x")
        token, before = gui.change_token(), token
        assert token != before
        gui.update(doc.id, title="edited in the GUI")
        token, before = gui.change_token(), token
        assert token != before
        agent.delete(doc.id)
        assert gui.change_token() != token


def test_default_store_lives_in_the_data_folder_with_settings_limits(
    isolated_home: Path,
) -> None:
    config = isolated_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.yaml").write_text("limits:\n  document_page_size: 7\n", encoding="utf-8")
    store = DocumentStore.default()
    try:
        assert store.path == isolated_home / "data" / "documents.sqlite"
        assert store.limits.document_page_size == 7
        assert DocumentStore.default() is store
    finally:
        store.close()
    reopened = DocumentStore.default()
    assert reopened is not store
    reopened.close()
