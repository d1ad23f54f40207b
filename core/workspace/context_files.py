"""Project context: the ``AGENTS.md`` / ``CLAUDE.md`` files Baton's own loop reads into a step's
system prompt (architecture: "Backends").

The rules are the ecosystem's (pi's, which Claude Code's ``CLAUDE.md`` loading matches for the
folders it shares):

* one file per folder: ``AGENTS.md`` when it exists, else ``CLAUDE.md``;
* from the working folder up to the repository root (the nearest folder holding ``.git``), and
  no further — a folder outside git is its own root, so nothing above a project is read;
* outer first, the working folder last: the closest file has the last word.

A checkout is hostile until trusted, so the caller loads context only for a trusted project.
Even then a file is read only if it is a regular file whose real path stays inside the
repository root and outside Baton's own folders: an ``AGENTS.md`` that is a symlink to
``~/.ssh/id_rsa`` is skipped, not followed. All files together are capped at
:data:`MAX_CONTEXT_CHARS` characters: a file that crosses the cap is cut at a line end with a
note saying so (the model can still ``read`` the rest), and files after it are not loaded —
both are listed in :attr:`ProjectContext.cut`. A step's start reads no more than the cap from
disk, so a 10 MB file costs it what the cap allows, not its size (checking a run reads it
whole: the trust check hashes every byte).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from core.config.looks import read_file
from core.config.paths import protected_dirs
from core.definitions.project_context import CONTEXT_NAMES, context_folders, searched

MAX_CONTEXT_CHARS = 40_000
"""All context files together (about 10k tokens): more would crowd out the task."""
CHARS_PER_TOKEN = 4
"""The estimate the budget uses for prompts too (:mod:`core.backends.openai_compat`)."""


@dataclass(frozen=True)
class ContextFile:
    path: Path
    """Where it was found (not resolved: the name the person knows)."""
    shown: str
    """Relative to the repository root, with forward slashes (``src/AGENTS.md``)."""
    text: str
    cut: bool = False


@dataclass
class ProjectContext:
    root: Path
    files: list[ContextFile] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    """Files cut at the cap, or not loaded because the cap was already reached."""
    skipped: list[str] = field(default_factory=list)
    """Files refused: a symlink out of the project, not a regular file, unreadable."""

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.prompt())

    def prompt(self) -> str:
        """The system prompt section, in pi's shape: one heading per file, outer first."""
        if not self.files:
            return ""
        parts = ["# Project Context", "", "Project-specific instructions and guidelines:"]
        for file in self.files:
            parts += ["", f"## {file.shown}", "", file.text.rstrip("\n")]
        return "\n".join(parts) + "\n"


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def load_project_context(cwd: Path, limit: int = MAX_CONTEXT_CHARS) -> ProjectContext:
    """The context files for a step working in ``cwd``; the caller has checked trust."""
    folders = context_folders(cwd)
    root = folders[0]
    context = ProjectContext(root)
    left = limit
    for folder in folders:
        if not searched(folder.relative_to(root)):
            continue  # a dot-folder or node_modules: not in the trust fingerprint either
        found = next((folder / n for n in CONTEXT_NAMES if os.path.lexists(folder / n)), None)
        if found is None:
            continue
        shown = found.relative_to(root).as_posix()
        if left <= 0:
            context.cut.append(shown)
            continue
        text = _read_inside(found, root, left)
        if text is None:
            context.skipped.append(shown)
            continue
        cut = len(text) > left
        if cut:
            kept = text[:left]
            end = kept.rfind("\n")
            kept = kept[: end + 1] if end > 0 else kept
            text = kept + (
                f"\n[{shown} was cut here: project context is capped at {limit:,} characters. "
                f"Read the rest with the read tool if you need it.]\n"
            )
            context.cut.append(shown)
        context.files.append(ContextFile(found, shown, text, cut))
        left -= len(text)
    return context


def _read_inside(path: Path, root: Path, limit: int) -> str | None:
    """At most ``limit`` + 1 characters of ``path``, or None when it is not a regular file
    whose real path lies inside ``root`` and outside Baton's folders. Where the bytes came
    from is asked of the file read (:func:`~core.config.looks.read_file`), not of the path
    before reading: a link swapped in between cannot lead the reading out."""
    try:
        file = read_file(path, (limit + 1) * 4)  # UTF-8: at most four bytes a character
        top = root.resolve()
    except (OSError, RuntimeError):
        return None
    if not file.real.is_relative_to(top):
        return None
    if any(file.real.is_relative_to(p) for p in protected_dirs()):
        return None
    return file.data.decode("utf-8", errors="replace")[: limit + 1]
