"""Walking a folder the way a developer expects: ``.gitignore`` honoured, ``.git`` skipped.

``find`` always walks here and ``grep`` does when ripgrep is not installed, so both see the
same files ripgrep would: build output, virtualenvs and ``node_modules`` listed in a
``.gitignore`` stay out of the model's context. Symlinks are never followed — one pointing
outside the working folder must not leak files the path check would refuse — and Baton's own
folders (:func:`core.config.paths.protected_dirs`) are never entered.

The ``.gitignore`` dialect covered: comments, ``!`` negation, trailing ``/`` (folders only),
leading or inner ``/`` (anchored to the file's folder), ``*``, ``?``, ``[...]`` and ``**``;
nested ``.gitignore`` files apply below their folder, a later match wins, and the files of
the enclosing Git checkout above the working folder apply too (as they do for ripgrep).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from core.tools.beneath import (
    DIR_FLAGS,
    NOFOLLOW,
    folder_beneath,
    identity,
    lstat_at,
    protected_identities,
    split,
)
from core.tools.paths import display_path


@dataclass(frozen=True)
class _Rule:
    base: str
    """The folder of the ``.gitignore``, relative to the walk's top (``""`` for the top)."""
    regex: re.Pattern[str]
    negate: bool
    folders_only: bool


Rules = tuple[_Rule, ...]


