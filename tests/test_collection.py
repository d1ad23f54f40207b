"""The garbage collector's settings: the window's start-up objects frozen, and while a batch
runs (core.model.collection)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from core.model import collection
from core.model.collection import YOUNG_THRESHOLD, batch_collection, freeze_start_up


@pytest.fixture
def started_window(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process as the window is once started: its objects frozen for good (undone after
    the test, which the window never does)."""
    monkeypatch.setattr(collection, "_start_up_frozen", False)
    try:
        freeze_start_up()
        yield
    finally:
        gc.unfreeze()


def test_a_batch_freezes_the_heap_and_collects_in_larger_steps_then_restores_both() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with batch_collection():
        assert gc.get_threshold()[0] == max(YOUNG_THRESHOLD, before[0])
        assert gc.get_freeze_count() > frozen
        with batch_collection():  # a second batch at the same time
            pass
        assert gc.get_threshold()[0] == max(YOUNG_THRESHOLD, before[0])  # still the first's
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0  # what was frozen is collectable again


def test_cycles_made_during_a_batch_are_still_collected() -> None:
    class Node:
        other: Node

    with batch_collection():
        a, b = Node(), Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b
        gc.collect()
        assert alive() is None


def test_automatic_collection_left_off_stays_off() -> None:
    before = gc.get_threshold()
    gc.set_threshold(0)
    try:
        with batch_collection():
            assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def test_the_window_freezes_its_start_up_objects_for_good(started_window: None) -> None:
    frozen = gc.get_freeze_count()
    assert frozen > 0

    class Node:
        other: Node

    a, b = Node(), Node()  # made after start-up: a cycle the collector still finds
    a.other, b.other = b, a
    alive = weakref.ref(a)
    del a, b
    gc.collect()
    assert alive() is None
    made_since = [[n] for n in range(1000)]
    freeze_start_up()  # once only: what came since stays in sight
    assert gc.get_freeze_count() <= frozen
    del made_since


def test_a_batch_in_the_window_leaves_its_frozen_objects_frozen(started_window: None) -> None:
    """A batch's end would otherwise unfreeze the window's start-up objects, and full
    collections would walk them again for the rest of the session."""
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()  # (frozen objects may still be freed by reference count)
    made_since = [[n] for n in range(1000)]
    with batch_collection():
        assert gc.get_threshold()[0] == max(YOUNG_THRESHOLD, before[0])
        assert gc.get_freeze_count() <= frozen  # nothing made later is frozen for good
    assert gc.get_threshold() == before
    assert 0 < gc.get_freeze_count() <= frozen
    del made_since
