"""The sandbox rules every file tool shares: a path must stay inside the step's working folder,
and out of Baton's own folders.

A model names files relative to the working folder or absolutely. Both are resolved — symlinks
included — *before* the checks, so neither ``../x`` nor a symlink pointing outside (to a file or
to a folder) lets a tool read or write beyond the folder the user chose. Baton's config and data
folders (:func:`core.config.paths.protected_dirs`) are refused even inside the working folder (a run
started with ``--cwd $HOME``): a forged run file or a rewritten ``config.yaml`` would change the
audit trail or the policy. The refusal is a :class:`ToolError` the model reads and can act on.

These checks read the path by name, so they only give the model a clear message: the open
itself happens beneath a descriptor held for the working folder (:mod:`core.tools.beneath`),
which is what keeps a symlink swapped in after the check from sending a tool elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.config.paths import protected_dirs
from core.tools.base import ToolError


def working_root(cwd: Path) -> Path:
    """The working folder with symlinks resolved: what containment is checked against."""
    return Path(cwd).resolve()


def resolve_in_cwd(path: str, cwd: Path) -> Path:
    """Resolve ``path`` (relative to ``cwd``, or absolute) to a real path inside ``cwd``.

    The result has every symlink resolved, so callers can open it without another check. A
    path that does not exist yet is fine (``write`` creates files); its existing ancestors are
    still resolved, so a new file under a symlinked folder pointing outside is refused too.
    """
    root = working_root(cwd)
    text = path.strip()
    if not text:
        raise ToolError("The path is empty; give a file or folder inside the working folder.")
    check_representable(text)
    candidate = Path(text).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loops, unreadable components
        raise ToolError(f"The path {text} cannot be resolved: {exc}.") from exc
    if not resolved.is_relative_to(root):
        raise ToolError(f"The path {text} is outside the working folder {root}.")
    if is_protected(resolved):
        raise ToolError(PROTECTED.format(path=text))
    return resolved


NAME_MAX = 255
PATH_MAX = 4095
"""Linux's limits in bytes (one name; a whole path): past them no call can use the path."""


def check_representable(text: str) -> None:
    """Refuse, as a :class:`ToolError` the model reads, a path no file can have: a NUL byte,
    characters the file system encoding cannot carry (a lone surrogate from JSON), or a name
    or path too long. Left to the operating system these end the step with an internal error."""
    if "\x00" in text:
        raise ToolError(f"The path {text!r} contains a NUL character, which no file name can.")
    try:
        encoded = os.fsencode(text)
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"The path {text!r} contains {exc.object[exc.start : exc.end]!r}, which cannot be "
            "part of a file name here."
        ) from None
    if len(encoded) > PATH_MAX:
        raise ToolError(f"The path is {len(encoded)} bytes long; the limit is {PATH_MAX}.")
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if longest > NAME_MAX:
        raise ToolError(
            f"A name in the path {text[:80]!r}… is {longest} bytes long; the limit is {NAME_MAX}."
        )


PROTECTED = "The path {path} is in Baton's own settings or data folder, which agents cannot use."


def is_protected(path: Path, folders: tuple[Path, ...] | None = None) -> bool:
    """Whether the resolved ``path`` is one of Baton's private folders or inside one.

    ``folders`` is :func:`~core.config.paths.protected_dirs`, passed in by callers checking many
    paths.
    """
    return any(path.is_relative_to(folder) for folder in folders or protected_dirs())


def display_path(path: Path, cwd: Path) -> str:
    """``path`` as the model should see it: relative to the working folder (``.`` for itself)."""
    root = working_root(cwd)
    try:
        relative = path.relative_to(root)
    except ValueError:
        return str(path)
    text = relative.as_posix()
    return text if text else "."
