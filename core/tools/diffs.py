"""What an ``edit`` or ``write`` call would change, as a unified diff, before it runs.

The approval dialog and the terminal prompt show this so a person approves a change, not a
JSON blob. It goes through the tools' own path resolution and :func:`apply_edit`, so the
preview can never disagree with what the tool then does; a call the tool would refuse yields
a one-line explanation instead of a diff.
"""

from __future__ import annotations

import difflib
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


def preview_diff(tool: str, arguments: dict[str, Any], cwd: Path) -> str | None:
    """The unified diff of an ``edit``/``write`` call; None for other tools.

    Never raises for a bad call: missing files, unmatched ``old_string``, invalid arguments
    and paths outside ``cwd`` come back as a sentence in parentheses.
    """
    if tool not in ("edit", "write"):
        return None
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
