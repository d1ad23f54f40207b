"""Counted nouns, spelled as a person writes them: "1 file", "3 files" — never "file(s)".

Every sentence Baton shows that counts something goes through :func:`counted`, so the window,
the terminal and the error messages read alike.
"""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``counted(1, "file")`` → ``1 file``; ``counted(3, "step")`` → ``3 steps``;
    ``counted(2, "child", "children")`` → ``2 children``."""
    word = noun if count == 1 else (plural or f"{noun}s")
    return f"{count:,} {word}"


def step_range(first: int, last: int) -> str:
    """Steps ``first`` to ``last`` (1-based) as a subject: ``Step 1`` or ``Steps 1 to 3``."""
    return f"Step {first}" if first == last else f"Steps {first} to {last}"
