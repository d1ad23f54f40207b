"""Baton's desktop window (PySide6). Importing the package applies a PySide6 work-around first
(:mod:`gui.pyside_refcounts`): without it the interpreter aborts after a few thousand Qt calls."""

from gui import pyside_refcounts as _pyside_refcounts  # noqa: F401  (side effect: must run first)