def glob_regex(pattern: str, *, braces: bool) -> str:
    """Translate a glob into a regex for a ``/``-separated relative path (full match).

    ``*`` and ``?`` stay inside one path segment, ``**`` spans segments, ``{a,b}`` (when
    ``braces``) chooses between alternatives, ``\\x`` is a literal ``x``.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*" and pattern.startswith("**", i):
            whole_segment = (i == 0 or pattern[i - 1] == "/") and (
                i + 2 == n or pattern[i + 2] == "/"
            )
            if whole_segment and i + 2 == n:
                out.append(".*")
                i += 2
            elif whole_segment:
                out.append("(?:.*/)?")
                i += 3
            else:
                out.append("[^/]*")
                i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 1
        elif char == "[" and (end := _class_end(pattern, i)) > 0:
            body = pattern[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        elif char == "{" and braces and (end := _brace_end(pattern, i)) > 0:
            choices = _split_top_level(pattern[i + 1 : end])
            out.append("(?:" + "|".join(glob_regex(c, braces=True) for c in choices) + ")")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    j = start + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    return end


def _brace_end(pattern: str, start: int) -> int:
    depth = 0
    for j in range(start, len(pattern)):
        if pattern[j] == "{":
            depth += 1
        elif pattern[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        current += char
    return [*parts, current]


def compile_glob(pattern: str) -> Callable[[str], bool]:
    """A matcher for a search glob, given paths relative to the searched folder.

    Like ripgrep's ``--glob`` and ``.gitignore``: a pattern without ``/`` matches the file's
    name at any depth (``*.py``); one with ``/`` matches the whole relative path
    (``src/**/*.ts``); a leading ``!`` inverts the match (``!*.min.js``).
    """
    text = pattern.strip()
    negate = text.startswith("!")
    text = text.removeprefix("!").removeprefix("./")
    anchored = "/" in text.rstrip("/")
    regex = re.compile(glob_regex(text.lstrip("/"), braces=True), re.DOTALL)

    def matches(relative: str) -> bool:
        subject = relative if anchored else relative.rsplit("/", 1)[-1]
        return (regex.fullmatch(subject) is not None) is not negate

    return matches


def parse_gitignore(text: str, base: str) -> Rules:
    """The rules of one ``.gitignore`` whose folder is ``base`` (relative, ``""`` for top)."""
    rules: list[_Rule] = []
    for raw in text.splitlines():
        line = raw
        while line.endswith(" ") and not line.endswith("\\ "):
            line = line[:-1]
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate or line.startswith(("\\!", "\\#")):  # `\!`, `\#`: literal ! and #
            line = line[1:]
        folders_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        regex = glob_regex(line.lstrip("/"), braces=False)
        if "/" not in line:
            regex = "(?:.*/)?" + regex
        rules.append(_Rule(base, re.compile(regex, re.DOTALL), negate, folders_only))
    return tuple(rules)


def is_ignored(rules: Rules, relative: str, is_dir: bool) -> bool:
    """Whether ``relative`` (to the walk's top) is ignored: the last matching rule decides."""
    for rule in reversed(rules):
        if rule.folders_only and not is_dir:
            continue
        if rule.base:
            if not relative.startswith(rule.base + "/"):
                continue
            inner = relative[len(rule.base) + 1 :]
        else:
            inner = relative
        if rule.regex.fullmatch(inner):
            return not rule.negate
    return False


@dataclass(frozen=True)
class Found:
    """A file the walk found: its resolved path, and its folder's open descriptor with the name
    in it (valid until the walk moves on) so a reader opens it without going through a path."""

    path: Path
    dir_fd: int
    name: str


def iter_files(start: Path, root: Path) -> Iterator[Path]:
    """Files under ``start`` (itself if it is a file), in path order, minus ignored ones.

    ``root`` is the working folder (resolved); ``start`` a resolved path inside it. Stop
    iterating whenever enough was found: the walk is lazy.
    """
    for found in iter_found(start, root):
        yield found.path


def iter_found(start: Path, root: Path) -> Iterator[Found]:
    """:func:`iter_files` with each file's folder descriptor (:class:`Found`).

    The walk holds a descriptor per folder and opens each subfolder by name inside its parent
    with ``O_NOFOLLOW``, starting from a folder opened beneath the working folder
    (:mod:`core.tools.beneath`): a folder swapped for a symlink mid-walk is skipped, never
    entered, and Baton's folders are recognised by identity, not by name.
    """
    shown = display_path(start, root)
    if start != root and not start.is_dir():
        if not start.is_file():
            return
        parent, name = split(root, start)
        with folder_beneath(root, parent, shown) as dir_fd:
            entry = lstat_at(dir_fd, name)
            if entry is not None and stat.S_ISREG(entry.st_mode):
                yield Found(start, dir_fd, name)
        return
    top = ignore_top(root)
    rules: Rules = ()
    folder = top
    rules += _load_rules(folder, "")
    for part in start.relative_to(top).parts:
        folder = folder / part
        rules += _load_rules(folder, folder.relative_to(top).as_posix())
    prefix = start.relative_to(top).as_posix()
    relative = PurePosixPath(start.relative_to(root).as_posix())
    with folder_beneath(root, relative, shown) as dir_fd:
        yield from _walk(
            dir_fd, start, "" if prefix == "." else prefix + "/", rules, protected_identities()
        )


def _walk(
    dir_fd: int, folder: Path, prefix: str, rules: Rules, protected: set[tuple[int, int]]
) -> Iterator[Found]:
    try:
        with os.scandir(dir_fd) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return  # unreadable folder: skip it, as ripgrep does
    for entry in entries:
        if entry.name == ".git" or entry.is_symlink():
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        relative = prefix + entry.name
        if is_ignored(rules, relative, is_dir):
            continue
        if is_dir:
            try:
                child = os.open(entry.name, DIR_FLAGS | NOFOLLOW, dir_fd=dir_fd)
            except OSError:
                continue  # gone, unreadable, or swapped for a symlink since the listing
            try:
                if identity(os.fstat(child)) in protected:
                    continue
                more_rules = rules + _load_rules_at(child, relative)
                yield from _walk(child, folder / entry.name, relative + "/", more_rules, protected)
            finally:
                os.close(child)
        elif entry.is_file(follow_symlinks=False):
            yield Found(folder / entry.name, dir_fd, entry.name)


def _load_rules(folder: Path, base: str) -> Rules:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    return parse_gitignore(text, base)


def _load_rules_at(dir_fd: int, base: str) -> Rules:
    """The ``.gitignore`` in the open folder ``dir_fd``; a symlink or a FIFO there is no file."""
    flags = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(".gitignore", flags, dir_fd=dir_fd)
    except OSError:
        return ()
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ()
        text = handle.read().decode("utf-8", errors="replace")
    return parse_gitignore(text, base)


def ignore_top(root: Path) -> Path:
    """The enclosing Git checkout's top folder (its ``.gitignore`` applies), else ``root``."""
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder
    return root
