"""Where the pi and Claude Code programs are, when PATH alone does not say.

An app started from a desktop menu or dock does not get what ``~/.bashrc`` or the profile add
to PATH (nvm, npm's global folder, ``~/.local/bin``, Claude Code's own install folder), and
that is where these CLIs usually live. So after the configured path and PATH, the folders
their installers use are searched too, and the answer says where the program was found: the
welcome panel and Settings show it, so a person can tell which copy will run.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Where = Literal["settings", "path", "login shell", "usual folder"]
Which = Callable[[str], str | None]

USUAL_FOLDERS = (
    "~/.local/bin",
    "~/.npm-global/bin",
    "~/.npm-packages/bin",
    "~/.claude/local",
    "~/.bun/bin",
    "~/.volta/bin",
    "~/.yarn/bin",
    "~/.local/share/pnpm",
    "~/n/bin",
    "~/.asdf/shims",
    "~/.local/share/mise/shims",
    "/usr/local/bin",
    "/opt/homebrew/bin",
)
"""Where npm, bun, volta, pnpm, the Claude Code installer and friends put programs."""

_login_path_dirs: set[str] = set()
"""PATH folders that came from the login shell's environment (see :func:`note_login_path`)."""


@dataclass(frozen=True)
class Found:
    """A program and how it was found."""

    path: str
    where: Where

    def describe(self) -> str:
        """``/home/me/.nvm/…/bin/pi (from your login shell)``: the path, and why that one."""
        reason = {
            "settings": "chosen in Settings",
            "path": "on PATH",
            "login shell": "on your login shell's PATH",
            "usual folder": "in a usual install folder",
        }[self.where]
        return f"{self.path} ({reason})"


def note_login_path(folders: Iterable[str]) -> None:
    """Remember which PATH folders the login shell added, so a program found there is
    described as such."""
    _login_path_dirs.update(os.path.normpath(folder) for folder in folders if folder)


def _version_key(folder: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", folder.parent.name))


def usual_folders(home: Path | None = None) -> list[Path]:
    """The usual install folders, each nvm-installed Node's ``bin`` newest first."""
    home = Path.home() if home is None else home
    folders = [
        Path(f.replace("~", str(home), 1)) if f.startswith("~") else Path(f) for f in USUAL_FOLDERS
    ]
    nvm = Path(os.environ.get("NVM_DIR") or home / ".nvm") / "versions" / "node"
    node_bins = sorted(nvm.glob("*/bin"), key=_version_key, reverse=True)
    return [*folders[:2], *node_bins, *folders[2:]]


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def locate_program(
    name: str,
    configured: str | None = None,
    *,
    which: Which = shutil.which,
    folders: Callable[[], Iterable[Path]] | None = usual_folders,
) -> Found | None:
    """``name``'s executable: the ``configured`` path or name (only it, when set: a person who
    chose a program must not silently get another), else ``name`` on PATH, else in the usual
    install folders (``folders``; None: not searched). None when there is none."""
    if configured:
        found = which(str(Path(configured).expanduser()) if os.sep in configured else configured)
        return Found(found, "settings") if found else None
    found = which(name)
    if found:
        login = os.path.normpath(os.path.dirname(found)) in _login_path_dirs
        return Found(found, "login shell" if login else "path")
    for folder in folders() if folders is not None else ():
        candidate = folder / name
        if _executable(candidate):
            return Found(str(candidate), "usual folder")
    return None
