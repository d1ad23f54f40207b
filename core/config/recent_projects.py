"""The projects Baton was opened on, newest first, and which one a start-up opens.

A double-clicked app starts in the home folder (or ``/``), which is nobody's project: there
Baton opens the project used last instead (or asks for one), never silently the home folder.
The list lives in ``recent-projects.json`` in the config folder, written atomically: two
windows closing at once, or a crash mid-write, must not lose it.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.config.atomic import atomic_write_text
from core.config.paths import config_dir

FILE_NAME = "recent-projects.json"
KEEP = 10
"""How many projects File ▸ Open Recent lists."""


def _file() -> Path:
    return config_dir() / FILE_NAME


def recent_projects() -> list[Path]:
    """The remembered projects that still exist, newest first (an unreadable file: none)."""
    try:
        data = json.loads(_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    entries = data.get("recent", []) if isinstance(data, dict) else []
    folders = [Path(entry) for entry in entries if isinstance(entry, str) and entry]
    return [folder for folder in folders if folder.is_dir()]


def remember_project(folder: Path) -> list[Path]:
    """Put ``folder`` first in the list (once), keep :data:`KEEP`; returns the new list."""
    folder = Path(folder).resolve()
    kept = [folder, *(f for f in recent_projects() if f != folder)][:KEEP]
    atomic_write_text(_file(), json.dumps({"recent": [str(f) for f in kept]}, indent=2) + "\n")
    return kept


def forget_projects() -> None:
    """Empty the list (File ▸ Open Recent ▸ Clear)."""
    atomic_write_text(_file(), json.dumps({"recent": []}) + "\n")


def is_no_project(folder: Path, home: Path | None = None) -> bool:
    """Whether ``folder`` is where a desktop launch starts (home, or the file system root)
    rather than a project someone chose."""
    resolved = Path(folder).resolve()
    home = (Path.home() if home is None else home).resolve()
    return resolved == home or resolved == Path(resolved.anchor)


def start_folder(cwd: Path, home: Path | None = None) -> Path | None:
    """The project a window opens on: ``cwd`` when it is one, else the last project used;
    None when there is none (the window asks)."""
    if not is_no_project(cwd, home):
        return Path(cwd)
    recent = recent_projects()
    return recent[0] if recent else None
