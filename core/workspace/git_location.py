"""Which repository Baton's git works on — found by Baton, never by asking git where it is.

``git rev-parse --show-toplevel`` answers with the repository's ``core.worktree`` when it is
set, and the repository's configuration is in the agent's reach: one ``git config
core.worktree ~/.local/share/baton`` and the next checkpoint would record (and a restore
would write) Baton's own data folder. So the repository is located here, from the folder up,
by its ``.git`` folder, and every git call names it (``--git-dir``, ``--work-tree``:
:func:`core.workspace.git_command.repository_options`), which overrides ``core.worktree`` and every
``GIT_*`` variable.

Refused (:class:`UnsafeRepository`, the message says why):

* a ``.git`` that is a *file* pointing elsewhere (a submodule, a worktree someone else made, or
  a planted redirect to another repository) — except a worktree Baton made itself, in its own
  worktree folder, whose git folder points back to it;
* a ``.git`` that is a symlink;
* a repository whose folder contains one of Baton's folders, or lies inside one, or whose git
  folder does: a checkpoint would copy Baton's documents and runs into the repository, where the
  agent can read them.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from core.config.paths import protected_dirs, worktrees_dir


class UnsafeRepository(Exception):
    """Baton will not run git on this repository; the message says why."""


@dataclass(frozen=True)
class Repository:
    top: Path
    """The working tree's top folder (resolved)."""
    git_dir: Path
    """Its git folder (for a linked worktree, ``<repository>/.git/worktrees/<name>``)."""


def locate(folder: Path) -> Repository | None:
    """The repository holding ``folder`` (the nearest ``.git`` above it); None when there is
    none; :class:`UnsafeRepository` when there is one Baton must not touch."""
    start = folder.resolve()
    for candidate in (start, *start.parents):
        dot = candidate / ".git"
        try:
            mode = os.lstat(dot).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        if stat.S_ISLNK(mode):
            raise UnsafeRepository(f"{dot} is a symlink; Baton does not follow it")
        if stat.S_ISDIR(mode):
            if not (dot / "HEAD").exists():
                continue  # not a repository (git looks further up too)
            repository = Repository(candidate, dot)
        elif stat.S_ISREG(mode):
            repository = Repository(candidate, _linked_git_dir(candidate, dot))
        else:
            raise UnsafeRepository(f"{dot} is neither a folder nor a file")
        check_not_protected(repository.top, repository.git_dir)
        return repository
    return None


def check_not_protected(top: Path, git_dir: Path | None = None) -> None:
    """Refuse a working tree holding, or inside, one of Baton's folders (and a git folder
    inside one: only Baton's own shadow repositories live there, and they are not passed)."""
    for folder in protected_dirs():
        if top.is_relative_to(folder) or folder.is_relative_to(top):
            raise UnsafeRepository(
                f"{top} contains or lies inside Baton's own folder {folder}; Baton does not "
                "record or restore it with git (its runs and documents would be copied into "
                "the repository)"
            )
        if git_dir is not None and git_dir.resolve().is_relative_to(folder):
            raise UnsafeRepository(f"the git folder of {top} lies inside Baton's folder {folder}")


def check_git_dir(git_dir: Path) -> None:
    """Refuse a git folder that is not (or no longer) a real folder: a symlink or a file there
    would send git to another repository."""
    try:
        mode = os.lstat(git_dir).st_mode
    except OSError as error:
        raise UnsafeRepository(f"the git folder {git_dir} cannot be read: {error}") from None
    if not stat.S_ISDIR(mode):
        raise UnsafeRepository(f"{git_dir} is no longer a git folder (a file or a symlink now)")


def _linked_git_dir(top: Path, dot: Path) -> Path:
    """The git folder a ``.git`` file names, if it is a worktree Baton made; refused else."""

    try:
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
    except OSError as error:
        raise UnsafeRepository(f"{dot} cannot be read: {error}") from None
    if not text.startswith("gitdir:"):
        raise UnsafeRepository(f"{dot} is a file that does not name a git folder")
    named = Path(text.removeprefix("gitdir:").strip())
    git_dir = (named if named.is_absolute() else top / named).resolve()
    ours = top.is_relative_to(worktrees_dir().resolve())
    back = git_dir / "gitdir"
    try:
        points_back = Path(back.read_text(encoding="utf-8").strip()).resolve() == dot.resolve()
    except OSError:
        points_back = False
    if not (ours and points_back and git_dir.parent.name == "worktrees"):
        raise UnsafeRepository(
            f"{dot} is a file pointing to {git_dir}; Baton only records a folder whose own .git "
            "folder it is, or a worktree it made"
        )
    return git_dir
