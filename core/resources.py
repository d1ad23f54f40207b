"""Access to the files Baton ships (``resources/``): built-in agents, presets, icons, styles.

Read through ``importlib.resources`` so the same code finds them in a source checkout, an
installed wheel and a PyInstaller bundle. All three keep them as real files on disk, which the
folder-based discovery (and the file watcher) rely on.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path


def builtin_dir(kind: str) -> Path:
    """The folder of one kind of shipped file: ``agents``, ``presets``, ``icons``, ``styles``."""
    return _root() / kind


@cache
def _root() -> Path:
    """Where ``resources/`` is: asked once (the window asks for icons about twenty times while
    it opens, at ~0.2 ms an ``importlib.resources`` look-up)."""
    return Path(str(resources.files("resources")))
