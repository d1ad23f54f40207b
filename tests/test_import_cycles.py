"""No import circles in the core or the window: a module that imports, even only for types,
a module that imports it back cannot be read (or moved) on its own, so a circle fails here.

The graph is the one ``lint-imports`` checks (grimp, which import-linter is built on), with the
imports under ``TYPE_CHECKING`` and inside functions counted: they are arrows a reader follows.
"""

from __future__ import annotations

import graphlib

import grimp


def import_graph(*packages: str) -> dict[str, set[str]]:
    """Each module of ``packages`` → the modules of ``packages`` it imports directly."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    return {
        module: graph.find_modules_directly_imported_by(module) & graph.modules
        for module in graph.modules
    }


def first_circle(graph: dict[str, set[str]]) -> list[str]:
    """A circle in ``graph`` as the modules along it (the first back to the start), or []."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return []


def test_core_and_gui_have_no_import_circle() -> None:
    assert first_circle(import_graph("core", "gui")) == []


def test_a_circle_is_found_and_named() -> None:
    circle = first_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert set(circle) == {"a", "b", "c"}
    assert circle[0] == circle[-1]
