"""Baton's engine: agent definitions, runs, backends and tools, with no Qt anywhere.

Everything under ``core`` must stay importable on a machine without PySide6, so the
command line and the tests can use it headless; ``tests/test_layering.py`` enforces that.
"""

__version__ = "0.1.0"
