"""Where a checkout keeps text that steers a model: its ``AGENTS.md`` / ``CLAUDE.md`` context
files and its skills' folders, found the same way by the loaders above
(:mod:`core.workspace.context_files`, :mod:`core.definitions.skills`) and by the trust store's
fingerprint below them (:mod:`core.safety.trust`), so that what a step may read is exactly what
the person trusted.

The search for context files below a folder skips folders whose name starts with a dot and the
package folders of :data:`SKIPPED_FOLDERS` (a checkout's ``node_modules`` can hold thousands of
folders): the loader skips context files inside them too (:func:`searched`), so no file reaches
a prompt that the fingerprint did not cover. At most :data:`MAX_FOLDERS` folders are searched:
in a bigger checkout, context files in the folders past that are not part of the fingerprint
(a known limit, in the safety guide).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from core.config.looks import looked_once, read_file
from core.definitions.agents import find_project_root
from core.definitions.skills import PROJECT_SKILL_DIRS

CONTEXT_NAMES: tuple[str, ...] = ("AGENTS.md", "CLAUDE.md")
"""Per folder, the first that exists wins (for Baton's loop; Claude Code reads ``CLAUDE.md``)."""
CLI_CONTEXT_NAMES: tuple[str, ...] = ("CLAUDE.local.md", "AGENTS.override.md")
"""Per folder, what Claude Code and Codex read besides: fingerprinted, never loaded by Baton's
loop."""
CLI_CONTEXT_PLACES: tuple[str, ...] = (".claude/CLAUDE.md", ".claude/rules")
"""In the project folder, Claude Code's other context: a file, and a folder of rule files."""
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__"})
"""Folders never searched for context files (and never loaded from): dependencies, caches."""
MAX_FOLDERS = 20_000
"""Folders searched below a project for context files; the trust question stays quick."""
MAX_SKILL_FILES = 2_000
"""Files of the project's skill folders fingerprinted (a skill is a few files)."""


def repository_root(cwd: Path) -> Path:
    """The nearest folder from ``cwd`` up that holds ``.git`` (a folder or a file); ``cwd``
    itself when there is none."""
    start = cwd.absolute()
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return start


def context_folders(cwd: Path) -> list[Path]:
    """The folders whose context files a step in ``cwd`` is given, outer first: the
    repository's top down to ``cwd`` (``cwd`` alone outside a repository)."""
    start = cwd.absolute()
    root = repository_root(start)
    folders = [start]
    while folders[-1] != root:
        folders.append(folders[-1].parent)
    return folders[::-1]


def searched(relative: Path) -> bool:
    """Whether a folder (relative to the folder searched from) is one the search enters."""
    return not any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative.parts)


def context_files_in(root: Path) -> list[Path]:
    """Every ``AGENTS.md`` and ``CLAUDE.md`` (and Claude Code's ``CLAUDE.local.md``) a step
    could read working in ``root`` or below it: those of the folders from the repository's top
    down to ``root`` (outside ``root`` when it is a subfolder), then those below ``root``
    (symlinked folders are not entered), then Claude Code's ``.claude/CLAUDE.md`` and
    ``.claude/rules``."""
    start = root.absolute()
    names = (*CONTEXT_NAMES, *CLI_CONTEXT_NAMES)
    above = context_folders(start)[:-1]
    found = [folder / name for folder in above for name in names]
    found = [path for path in found if os.path.lexists(path)]
    found += _named_files_below(start, names)
    for place in CLI_CONTEXT_PLACES:
        path = start / place
        if path.is_dir() and not path.is_symlink():
            found += sorted(p for p in path.rglob("*.md") if p.is_file() or p.is_symlink())
        elif os.path.lexists(path):
            found.append(path)
    return found


def _named_files_below(start: Path, names: tuple[str, ...]) -> list[Path]:
    """The files called one of ``names`` in ``start`` and the folders below it that the
    search enters, in the order of a top-down ``os.walk`` with sorted subfolders, of its first
    :data:`MAX_FOLDERS` folders. A symlinked folder is not entered; an entry that is a folder
    (a link to one too) is no file. Written on ``os.scandir`` alone: every step of a trusted
    project's run looks again (an earlier step may have written a context file), and
    ``os.walk`` spent a system call and a path object on every folder it entered."""
    found: list[Path] = []
    unvisited = [os.fspath(start)]
    visited = 0
    while unvisited and visited < MAX_FOLDERS:
        folder = unvisited.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue  # unreadable, or gone meanwhile: as os.walk, not counted
        visited += 1
        files: set[str] = set()
        below: list[str] = []
        for entry in entries:
            try:
                is_folder = entry.is_dir()
            except OSError:
                is_folder = False
            if not is_folder:
                files.add(entry.name)
            elif _entered(entry.name) and not entry.is_symlink():
                below.append(entry.name)
        found += [Path(folder, name) for name in names if name in files]
        unvisited += [os.path.join(folder, name) for name in sorted(below, reverse=True)]
    return found


def _entered(name: str) -> bool:
    """:func:`searched` of one folder's name."""
    return not name.startswith(".") and name not in SKIPPED_FOLDERS


def skill_files(root: Path) -> list[Path]:
    """The files of the project's skill folders (``.claude/skills``, ``.pi/skills``): the model
    reads any of them on demand. A symlinked folder is listed itself, not entered."""
    found: list[Path] = []
    for sub in PROJECT_SKILL_DIRS:
        folder = root / sub
        if folder.is_symlink():
            found.append(folder)
            continue
        if not folder.is_dir():
            continue
        for top, dirs, files in os.walk(folder):
            here = Path(top)
            links = [d for d in dirs if (here / d).is_symlink()]
            dirs[:] = sorted(d for d in dirs if d not in links)
            found += sorted(here / name for name in (*files, *links))
            if len(found) >= MAX_SKILL_FILES:
                return found[:MAX_SKILL_FILES]
    return found


def steering_fingerprint(cwd: Path) -> str:
    """SHA-256 over the context files and project skills a step in ``cwd`` could be given, as
    they are now: taken when a run is prepared and compared when each step starts, so text an
    earlier step wrote into ``AGENTS.md`` or a skill is not read by a later one. Once per
    :func:`~core.config.looks.one_look` (a CLI step's start opens its own: one search for its
    command line and its notes)."""
    return looked_once("steering", cwd, _steering_fingerprint)


def _steering_fingerprint(cwd: Path) -> str:
    return file_digest([*context_files_in(cwd), *_project_skill_files(cwd)])


def _project_skill_files(cwd: Path) -> list[Path]:
    """:func:`skill_files` of the project a step in ``cwd`` works in."""
    return skill_files(find_project_root(cwd, PROJECT_SKILL_DIRS) or cwd)


def file_digest(paths: list[Path]) -> str:
    """SHA-256 over each path and its content (an unreadable one: the link it is, if any)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path).encode() + b"\0")
        try:
            digest.update(hashlib.sha256(read_file(path).data).digest())
        except OSError:
            digest.update(b"unreadable" + os.fsencode(path.readlink() if path.is_symlink() else ""))
    return digest.hexdigest()
