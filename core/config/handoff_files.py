"""Where hand-off copies live: ``<data>/handoff/<run-id>/step-<N>.md``.

The full text of a capped ``{previous}`` is kept in Baton's data folder (see
:mod:`core.run.handoff`), and Baton's ``read`` tool may open exactly these files of its own run
(:mod:`core.tools.read`). Both, and the run index that deletes them with their run, need to
know the place, so it is named here, below all three.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from core.config.paths import data_dir

HANDOFF_NAME = re.compile(r"step-[1-9][0-9]{0,5}\.md")
"""The only names a hand-off folder holds (what the ``read`` allowance accepts)."""
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def handoff_dir(run_id: str) -> Path:
    """The folder holding run ``run_id``'s hand-off copies (not created here)."""
    if not _RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise ValueError(f"not a run id: {run_id!r}")
    return data_dir() / "handoff" / run_id


def readable_handoff_dir(run_id: str) -> Path | None:
    """:func:`handoff_dir` for the ``read`` allowance of a step of ``run_id``, resolved (the
    open goes to the real folder, not through a link on the way); None for an id that names
    no hand-off folder."""
    try:
        return handoff_dir(run_id).resolve()
    except (ValueError, OSError, RuntimeError):
        return None


def handoff_path(run_id: str, step_number: int) -> Path:
    """Where the full text of step ``step_number`` (1-based) is kept for the next step."""
    return handoff_dir(run_id) / f"step-{step_number}.md"


def remove_handoff(run_id: str) -> None:
    """Delete the run's hand-off copies (with the run: they are only there for its steps)."""
    try:
        folder = handoff_dir(run_id)
    except ValueError:
        return
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)
