"""``write``: create or replace a whole file, folders included.

The content is written exactly as given (no newline translation), atomically: a crash leaves
the old file or the new one. Missing parent folders are created — they are inside the working
folder: they are made, and the file renamed into place, through descriptors held beneath it
(:func:`core.tools.files.write_regular`), so a folder swapped for a symlink meanwhile cannot
send the write elsewhere.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from core.tools.base import Tool, ToolContext
from core.tools.files import off_loop, utf8, write_regular
from core.tools.paths import display_path, resolve_in_cwd, working_root


class WriteParams(BaseModel):
    path: str = Field(description="File to write, relative to the working folder or absolute.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(Tool):
    name = "write"
    description = (
        "Write a file: creates it (and missing parent folders) or replaces its whole content. "
        "For changing part of an existing file, prefer edit; read an existing file before "
        "overwriting it."
    )
    Params = WriteParams

    async def run(self, params: WriteParams, ctx: ToolContext) -> str:
        path = resolve_in_cwd(params.path, ctx.cwd)
        shown = display_path(path, ctx.cwd)
        root = working_root(ctx.cwd)
        return await off_loop(_write_file, path, shown, root, params.content)


def _write_file(path: Path, shown: str, root: Path, content: str) -> str:
    data = utf8(content, shown)
    existed = write_regular(path, shown, root, data)
    size = len(data)
    verb = "Overwrote" if existed else "Created"
    return f"{verb} {shown} ({size} bytes)."
