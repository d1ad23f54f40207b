"""Running a program that reads the working folder (ripgrep) where it can see nothing else.

ripgrep walks folders by path. Baton's own walker holds a descriptor per folder
(:mod:`core.tools.walk`), but ripgrep cannot be told to: another task's ``bash`` turning a
folder into a symlink to ``~`` mid-search would have ripgrep read, and the model see, files
outside the working folder. So ripgrep runs in a bubblewrap mount namespace holding only the
system's program folders (read-only), the ripgrep binary, the working folder (read-only, with
Baton's folders inside it replaced by empty ones) and the ignore files of the folders above it
(ripgrep honours them, as does the walker). A symlink out of the folder then leads nowhere.
Without bubblewrap :func:`confined_argv` returns None and ``grep`` uses the Python walker.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from core.safety.sandbox import sandbox_status

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc/ld.so.cache")
"""What a dynamically linked program needs to start; nothing in them is the user's."""
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")


def confined_argv(
    argv: Sequence[str], *, root: Path, ignore_top: Path, protected: Sequence[Path]
) -> list[str] | None:
    """``argv`` (its first word the program's path) run seeing only ``root`` read-only; None
    when bubblewrap is not available here."""
    if sandbox_status(True).kind != "bubblewrap":
        return None
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    mounts: list[str] = []
    for system in SYSTEM_FOLDERS:
        if os.path.islink(system):
            mounts += ["--symlink", os.readlink(system), system]
        else:
            mounts += ["--ro-bind-try", system, system]
    program = os.path.realpath(argv[0])
    mounts += ["--ro-bind", program, program]
    folder = root
    while folder != ignore_top and folder.parent != folder:
        folder = folder.parent
        for name in IGNORE_FILES:
            mounts += ["--ro-bind-try", str(folder / name), str(folder / name)]
    mounts += ["--ro-bind", str(root), str(root), "--dev", "/dev"]
    for masked in protected:
        if masked.is_relative_to(root):
            mounts += ["--tmpfs", str(masked)]
    isolation = ["--new-session", "--die-with-parent", "--chdir", str(root)]  # mounts are enough
    return [bwrap, *mounts, *isolation, "--", program, *argv[1:]]
