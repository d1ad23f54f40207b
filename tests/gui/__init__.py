"""GUI tests (pytest-qt, offscreen) and their helpers."""
