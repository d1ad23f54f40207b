"""The garbage collector's settings while a batch runs (core.batch.collection)."""

from __future__ import annotations

import gc
import weakref

from core.batch.collection import YOUNG_THRESHOLD, batch_collection


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
