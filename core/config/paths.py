"""Where Baton keeps its files.

Config (``config.yaml``, user agents and presets) and data (runs, documents, trust records)
live in the platform folders from platformdirs. ``BATON_CONFIG_DIR`` and ``BATON_DATA_DIR``
override them, which is how every test and every portable install keeps away from the real
home. Folders are created on first use, never at import time.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import platformdirs

APP_NAME = "baton"


def config_dir() -> Path:
    """The folder holding ``config.yaml`` and the user's own ``agents/`` and ``presets/``."""
    return made_folder(config_path())


def data_dir() -> Path:
    """The folder holding saved runs, the document store and trust records."""
    return made_folder(data_path())


def config_path() -> Path:
    """Where :func:`config_dir` is, not made: for a reader, which finds nothing in a folder
    that is not there (making it costs a look at the disk: ~7 µs on a slow disk, asked a
    few times by every run a batch starts)."""
    override = os.environ.get("BATON_CONFIG_DIR")
    return _path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))


def data_path() -> Path:
    """Where :func:`data_dir` is, not made (see :func:`config_path`)."""
    override = os.environ.get("BATON_DATA_DIR")
    return _path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))


@functools.lru_cache(maxsize=16)
def _path(override: str) -> Path:
    """An override's path, parsed once: a batch item asks for its folders a dozen times."""
    return Path(override)


def made_folder(path: Path) -> Path:
    """``path``, created when missing. Looked at first: asked on every run and step, a
    ``mkdir`` that fails with "exists" costs a system call and an exception each time (and
    ``os.path.isdir`` is the same ``stat`` without pathlib's wrapping)."""
    if not os.path.isdir(path):
        path.mkdir(parents=True, exist_ok=True)
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
