"""``write``: create or replace a whole file, folders included.

The content is written exactly as given (no newline translation), atomically: a crash leaves
the old file or the new one. Missing parent folders are created — they are inside the working
folder, because the path was resolved there first.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from core.atomic import atomic_write_text
from core.tools.base import Tool, ToolContext, ToolError
from core.tools.files import off_loop, refuse_special
from core.tools.paths import display_path, resolve_in_cwd


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
        return await off_loop(_write_file, path, shown, params.content)


def _write_file(path: Path, shown: str, content: str) -> str:
    if path.is_dir():
        raise ToolError(f"{shown} is a folder; give a file path.")
    refuse_special(path, shown)
    existed = path.exists()
    try:
        atomic_write_text(path, content)
    except OSError as exc:
        raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}.") from exc
    size = len(content.encode("utf-8"))
    verb = "Overwrote" if existed else "Created"
    return f"{verb} {shown} ({size} bytes)."
