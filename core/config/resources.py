"""Access to the files Baton ships (``resources/``): built-in agents, presets, icons, styles.

They are found in the ``resources`` package's own folder. Baton needs them as real files on
disk (discovery and the file watcher read folders), which a source checkout, an installed wheel
and the PyInstaller bundle all give; ``importlib.resources``, made for packages inside zip
files, would add nothing here but ~4 ms of imports to the window's start-up.
"""

from __future__ import annotations

from pathlib import Path

import resources

_ROOT = Path(resources.__path__[0])


def builtin_dir(kind: str) -> Path:
    """The folder of one kind of shipped file: ``agents``, ``presets``, ``icons``, ``styles``."""
    return _ROOT / kind
