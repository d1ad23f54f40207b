"""Baton's own folders are out of reach of the agent CLIs' file tools too (architecture: "Tools,
approvals and trust").

pi and Claude Code run their own ``read``/``write``/``edit`` tools, so Baton's path checks
(:mod:`core.tools.paths`) never see those calls. Their gates do: before the policy is asked,
a call whose path lies in Baton's config or data folder (:func:`core.config.paths.protected_dirs`)
is
refused — read or write, whatever the policy or a rule says — with the same message Baton's
own tools give. ``bash`` cannot be checked this way (its words are not paths).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.config.paths import protected_dirs
from core.tools.paths import PROTECTED, is_protected

PATH_ARGUMENTS = ("path", "file_path", "notebook_path")
"""Where pi's (``path``) and Claude Code's (``file_path``, ``notebook_path``) file tools take
the file or folder they work on."""


def protected_refusal(arguments: dict[str, Any], cwd: Path) -> str | None:
    """The refusal for a call that names a path in Baton's folders; ``None``: none does."""
    for key in PATH_ARGUMENTS:
        value = arguments.get(key)
        if not isinstance(value, str) or not value.strip():
            continue
        candidate = Path(value.strip()).expanduser()
        try:
            resolved = (candidate if candidate.is_absolute() else Path(cwd) / candidate).resolve()
        except (OSError, RuntimeError, ValueError):  # ValueError: a NUL byte, a lone surrogate
            continue
        if is_protected(resolved):
            return PROTECTED.format(path=value)
    return None


def claude_deny_rules() -> list[str]:
    """Claude Code permission rules keeping its file tools out of Baton's folders (``//``
    starts an absolute path in Claude's rule syntax)."""
    rules: list[str] = []
    for folder in protected_dirs():
        pattern = f"/{folder.as_posix()}/**"
        rules += [f"{tool}({pattern})" for tool in ("Read", "Edit", "Write")]
    return rules
