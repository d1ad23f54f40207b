"""Baton's tests, a package: helpers are imported as ``tests.llm_server``, ``tests.gui.run_events``
(from the repository root, where pytest and ``python -m benchmarks.NAME`` put it on the path)."""
