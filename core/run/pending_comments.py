"""Review comments written from a terminal, kept until they are sent.

The window collects a step's comments in memory and sends them with one button; a terminal
adds them one command at a time (``baton runs comment``), so they wait in
``<data>/comments/<run-id>.json`` (written atomically, 0600: they may quote private code)
until ``--send`` turns them into a follow-up run (:mod:`core.run.review_comments`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from core.config import paths
from core.config.atomic import atomic_write_text
from core.run.review_comments import ReviewComment

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class PendingComment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    step: int = Field(ge=0)
    """0-based: the step reviewed."""
    path: str
    line: int = Field(ge=1)
    end_line: int | None = None
    code: str
    text: str = Field(min_length=1)

    def review_comment(self) -> ReviewComment:
        return ReviewComment(self.path, self.line, self.code, self.text, self.end_line)


_LIST = TypeAdapter(list[PendingComment])


def comments_file(run_id: str) -> Path:
    """Raises ValueError for an id that is not a plain name (no ``../``)."""
    if not _RUN_ID.fullmatch(run_id):
        raise ValueError(f"not a run id: {run_id!r}")
    return paths.data_dir() / "comments" / f"{run_id}.json"


def pending(run_id: str) -> list[PendingComment]:
    """The comments waiting for ``run_id``, oldest first (none when the file is unreadable:
    a damaged list is not worth failing a command over)."""
    try:
        return _LIST.validate_json(comments_file(run_id).read_bytes())
    except (OSError, ValidationError):
        return []


def add(run_id: str, comment: PendingComment) -> list[PendingComment]:
    comments = [*pending(run_id), comment]
    _save(run_id, comments)
    return comments


def clear(run_id: str) -> None:
    comments_file(run_id).unlink(missing_ok=True)


def _save(run_id: str, comments: list[PendingComment]) -> None:
    path = comments_file(run_id)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    text = json.dumps([c.model_dump() for c in comments], ensure_ascii=False, indent=1)
    atomic_write_text(path, text + "\n", mode=0o600)
