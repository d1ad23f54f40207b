"""``grep``: which lines of which files match a regular expression.

ripgrep is used when it is on ``PATH`` and can be confined to the working folder
(:mod:`core.tools.confined_read`: fast, and ``.gitignore``-aware by itself); otherwise a
pure-Python search over :func:`core.tools.walk.iter_found` gives the same answers on the same
files, so a machine without ripgrep is slower, not different. ripgrep is told to honour
``.gitignore`` outside Git checkouts too and to include dotfiles (minus ``.git``), matching the
walker. Output is ``path:line:text`` with paths relative to the working folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
from pathlib import Path

from pydantic import BaseModel, Field

from core.config.paths import protected_dirs
from core.tools.base import Tool, ToolContext, ToolError, lines_within
from core.tools.confined_read import confined_argv
from core.tools.files import off_loop, open_regular_at, refuse_special
from core.tools.paths import display_path, is_protected, resolve_in_cwd, working_root
from core.tools.walk import compile_glob, ignore_top, iter_found

MAX_LINE_CHARS = 500
BINARY_SNIFF_BYTES = 8192


class GrepParams(BaseModel):
    pattern: str = Field(
        description="Regular expression to search for (ripgrep/Python syntax). Escape regex "
        "characters such as ( ) [ ] . * + ? with a backslash to match them literally."
    )
    path: str | None = Field(
        default=None,
        description="File or folder to search, relative to the working folder. "
        "Default: the whole working folder.",
    )
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. `*.py`, `*.{ts,tsx}` or "
        "`src/**/*.rs`. A glob without `/` matches file names at any depth; a leading `!` "
        "excludes (`!*.min.js`).",
    )
    ignore_case: bool = Field(default=False, description="Match without regard to case.")
    limit: int = Field(default=100, ge=1, le=1000, description="Maximum matching lines.")


class GrepTool(Tool):
    name = "grep"
    description = (
        "Search file contents with a regular expression. Returns matching lines as "
        "`path:line:text`, in path order. Files ignored by .gitignore and the .git folder are "
        "skipped; binary files are skipped. Use glob to restrict the file types and path to "
        "restrict the folder. Prefer this over running grep or rg through bash."
    )
    Params = GrepParams

    def __init__(self, *, use_ripgrep: bool = True) -> None:
        self.use_ripgrep = use_ripgrep

    async def run(self, params: GrepParams, ctx: ToolContext) -> str:
        root = working_root(ctx.cwd)
        target = resolve_in_cwd(params.path or ".", ctx.cwd)
        shown = display_path(target, ctx.cwd)
        if not target.exists():
            raise ToolError(f"Path not found: {shown}.")
        refuse_special(target, shown)  # ripgrep would block on a FIFO named directly
        rg = shutil.which("rg") if self.use_ripgrep else None
        found = await _grep_ripgrep(rg, params, root, target) if rg else None
        if found is not None:
            lines, more = found
        else:
            flags = re.IGNORECASE if params.ignore_case else 0
            try:
                regex = re.compile(params.pattern, flags)
            except re.error as exc:
                raise ToolError(f"Invalid regular expression {params.pattern!r}: {exc}.") from exc
            lines, more = await off_loop(
                _grep_python, root, target, regex, params.glob, params.limit
            )
        return _format(lines, more, params, shown, ctx.limits.tool_output_chars)


def _format(lines: list[str], more: bool, params: GrepParams, shown: str, budget: int) -> str:
    if not lines:
        return f"No matches for {params.pattern!r} in {shown}."
    kept = lines_within(lines, budget)
    more = more or len(kept) < len(lines)
    body = "\n".join(kept)
    if more:
        body += (
            f"\n[Only the first {len(kept)} matching lines are shown. Narrow the pattern, "
            "path or glob to see the rest.]"
        )
    return body


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "… [line cut]"


def _grep_python(
    root: Path, target: Path, regex: re.Pattern[str], glob: str | None, limit: int
) -> tuple[list[str], bool]:
    matches_glob = compile_glob(glob) if glob else None
    lines: list[str] = []
    for found in iter_found(target, root):
        file = found.path
        if matches_glob is not None:
            relative = file.name if file == target else file.relative_to(target).as_posix()
            if not matches_glob(relative):
                continue
        shown = display_path(file, root)
        try:
            with open_regular_at(found.dir_fd, found.name, shown) as handle:
                if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
                    continue
                handle.seek(0)
                for number, raw in enumerate(handle, start=1):
                    text = raw.decode("utf-8", errors="replace").rstrip("\n").removesuffix("\r")
                    if regex.search(text):
                        lines.append(_cut(f"{shown}:{number}:{text}"))
                        if len(lines) > limit:
                            return lines[:limit], True
        except (OSError, ToolError):
            continue  # unreadable file: skipped, as ripgrep does
    return lines, False


async def _grep_ripgrep(
    rg: str, params: GrepParams, root: Path, target: Path
) -> tuple[list[str], bool] | None:
    """ripgrep's matches, filtered by ``glob`` exactly as the Python search filters.

    ripgrep's own ``--glob`` would whitelist files that ``.gitignore`` excludes; a file-type
    filter (``--type-add``) does not, so a name glob becomes one (for speed) and every glob
    is also applied to ripgrep's output (``--null`` separates the path unambiguously).
    ripgrep runs where it sees only the working folder (:mod:`core.tools.confined_read`);
    None when that is not possible here, and the Python search answers instead.
    """
    shown = display_path(target, root)
    args = [
        rg,
        "--line-number",
        "--no-heading",
        "--with-filename",
        "--null",
        "--color=never",
        "--hidden",
        "--no-require-git",
        "--sort=path",
        "--glob=!.git",
        f"--max-columns={MAX_LINE_CHARS}",
        "--max-columns-preview",
    ]
    if params.ignore_case:
        args.append("--ignore-case")
    glob = params.glob
    if glob and not (set(glob) & set("/:!")):
        args += ["--type-add", f"batonglob:{glob}", "--type", "batonglob"]
    args += ["--regexp", params.pattern, "--", shown]
    matches_glob = compile_glob(glob) if glob else None
    protected = protected_dirs()  # ripgrep would search Baton's folders: drop what it finds
    command = confined_argv(args, root=root, ignore_top=ignore_top(root), protected=protected)
    if command is None:
        return None
    proc = await asyncio.create_subprocess_exec(
        *command,
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 20,
    )
    assert proc.stdout is not None and proc.stderr is not None
    errors = asyncio.create_task(proc.stderr.read())
    lines: list[str] = []
    more = complete = False
    try:
        while True:
            try:
                raw = await proc.stdout.readline()
            except ValueError:
                continue  # a line over the stream limit despite --max-columns: skip it
            if not raw:
                complete = True
                break
            text = raw.decode("utf-8", errors="replace").rstrip("\n").removesuffix("\r")
            path, _, rest = text.partition("\0")
            path = path.removeprefix("./")
            if matches_glob is not None and not matches_glob(_relative(path, shown, target)):
                continue
            if is_protected(root / path, protected):
                continue
            if len(lines) == params.limit:
                more = True
                break
            lines.append(_cut(f"{path}:{rest}"))
    finally:
        if not complete and proc.returncode is None:  # enough found, or cancelled
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
        stderr = (await errors).decode("utf-8", errors="replace").strip()
    if proc.returncode == 2 and not lines:
        detail = "\n".join(stderr.splitlines()[-12:])
        raise ToolError(f"grep failed for pattern {params.pattern!r}:\n{detail}")
    return lines, more


def _relative(path: str, shown: str, target: Path) -> str:
    """``path`` (relative to the working folder) relative to the searched ``target``."""
    if target.is_file():
        return target.name
    return path if shown == "." else path.removeprefix(shown + "/")
