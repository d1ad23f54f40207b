"""The agent's system prompt as a private file, for the CLIs that can read it from one.

On a command line the prompt is visible to every user of the machine (``ps``, ``/proc``): pi
and Claude Code are given a path instead. The file is 0600 inside a folder from ``mkdtemp``
(0700), created exclusively (never through a link someone planted), and the caller removes the
folder when the step ends.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_private_prompt(folder: Path, text: str) -> Path:
    """The agent's system prompt as a 0600 file (the folder, from ``mkdtemp``, is 0700)."""
    path = folder / "system-prompt.md"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path
