"""The refusal a run meets in a project whose steering files the person has not trusted.

It lives apart from :mod:`core.safety.trust` because its message is scrubbed by a
:class:`~core.safety.redaction.Redactor`, whose configured secrets include the trusted projects'
``.mcp.json``: the trust store must not import the redactor that reads it.
"""

from __future__ import annotations

from pathlib import Path

from core.model.errors import RunError
from core.safety.checkout_programs import checkout_programs
from core.safety.redaction import Redactor
from core.safety.trust import TrustChange, TrustStore, file_kind

DIFF_LINES_SHOWN = 40
"""Lines of the diff the terminal's question prints (the window shows all of it)."""


class UntrustedProjectError(RunError):
    """A run would use a project's agents, presets, context or settings that the user has not
    trusted (or that changed since)."""

    def __init__(self, root: Path, files: list[Path]) -> None:
        self.root = root
        self.files = files
        self.programs = checkout_programs(root)
        """What the checkout's CLI settings would run: the terminal lists them too."""
        self.changes = TrustStore().changes(root)
        """What changed since the person trusted the project (empty: never trusted)."""
        kinds = {file_kind(root, file) for file in files}
        what = (
            "its own agent files"
            if kinds & {"agent", "preset"}
            else "context files and skills that steer its models"
            if kinds & {"context", "skill"}
            else "settings that run programs"
        )
        count = f"{len(files)} file{'s' if len(files) != 1 else ''}"
        opening = (
            f"the project {root} changed since you trusted it ({count})"
            if self.changes
            else f"the project {root} has {what} that you have not trusted yet ({count})"
        )
        message = (
            f"{opening}; review them, then trust the project in the window, or run again with "
            "--trust-project (or --scope user to run without them)"
        )
        if self.changes:
            message += "\n" + changes_text(self.changes)
        if self.programs:
            lines = "\n".join(f"  {program.line()}" for program in self.programs)
            message += f"\nprograms the project's settings would run:\n{lines}"
        # A literal token in .mcp.json (a header, an argument) is not printed with the rest.
        super().__init__(Redactor.configured([root]).scrub(message))


def changes_text(changes: list[TrustChange], limit: int = DIFF_LINES_SHOWN) -> str:
    """What changed, for a terminal: one line per file, then the diff's first ``limit`` lines."""
    words = {"added": "new file", "changed": "changed", "removed": "removed"}
    lines = [f"changed since you trusted it: {c.path} ({words[c.kind]})" for c in changes]
    diff = "".join(change.diff for change in changes).splitlines()
    lines += diff[:limit]
    if len(diff) > limit:
        lines.append(f"[… {len(diff) - limit} more lines of the diff; the window shows them all]")
    return "\n".join(lines)
