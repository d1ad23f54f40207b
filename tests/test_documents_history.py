"""Document history: updates and deletes keep the previous version, restore brings any back,
each version says who wrote it, and ids are never reused by a new document."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.documents.schema import MIGRATIONS, connect
from core.documents.store import DocumentError, DocumentNotFound, DocumentProvenance, DocumentStore

AGENT = DocumentProvenance(run_id="r1", step=2, agent="writer", call_id="c9")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DocumentStore]:
    with DocumentStore(tmp_path / "documents.sqlite") as opened:
        yield opened


def test_every_update_keeps_the_previous_version_with_its_writer(store: DocumentStore) -> None:
    doc = store.create("Plan", "first text", tags=["a"])
    store.update(doc.id, content="second text", author=AGENT)
    store.update(doc.id, title="Plan v3", type="memory")
    versions = store.history(doc.id)
    assert [v.version for v in versions] == [1, 2, 3]
    assert [v.content for v in versions] == ["first text", "second text", "second text"]
    assert [v.title for v in versions] == ["Plan", "Plan", "Plan v3"]
    assert [v.type for v in versions] == ["document", "document", "memory"]
    assert [v.written_by.by_person for v in versions] == [True, False, True]
    assert versions[1].written_by == AGENT
    assert [v.current for v in versions] == [False, False, True]


def test_an_update_that_changes_nothing_adds_no_version(store: DocumentStore) -> None:
    doc = store.create("Plan", "same")
    store.update(doc.id, content="same")
    assert len(store.history(doc.id)) == 1


def test_restore_makes_an_old_version_current_as_a_new_version(store: DocumentStore) -> None:
    doc = store.create("Plan", "precious words", tags=["keep"])
    store.update(doc.id, content="vandalised", tags=[], author=AGENT)
    restored = store.restore(doc.id, 1)
    assert restored.content == "precious words"
    assert restored.tags == ["keep"]
    assert restored.version == 3
    assert [v.content for v in store.history(doc.id)] == [
        "precious words",
        "vandalised",
        "precious words",
    ]
    assert store.search("precious").total == 1
    assert store.search("vandalised").total == 0


def test_delete_leaves_a_tombstone_and_restore_brings_the_document_back(
    store: DocumentStore,
) -> None:
    doc = store.create("Notes", "kept safe", provenance=AGENT)
    store.delete(doc.id)
    with pytest.raises(DocumentNotFound):
        store.get(doc.id)
    versions = store.history(doc.id)
    assert [(v.version, v.deleted, v.current) for v in versions] == [
        (1, False, False),
        (2, True, False),
    ]
    assert versions[1].written_by.by_person
    with pytest.raises(DocumentError, match="deletion"):
        store.restore(doc.id, 2)
    back = store.restore(doc.id, 1)
    assert (back.id, back.content, back.version) == (doc.id, "kept safe", 3)
    assert back.provenance == AGENT  # who created it is still who created it
    assert back.created == doc.created
    assert store.search("safe").total == 1


def test_a_new_document_never_takes_a_deleted_ones_id(store: DocumentStore) -> None:
    first = store.create("one", "x")
    newest = store.create("two", "y")
    store.delete(newest.id)
    again = store.create("three", "z")
    assert again.id not in (first.id, newest.id)
    assert [v.title for v in store.history(newest.id)] == ["two", "two"]


def test_unknown_documents_and_versions_are_refused(store: DocumentStore) -> None:
    doc = store.create("one", "x")
    with pytest.raises(DocumentNotFound):
        store.history(999)
    with pytest.raises(DocumentError, match="no version 7"):
        store.restore(doc.id, 7)


def test_a_store_from_before_history_migrates_and_keeps_its_documents(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    raw = connect(path)
    for statement in MIGRATIONS[0]:
        raw.execute(statement)
    raw.execute("PRAGMA user_version = 1")
    raw.execute(
        "INSERT INTO documents (type, title, tags, run_id, agent, created, updated, content) "
        "VALUES ('memory', 'Old', '[\"x\"]', 'r0', 'scout', '2026-01-01T00:00:00.000000Z', "
        "'2026-01-01T00:00:00.000000Z', 'the quick brown fox')"
    )
    raw.close()
    with DocumentStore(path) as store:
        assert store.search("qu", type="memory", tag="X").total == 1
        (only,) = store.history(1)
        assert only.written_by.agent == "scout"  # the creator, the only writer it knew
        store.update(1, content="changed")
        assert [v.content for v in store.history(1)] == ["the quick brown fox", "changed"]
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
