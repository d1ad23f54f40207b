"""What an ``edit`` or ``write`` call would change, as a unified diff, before it runs.

The approval dialog and the terminal prompt show this so a person approves a change, not a
JSON blob. It goes through the tools' own path resolution and :func:`apply_edit`, so the
preview can never disagree with what the tool then does; a call the tool would refuse yields
a one-line explanation instead of a diff.

Claude Code's file tools name their fields differently (``file_path``; ``MultiEdit``'s
``edits``; ``NotebookEdit``'s ``notebook_path``, ``cell_id``, ``new_source``): they are
previewed here too (:func:`claude_file_path`), so approving a Claude step's write is never
approving blind.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.tools.base import ToolError
from core.tools.edit import EditParams, apply_edit, read_text_exact
from core.tools.files import open_regular
from core.tools.paths import display_path, resolve_in_cwd, working_root
from core.tools.write import WriteParams

MAX_PREVIEW_CHARS = 200_000
"""A diff past this is cut: the dialog must stay responsive for a multi-megabyte write."""


FILE_TOOLS = frozenset({"edit", "write", "NotebookEdit"})
"""Tools (as the approval gate names them) whose calls are previewed as a diff."""


def claude_file_path(arguments: dict[str, Any]) -> str:
    """The file a call changes, whichever spelling its tool uses ("" when none)."""
    for key in ("path", "file_path", "notebook_path"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def preview_diff(tool: str, arguments: dict[str, Any], cwd: Path) -> str | None:
    """The unified diff of an ``edit``/``write`` call (Baton's or Claude Code's, including
    ``MultiEdit`` and ``NotebookEdit``); None for other tools.

    Never raises for a bad call: missing files, unmatched ``old_string``, invalid arguments
    and paths outside ``cwd`` come back as a sentence in parentheses.
    """
    if tool not in FILE_TOOLS:
        return None
    if "path" not in arguments and claude_file_path(arguments):
        return _claude_preview(tool, arguments, cwd)
    if tool == "NotebookEdit":
        return f"(no preview: the {tool} arguments are incomplete or invalid)"
    try:
        if tool == "edit":
            edit = EditParams.model_validate(arguments)
            path = resolve_in_cwd(edit.path, cwd)
            shown = display_path(path, cwd)
            outcome = apply_edit(read_text_exact(path, shown, working_root(cwd)), edit, shown)
            return _unified(outcome.old_text, outcome.new_text, f"a/{shown}", f"b/{shown}")
        write = WriteParams.model_validate(arguments)
        path = resolve_in_cwd(write.path, cwd)
        shown = display_path(path, cwd)
        if path.is_dir():
            raise ToolError(f"{shown} is a folder; give a file path.")
        if not path.exists():
            return _unified("", write.content, "/dev/null", f"b/{shown}")
        try:
            # open_regular refuses a FIFO, which would hang the dialog
            with open_regular(path, shown, working_root(cwd)) as handle:
                old = handle.read().decode("utf-8")
        except UnicodeDecodeError:
            return f"(would overwrite the binary file {shown} with {len(write.content)} chars)"
        return _unified(old, write.content, f"a/{shown}", f"b/{shown}")
    except ValidationError:
        return f"(no preview: the {tool} arguments are incomplete or invalid)"
    except ToolError as exc:
        return f"(no preview: {exc})"
    except OSError as exc:
        return f"(no preview: {exc.strerror or exc})"


def _claude_preview(tool: str, arguments: dict[str, Any], cwd: Path) -> str:
    """Claude Code's ``Write``/``Edit``/``MultiEdit``/``NotebookEdit``, through the same path
    resolution and :func:`apply_edit` as Baton's own tools."""
    path_text = claude_file_path(arguments)
    try:
        if tool == "write":
            content = arguments.get("content")
            if not isinstance(content, str):
                return f"(no preview: the {tool} arguments are incomplete or invalid)"
            return preview_diff("write", {"path": path_text, "content": content}, cwd) or ""
        path = resolve_in_cwd(path_text, cwd)
        shown = display_path(path, cwd)
        root = working_root(cwd)
        if tool == "NotebookEdit":
            return _notebook_preview(path, shown, arguments, root)
        edits = arguments.get("edits")
        if not isinstance(edits, list):
            edits = [arguments]
        old = text = read_text_exact(path, shown, root)
        for edit in edits:
            fields = edit if isinstance(edit, dict) else {}
            params = EditParams.model_validate({**fields, "path": path_text})
            text = apply_edit(text, params, shown).new_text
        return _unified(old, text, f"a/{shown}", f"b/{shown}")
    except ValidationError:
        return f"(no preview: the {tool} arguments are incomplete or invalid)"
    except ToolError as exc:
        return f"(no preview: {exc})"
    except OSError as exc:
        return f"(no preview: {exc.strerror or exc})"


def _notebook_preview(path: Path, shown: str, arguments: dict[str, Any], root: Path) -> str:
    """The cell's source before and after (``edit_mode`` replace, insert or delete)."""
    try:
        notebook = json.loads(read_text_exact(path, shown, root))
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
    except ValueError as exc:
        raise ToolError(f"{shown} is not a notebook: {exc}") from exc
    if not isinstance(cells, list):
        raise ToolError(f"{shown} is not a notebook: it has no cells")
    mode = str(arguments.get("edit_mode") or "replace")
    cell_id = arguments.get("cell_id")
    new = arguments.get("new_source")
    new_text = new if isinstance(new, str) else ""
    index = _cell_index(cells, cell_id)
    old_text = ""
    if mode != "insert":
        if index is None:
            raise ToolError(f"{shown} has no cell {cell_id!r}")
        source = cells[index].get("source", "") if isinstance(cells[index], dict) else ""
        old_text = "".join(source) if isinstance(source, list) else str(source)
    if mode == "delete":
        new_text = ""
    where = f"cell {cell_id}" if cell_id else "new first cell"
    label = f"{shown} ({'new cell after ' if mode == 'insert' and cell_id else ''}{where})"
    return _unified(old_text, new_text, f"a/{label}", f"b/{label}")


def _cell_index(cells: list[Any], cell_id: Any) -> int | None:
    """The cell Claude Code means: by its ``id``, else ``cell-N`` / ``N`` as a position."""
    if cell_id is None:
        return None
    for index, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("id") == cell_id:
            return index
    text = str(cell_id).removeprefix("cell-")
    if text.isdigit() and int(text) < len(cells):
        return int(text)
    return None


def _unified(old: str, new: str, old_name: str, new_name: str) -> str:
    if old == new:
        return "(no change: the new content is identical to the file)"
    out: list[str] = []
    size = 0
    for line in difflib.unified_diff(_lines(old), _lines(new), old_name, new_name):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
        size += len(line)
        if size > MAX_PREVIEW_CHARS:
            out.append(f"[diff cut at {MAX_PREVIEW_CHARS} characters]\n")
            break
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Split after each ``\\n`` only (``splitlines`` would also split on ``\\r``, form feed…)."""
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result
