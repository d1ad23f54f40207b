"""``read``: a text file with line numbers, a window at a time.

Line numbers let the model quote exact text for ``edit`` and say where it is; the window
(``offset``/``limit``, capped at 2000 lines and the run's output budget) keeps a large file from
flooding the context, and the result always says how to ask for the next window.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from core.tools.base import Tool, ToolContext, ToolError
from core.tools.files import off_loop, open_regular
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
        path = resolve_in_cwd(params.path, ctx.cwd)
        shown = display_path(path, ctx.cwd)
        return await off_loop(
            read_numbered,
            path,
            shown,
            working_root(ctx.cwd),
            params.offset or 1,
            min(params.limit or MAX_LINES, MAX_LINES),
            ctx.limits.tool_output_chars,
        )


def read_numbered(
    path: Path, shown: str, root: Path, offset: int, limit: int, max_chars: int
) -> str:
    """Lines ``offset..offset+limit-1`` of ``path``, numbered, within ``max_chars``."""
    if not path.exists():
        raise ToolError(f"File not found: {shown}.")
    if path.is_dir():
        raise ToolError(f"{shown} is a folder, not a file; use ls to list it.")
    try:
        with open_regular(path, shown, root) as handle:
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
