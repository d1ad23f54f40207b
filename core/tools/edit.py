"""``edit``: replace an exact piece of a file, refusing anything ambiguous.

The model quotes the text it wants changed; the quote must occur exactly once (or
``replace_all`` says every occurrence is meant). Guessing between several matches, or matching
"nearly", would silently change the wrong place, so both are errors the model can fix by
quoting more context. The file is read and written as bytes decoded without newline
translation: a CRLF file stays CRLF, and a model quoting it with plain ``\\n`` still matches.

:func:`apply_edit` is the whole decision; :mod:`core.tools.diffs` uses it to preview a call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from core.tools.base import Tool, ToolContext, ToolError
from core.tools.files import off_loop, open_regular, utf8, write_regular
from core.tools.paths import display_path, resolve_in_cwd, working_root


class EditParams(BaseModel):
    path: str = Field(description="File to edit, relative to the working folder or absolute.")
    old_string: str = Field(
        description="The exact text to replace, including whitespace and indentation, copied "
        "from the file (without read's line-number prefixes). It must occur exactly once "
        "unless replace_all is true: include surrounding lines to make it unique."
    )
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string, not just one."
    )


@dataclass(frozen=True)
class EditOutcome:
    old_text: str
    new_text: str
    lines: list[int]
    """1-based line numbers (in the old text) where replacements start."""


class EditTool(Tool):
    name = "edit"
    description = (
        "Edit a file by exact string replacement: old_string is replaced by new_string. "
        "old_string must match the file exactly (whitespace and indentation too) and be unique "
        "in it, unless replace_all is set. Read the file first. To create a file or rewrite "
        "it entirely, use write."
    )
    Params = EditParams

    async def run(self, params: EditParams, ctx: ToolContext) -> str:
        path = resolve_in_cwd(params.path, ctx.cwd)
        shown = display_path(path, ctx.cwd)
        return await off_loop(_edit_file, path, shown, working_root(ctx.cwd), params)


def _edit_file(path: Path, shown: str, root: Path, params: EditParams) -> str:
    outcome = apply_edit(read_text_exact(path, shown, root), params, shown)
    write_regular(path, shown, root, utf8(outcome.new_text, shown))
    count = len(outcome.lines)
    if count == 1:
        return f"Edited {shown}: replaced 1 occurrence at line {outcome.lines[0]}."
    where = ", ".join(str(line) for line in outcome.lines)
    return f"Edited {shown}: replaced {count} occurrences (lines {where})."


def read_text_exact(path: Path, shown: str, root: Path) -> str:
    """The file as UTF-8 text with its newlines untouched (``read_text`` would translate)."""
    if not path.exists():
        raise ToolError(f"File not found: {shown}. Use write to create a new file.")
    if path.is_dir():
        raise ToolError(f"{shown} is a folder, not a file.")
    try:
        with open_regular(path, shown, root) as handle:
            data = handle.read()
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}.") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"{shown} is not UTF-8 text; edit only changes text files.") from exc


def apply_edit(text: str, params: EditParams, shown: str) -> EditOutcome:
    """The text after the edit, or a :class:`ToolError` saying why it cannot be made."""
    old, new = params.old_string, params.new_string
    if not old:
        raise ToolError("old_string is empty; to create or overwrite a file use write.")
    if old == new:
        raise ToolError("old_string and new_string are identical; there is nothing to change.")
    count = text.count(old)
    # A CRLF file quoted with plain newlines (models write \n): match and write in its style.
    all_crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if count == 0 and "\n" in old and "\r" not in old and "\r\n" in text:
        old, new = _crlf(old), _crlf(new)
        count = text.count(old)
    elif all_crlf and "\r" not in new:
        new = _crlf(new)
    if count == 0:
        raise ToolError(
            f"old_string was not found in {shown}. It must match the file exactly, including "
            "whitespace, indentation and line breaks; read the file and copy the text again."
        )
    if count > 1 and not params.replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {shown}. Include more surrounding lines to "
            "make it unique, or set replace_all to change every occurrence."
        )
    lines: list[int] = []
    start = text.find(old)
    while start != -1:
        lines.append(text.count("\n", 0, start) + 1)
        start = text.find(old, start + len(old))
    return EditOutcome(text, text.replace(old, new), lines)


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")
