"""``ls``: one folder's entries, so the model can orient itself before reading.

Unlike ``find`` it shows everything, dotfiles and ignored files included: listing a folder is
asking what is there. Folders end in ``/``; symlinks show their target.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from core.tools.base import Tool, ToolContext, ToolError, lines_within
from core.tools.beneath import folder_beneath, identity, protected_identities
from core.tools.files import off_loop
from core.tools.paths import display_path, resolve_in_cwd, working_root


class LsParams(BaseModel):
    path: str = Field(
        default=".",
        description="Folder to list, relative to the working folder. Default: the working "
        "folder itself.",
    )
    limit: int = Field(default=500, ge=1, le=5000, description="Maximum number of entries.")


class LsTool(Tool):
    name = "ls"
    description = (
        "List a folder's entries, sorted by name, dotfiles included. Folders end with `/`, "
        "symlinks show `-> target`. Use find to search for files by pattern."
    )
    Params = LsParams

    async def run(self, params: LsParams, ctx: ToolContext) -> str:
        folder = resolve_in_cwd(params.path, ctx.cwd)
        shown = display_path(folder, ctx.cwd)
        if not folder.exists():
            raise ToolError(f"Folder not found: {shown}.")
        if not folder.is_dir():
            raise ToolError(f"{shown} is a file, not a folder; use read to see its contents.")
        root = working_root(ctx.cwd)
        entries = await off_loop(_list, root, folder, shown)
        if not entries:
            return f"({shown} is empty.)"
        kept = lines_within(entries[: params.limit], ctx.limits.tool_output_chars)
        body = "\n".join(kept)
        if len(kept) < len(entries):
            body += f"\n[{len(entries) - len(kept)} more entries not shown; {len(entries)} total.]"
        return body


def _list(root: Path, folder: Path, shown: str) -> list[str]:
    """The entries of ``folder``, listed through a descriptor opened beneath ``root`` (a folder
    swapped for a symlink after the path check cannot show what lies outside)."""
    relative = PurePosixPath(folder.relative_to(root).as_posix())
    with folder_beneath(root, relative, shown) as dir_fd:
        return _entries(dir_fd, shown)


def _entries(dir_fd: int, shown: str) -> list[str]:
    try:
        with os.scandir(dir_fd) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as exc:
        raise ToolError(f"Cannot list {shown}: {exc.strerror or exc}.") from exc
    lines: list[str] = []
    protected = protected_identities()
    for entry in entries:
        try:
            here = identity(entry.stat(follow_symlinks=False))
        except OSError:
            continue  # gone since the listing
        if here in protected:
            continue  # Baton's own folders are not the agent's business
        if entry.is_symlink():
            try:
                target = os.readlink(entry.name, dir_fd=dir_fd)
            except OSError:
                target = "?"
            lines.append(f"{entry.name} -> {target}")
        elif entry.is_dir(follow_symlinks=False):
            lines.append(entry.name + "/")
        else:
            lines.append(entry.name)
    return lines
