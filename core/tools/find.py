"""``find``: which files match a glob, in path order, ``.gitignore`` honoured.

Always the Python walker (:mod:`core.tools.walk`), so the answer does not depend on which
programs the machine has; the walk is lazy and stops once the cap is passed, and because it
visits each folder in name order the first ``limit`` files found are the first in sorted order.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from core.tools.base import Tool, ToolContext, ToolError, lines_within
from core.tools.files import off_loop
from core.tools.paths import display_path, resolve_in_cwd, working_root
from core.tools.walk import compile_glob, iter_files


class FindParams(BaseModel):
    pattern: str = Field(
        description="Glob to match, e.g. `**/*.py`, `src/**/test_*.ts`, `*.{md,txt}`. A glob "
        "without `/` matches file names at any depth; one with `/` matches the path relative "
        "to the searched folder (`**` spans folders, `*` stays within one)."
    )
    path: str | None = Field(
        default=None,
        description="Folder to search in, relative to the working folder. Default: the "
        "working folder.",
    )
    limit: int = Field(default=1000, ge=1, le=5000, description="Maximum number of files.")


class FindTool(Tool):
    name = "find"
    description = (
        "Find files by glob pattern. Returns matching file paths relative to the working "
        "folder, sorted. Files ignored by .gitignore and the .git folder are skipped. Use grep "
        "to search inside files."
    )
    Params = FindParams

    async def run(self, params: FindParams, ctx: ToolContext) -> str:
        target = resolve_in_cwd(params.path or ".", ctx.cwd)
        shown = display_path(target, ctx.cwd)
        if not target.is_dir():
            what = "a file" if target.exists() else "not found"
            raise ToolError(f"{shown} is {what}; find needs a folder to search in.")
        paths, more = await off_loop(
            _find, working_root(ctx.cwd), target, params.pattern, params.limit
        )
        if not paths:
            return f"No files match {params.pattern!r} in {shown}."
        kept = lines_within(paths, ctx.limits.tool_output_chars)
        more = more or len(kept) < len(paths)
        body = "\n".join(kept)
        if more:
            body += (
                f"\n[Only the first {len(kept)} files are shown. Use a narrower pattern or "
                "path to see the rest.]"
            )
        return body


def _find(root: Path, target: Path, pattern: str, limit: int) -> tuple[list[str], bool]:
    matches = compile_glob(pattern)
    found: list[str] = []
    for file in iter_files(target, root):
        if matches(file.relative_to(target).as_posix()):
            if len(found) == limit:
                return found, True
            found.append(display_path(file, root))
    return found, False
