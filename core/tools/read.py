"""``read``: a text file with line numbers, a window at a time.

Line numbers let the model quote exact text for ``edit`` and say where it is; the window
(``offset``/``limit``, capped at 2000 lines and the run's output budget) keeps a large file from
flooding the context, and the result always says how to ask for the next window.

One path outside the working folder is readable: the current run's hand-off copies
(:mod:`core.run.handoff`), which the marker in a capped ``{previous}`` points the model at. The
allowance is exact: an absolute path whose folder is that run's hand-off folder and whose name
is ``step-N.md``, opened inside a descriptor held for that folder without following a symlink.
Every other path in Baton's data folder is refused as before.

The folders of the skills offered to the step (:mod:`core.definitions.skills`) are readable
too, wherever they are (``~/.claude/skills/pdf/SKILL.md``): an absolute path inside one of them
is opened beneath a descriptor held for that skill's folder, so neither ``..`` nor a symlink
leads out of it. Only ``read`` has this allowance; no other tool is widened.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, Field

from core.config.handoff_files import HANDOFF_NAME
from core.tools.base import Tool, ToolContext, ToolError
from core.tools.beneath import DIR_FLAGS, open_beneath
from core.tools.files import off_loop, open_regular, open_regular_at
from core.tools.paths import display_path, resolve_in_cwd, working_root

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
"""Longer lines (minified files, data) are cut: one of them alone could fill the budget."""
BINARY_SNIFF_BYTES = 8192


class ReadParams(BaseModel):
    path: str = Field(description="File to read, relative to the working folder or absolute.")
    offset: int | None = Field(
        default=None,
        ge=1,
        description="Line number to start from (1-based). Omit to start at the first line.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"Maximum number of lines to return (at most {MAX_LINES}).",
    )


class ReadTool(Tool):
    name = "read"
    description = (
        "Read a text file. Lines are returned numbered as `N<TAB>text` (the number is not part "
        f"of the file). At most {MAX_LINES} lines or the output budget are returned per call; "
        "when the output says it was truncated, call again with the offset it gives to "
        "continue. Use offset/limit to read part of a large file. Binary files cannot be read."
    )
    Params = ReadParams

    async def run(self, params: ReadParams, ctx: ToolContext) -> str:
        opener: Callable[[], BinaryIO]
        handoff = handoff_file(params.path, ctx.handoff_dir)
        skill = skill_file(params.path, ctx.skill_folders)
        if skill is not None:
            path = skill[0] / skill[1]
            shown = str(path)
            opener = partial(open_in_skill, skill[0], skill[1], shown)
        elif handoff is not None:
            path = handoff
            shown = str(handoff)
            opener = partial(open_handoff, handoff, shown)
        else:
            path = resolve_in_cwd(params.path, ctx.cwd)
            shown = display_path(path, ctx.cwd)
            opener = partial(open_regular, path, shown, working_root(ctx.cwd))
        return await off_loop(
            read_numbered,
            path,
            shown,
            opener,
            params.offset or 1,
            min(params.limit or MAX_LINES, MAX_LINES),
            ctx.limits.tool_output_chars,
        )


def handoff_file(text: str, folder: Path | None) -> Path | None:
    """The hand-off copy ``text`` names, when it names one of the current run's (``folder``,
    resolved): an absolute path, ``..`` and links in its folder resolved, whose folder is
    exactly ``folder`` and whose name is a step file. None for any other path."""
    if folder is None:
        return None
    candidate = Path(text.strip()).expanduser()
    if not candidate.is_absolute() or not HANDOFF_NAME.fullmatch(candidate.name):
        return None
    try:
        parent = candidate.parent.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return folder / candidate.name if parent == folder else None


def skill_file(text: str, folders: tuple[Path, ...]) -> tuple[Path, str] | None:
    """``(skill folder, path relative to it)`` when ``text`` is an absolute path inside one
    of the offered skills' ``folders`` (resolved), compared as written (``..`` not allowed);
    None for any other path."""
    if not folders:
        return None
    candidate = Path(text.strip()).expanduser()
    if not candidate.is_absolute() or ".." in candidate.parts:
        return None
    for folder in folders:
        if candidate.is_relative_to(folder) and candidate != folder:
            return folder, candidate.relative_to(folder).as_posix()
    return None


def open_in_skill(folder: Path, relative: str, shown: str) -> BinaryIO:
    """Open ``relative`` beneath the skill's ``folder`` (a symlink out of it is refused by
    the kernel, or by :func:`core.tools.beneath.open_beneath`'s walk), as a regular file."""
    try:
        dir_fd = os.open(folder, DIR_FLAGS)
    except OSError as exc:
        raise ToolError(f"File not found: {shown}.") from exc
    try:
        fd = open_beneath(dir_fd, relative, os.O_RDONLY)
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: it leads out of the skill's folder.") from exc
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolError(f"{shown} is not a regular file.")
    return os.fdopen(fd, "rb")


def open_handoff(path: Path, shown: str) -> BinaryIO:
    """Open a hand-off copy found by :func:`handoff_file`: its folder by descriptor, the file
    inside it as a regular file and never through a symlink."""
    try:
        dir_fd = os.open(path.parent, DIR_FLAGS)
    except OSError as exc:
        raise ToolError(f"File not found: {shown}.") from exc
    try:
        return open_regular_at(dir_fd, path.name, shown)
    finally:
        os.close(dir_fd)


def read_numbered(
    path: Path,
    shown: str,
    opener: Callable[[], BinaryIO],
    offset: int,
    limit: int,
    max_chars: int,
) -> str:
    """Lines ``offset..offset+limit-1`` of ``path`` (opened by ``opener``, which holds the
    containment rules), numbered, within ``max_chars``."""
    if not path.exists():
        raise ToolError(f"File not found: {shown}.")
    if path.is_dir():
        raise ToolError(f"{shown} is a folder, not a file; use ls to list it.")
    try:
        with opener() as handle:
            if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
                raise ToolError(f"{shown} is a binary file; read only works on text files.")
            handle.seek(0)
            out: list[str] = []
            used = 0
            last = offset - 1  # last line number returned
            total = 0
            budget_hit = False
            for total, raw in enumerate(handle, start=1):
                if total < offset or budget_hit or len(out) >= limit:
                    continue
                text = raw.decode("utf-8", errors="replace").rstrip("\n").removesuffix("\r")
                if len(text) > MAX_LINE_CHARS:
                    text = text[:MAX_LINE_CHARS] + f"… [line cut at {MAX_LINE_CHARS} chars]"
                line = f"{total}\t{text}\n"
                if out and used + len(line) > max_chars:
                    budget_hit = True
                    continue
                out.append(line)
                used += len(line)
                last = total
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}.") from exc
    if total == 0:
        return f"({shown} is empty.)"
    if offset > total:
        raise ToolError(f"offset {offset} is past the end of {shown}, which has {total} lines.")
    body = "".join(out)
    if last < total:
        body += (
            f"\n[Showing lines {offset}-{last} of {total}. "
            f"Call read with offset={last + 1} to continue.]"
        )
    return body
