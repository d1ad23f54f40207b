"""How changes read in one line: per file and per step."""

from __future__ import annotations

from core.model.events import FileChange, StepChanges


def file_label(path: str, added: int | None, removed: int | None) -> str:
    """``src/app.py  +12 −3`` (``binary`` when git counted no lines)."""
    if added is None or removed is None:
        return f"{path}  binary"
    return f"{path}  +{added} −{removed}"


def change_label(change: FileChange) -> str:
    """``docs/new.md  +1 −0  new``: the file line of the Changes section and view."""
    mark = {"added": "  new", "deleted": "  deleted"}.get(change.status, "")
    return file_label(change.path, change.added, change.removed) + mark


def totals_text(changes: StepChanges) -> str:
    """``3 files  +12 −4``."""
    added = sum(c.added or 0 for c in changes.files)
    removed = sum(c.removed or 0 for c in changes.files)
    count = len(changes.files)
    return f"{count} file{'s' if count != 1 else ''}  +{added} −{removed}"
