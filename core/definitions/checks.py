"""Validation steps for :class:`gui.definitions.definition_editor.DefinitionEditor`.

A validator is any ``Callable[[str], list[Problem]]``: the editor runs it on the text as the
user types (debounced) and shows what it returns. Agent files use :func:`validate_agent_text`;
the preset editor will plug in its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the text. ``line`` is 1-based, None when it concerns the file."""

    message: str
    line: int | None = None
    severity: Severity = "error"

    def describe(self) -> str:
        if not self.line:
            return self.message
        # "Line 4: ... at line 4 ..." says it twice: keep the prefix, drop the repeat.
        message = self.message.replace(f" at line {self.line}", "")
        return f"Line {self.line}: {message}"


Validator = Callable[[str], list[Problem]]


def validate_agent_text(text: str) -> list[Problem]:
    """Problems that stop ``text`` loading as an agent or running (errors) or that it loads
    despite (warnings: YAML read leniently, unknown tools)."""
    # Imported here: :class:`Problem` is on the window's start-up path, the parser
    # (pydantic, yaml) is not.
    from core.definitions.agents import AgentFileError, parse_agent_text

    try:
        agent = parse_agent_text(text)
    except AgentFileError as error:
        message = str(error)
        if error.severity == "info":
            # Discovery shrugs at notes without frontmatter; in the agent editor it is an error.
            message = (
                "no frontmatter: an agent file starts with a '---' line, "
                "then name: and description:"
            )
        return [Problem(message[:1].upper() + message[1:], error.line, "error")]
    return [
        Problem(p.message[:1].upper() + p.message[1:], p.line, p.severity) for p in agent.problems
    ]
