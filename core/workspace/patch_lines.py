"""A git patch read into typed lines, for viewers: per file, each line with its kind and its
numbers on the old and the new side; and the same lines paired up for a side-by-side view.

The viewer never parses git's output itself (the GUI consumes typed data); this module does,
once, for the unified and the side-by-side view alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

LineKind = Literal["hunk", "context", "added", "removed", "note"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class PatchLine:
    kind: LineKind
    text: str
    """The line without its ``+``/``-``/space marker (a hunk header as it is)."""
    old: int | None = None
    new: int | None = None


@dataclass
class FilePatch:
    path: str
    lines: list[PatchLine] = field(default_factory=list)
    binary: bool = False

    @property
    def added(self) -> int:
        return sum(line.kind == "added" for line in self.lines)

    @property
    def removed(self) -> int:
        return sum(line.kind == "removed" for line in self.lines)


def parse_patch(text: str) -> list[FilePatch]:
    """Files of a ``git diff``/``diff-tree -p`` patch in order. Header lines (``index``,
    ``---``/``+++``, modes) are dropped; a binary file is marked, with no lines."""
    files: list[FilePatch] = []
    current: FilePatch | None = None
    old = new = 0
    in_hunk = False
    for raw in text.split("\n"):
        if raw.startswith("diff --git "):
            current = FilePatch(_path_of(raw))
            files.append(current)
            in_hunk = False
            continue
        if current is None:
            continue
        match = _HUNK.match(raw)
        if match:
            old, new = int(match.group(1)), int(match.group(2))
            current.lines.append(PatchLine("hunk", raw))
            in_hunk = True
        elif not in_hunk:
            if raw.startswith("Binary files "):
                current.binary = True
        elif raw.startswith("+"):
            current.lines.append(PatchLine("added", raw[1:], new=new))
            new += 1
        elif raw.startswith("-"):
            current.lines.append(PatchLine("removed", raw[1:], old=old))
            old += 1
        elif raw.startswith(" "):
            current.lines.append(PatchLine("context", raw[1:], old=old, new=new))
            old += 1
            new += 1
        elif raw.startswith("\\"):
            current.lines.append(PatchLine("note", raw))
    return files


def _path_of(header: str) -> str:
    """``diff --git a/x b/x`` → ``x`` (no renames are asked for, so both sides agree)."""
    rest = header.removeprefix("diff --git ")
    half = len(rest) // 2
    if rest[half : half + 3] == " b/" and rest.startswith("a/"):
        return rest[2:half]
    return rest.rsplit(" b/", 1)[-1].strip('"')


Row = tuple[PatchLine | None, PatchLine | None]


def side_by_side(lines: list[PatchLine]) -> list[Row]:
    """Rows of (old side, new side): context on both, a run of removed lines beside the run
    of added lines that follows it, hunk headers and notes across both."""
    rows: list[Row] = []
    removed: list[PatchLine] = []
    added: list[PatchLine] = []

    def flush() -> None:
        for index in range(max(len(removed), len(added))):
            rows.append(
                (
                    removed[index] if index < len(removed) else None,
                    added[index] if index < len(added) else None,
                )
            )
        removed.clear()
        added.clear()

    for line in lines:
        if line.kind == "removed":
            if added:
                flush()
            removed.append(line)
        elif line.kind == "added":
            added.append(line)
        else:
            flush()
            rows.append((line, line))
    flush()
    return rows
