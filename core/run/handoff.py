"""The text one step hands to the next (``{previous}``), capped.

A step's answer can be huge (a 212 KB dump of a file); pasted whole into the next request it
fills the model's context and costs a fortune. :func:`hand_off` keeps at most
``limits.handoff_chars`` characters (50,000 by default), cut at a line boundary, and ends the
text with a marker that says how much was left out and where the whole answer is:

* the run file, which always holds the full ``step_finished`` output;
* ``<data>/handoff/<run-id>/step-<N>.md`` (N 1-based, owner-only, written atomically), which
  Baton's ``read`` tool may open for the steps of that run only (:mod:`core.tools.read`).

The copy lives in Baton's data folder, not in the working folder: a file there would show in
``git status`` and in the run's diff as if the step had written it. Agents cannot write in the
data folder, so no earlier step can plant a symlink on the path; it is still refused, as a
second line of defence, and the marker then points at the run file only.
"""

from __future__ import annotations

from pathlib import Path

from core.config.atomic import atomic_write_bytes
from core.config.handoff_files import handoff_path


def cut_at_line(text: str, limit: int) -> str:
    """The longest prefix of ``text`` of at most ``limit`` characters that ends at a line end
    (a single line longer than ``limit`` is cut inside it)."""
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, limit)
    return text[: end + 1] if end > 0 else text[:limit]


def _write_full_text(run_id: str, step_number: int, text: str) -> Path | None:
    try:
        path = handoff_path(run_id, step_number)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.parent.is_symlink() or path.is_symlink():
            return None
        atomic_write_bytes(path, text.encode("utf-8"), mode=0o600)
    except (OSError, ValueError):
        return None
    return path


def hand_off(text: str, *, limit: int, run_id: str, step_number: int, run_file: Path | None) -> str:
    """``text`` as the next step receives it: whole when it fits in ``limit`` characters,
    else cut with a marker (the full text saved as described in the module docstring)."""
    if len(text) <= limit:
        return text
    saved = _write_full_text(run_id, step_number, text)
    where = []
    if saved is not None:
        where.append(f"in {saved} (open it with the read tool)")
    if run_file is not None:
        where.append(f"in the run file {run_file} (step {step_number})")
    places = " and ".join(where) or f"in the run's history (step {step_number})"

    def marker(left: str) -> str:
        return (
            f"\n[… {len(left):,} more characters ({len(left.splitlines()):,} lines) of step "
            f"{step_number}'s answer left out here. The full text is {places}.]\n"
        )

    # Counting what is left out of the whole text gives the longest the marker can be.
    kept = cut_at_line(text, max(limit - len(marker(text)), 0))
    return kept + marker(text[len(kept) :])
