"""Where Baton keeps its files.

Config (``config.yaml``, user agents and presets) and data (runs, documents, trust records)
live in the platform folders from platformdirs. ``BATON_CONFIG_DIR`` and ``BATON_DATA_DIR``
override them, which is how every test and every portable install keeps away from the real
home. Folders are created on first use, never at import time.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import platformdirs

APP_NAME = "baton"


def config_dir() -> Path:
    """The folder holding ``config.yaml`` and the user's own ``agents/`` and ``presets/``."""
    override = os.environ.get("BATON_CONFIG_DIR")
    path = _path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))
    return made_folder(path)


def data_dir() -> Path:
    """The folder holding saved runs, the document store and trust records."""
    override = os.environ.get("BATON_DATA_DIR")
    path = _path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))
    return made_folder(path)


@functools.lru_cache(maxsize=16)
def _path(override: str) -> Path:
    """An override's path, parsed once: a batch item asks for its folders a dozen times."""
    return Path(override)


SEEN_FOR_S = 1.0
"""How long a folder seen (or made) is taken to be there without looking again."""

MAX_FOLDERS_SEEN = 64
_seen: dict[Path, float] = {}


def made_folder(path: Path) -> Path:
    """``path``, created when missing. A batch item asks for these folders a dozen times
    (run file, index, trust, rules, step shells …): each asking looked at the disk (a
    ``stat``, 2 % of an item's supervisor CPU in ``benchmarks/batch.py``), so a folder seen
    is taken as there for :data:`SEEN_FOR_S`. A folder removed under a running app (a person
    cleaning up) is made again once that second has passed."""
    now = time.monotonic()
    seen = _seen.get(path)
    if seen is not None and now - seen < SEEN_FOR_S:
        return path
    if not os.path.isdir(path):
        path.mkdir(parents=True, exist_ok=True)
    if len(_seen) >= MAX_FOLDERS_SEEN:  # the overrides changed many times (a test suite)
        _seen.clear()
    _seen[path] = now
    return path


def pi_agent_dir() -> Path:
    """pi's own config folder (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``).

    Baton reads the user's pi agents from its ``agents/`` folder so that agents written for
    pi's subagent tool show up without copying them.
    """
    override = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(override) if override else Path.home() / ".pi" / "agent"


def protected_dirs() -> tuple[Path, ...]:
    """Baton's private folders, symlinks resolved: config (settings, rules) and data (runs,
    run index, documents, trust store). No agent tool may read or write inside them, even when
    they lie inside the working folder, and sandboxed ``bash`` sees them empty: whatever an
    agent could write there would change what it may do, or what the audit trail says.
    """
    return tuple(dict.fromkeys(folder.resolve() for folder in (config_dir(), data_dir())))


def worktrees_dir() -> Path:
    """``BATON_WORKTREE_DIR``, else the platform's cache folder for Baton + ``worktrees``:
    where worktree runs work (and what the git checks recognise as Baton's own worktrees)."""
    override = os.environ.get("BATON_WORKTREE_DIR")
    return Path(override) if override else Path(platformdirs.user_cache_dir("baton")) / "worktrees"
