"""Baton's desktop window (PySide6). Qt lives here and only here; ``core`` never imports it."""
