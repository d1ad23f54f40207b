"""What every agent tool is: a name, a pydantic parameter model, and an async ``run``.

Tools are backend-agnostic: Baton's own agent loop (``core.backends.openai_compat``) offers
them to the model as function tools and executes them. A tool reports a problem the model
should see (file not found, ambiguous edit, path outside the working folder) by raising
:class:`ToolError`; its message becomes the tool's error result, and the step goes on.
Anything else escaping ``run`` is a bug and is reported to the model as an internal error.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from core.config.settings import Limits, SandboxSettings
from core.model.events import ToolAttachment


class ToolError(Exception):
    """A failure the model can understand and react to; the message is what it reads."""


@dataclass(frozen=True)
class Provenance:
    """Who is calling: recorded on what a tool creates (documents)."""

    run_id: str = ""
    step: int | None = None
    agent: str = ""
    call_id: str = ""


@dataclass
class ToolContext:
    """Per-call context. ``emit_output`` streams a chunk of output to the run (bash)."""

    cwd: Path
    limits: Limits = field(default_factory=Limits)
    emit_output: Callable[[str], None] = lambda chunk: None
    provenance: Provenance = field(default_factory=Provenance)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    """The confinement bash gets; ``network`` already combines the run's and the agent's."""
    env_allow: tuple[str, ...] = ()
    """Secret-looking environment variables the agent may still see (frontmatter ``env:``)."""
    secret_env: tuple[str, ...] = ()
    """Variables Baton knows hold keys (providers' ``api_key_env``), removed whatever their name."""
    scrub: Callable[[str], str] = lambda text: text
    """The run's redactor (:meth:`core.safety.redaction.Redactor.scrub`): what a tool stores beyond
    the run (documents) goes through it, so a secret the model saw is never kept."""
    attach: Callable[[list[ToolAttachment]], None] = lambda items: None
    """Hands the step pane what a result holds beyond text (an MCP tool's images)."""
    handoff_dir: Path | None = None
    """The current run's hand-off folder (:mod:`core.run.handoff`): the one place outside the
    working folder that ``read`` may open, and only the step files in it."""
    skill_folders: tuple[Path, ...] = ()
    """The folders (resolved) of the skills offered to the step: ``read`` may open files
    inside them wherever they are; no other tool may."""


class Tool(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type[BaseModel]]

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool declaration. Built once per tool class (generating a JSON
        schema costs milliseconds and every step asks for it); callers must not mutate it."""
        return _schema(type(self))

    def approval_action(self, params: BaseModel, caller: Provenance | None = None) -> str | None:
        """The policy sub-key of this call (``document`` → ``delete``); None for most tools.
        ``caller`` is who is calling, for tools whose risk depends on it (a document the
        calling run did not create)."""
        return None

    def approval_note(self) -> str | None:
        """What the approval shows about the tool beside its arguments (None for most)."""
        return None

    @abstractmethod
    async def run(self, params: Any, ctx: ToolContext) -> str:
        """Execute with validated ``params``; return the result text the model reads."""


@functools.cache
def _schema(tool: type[Tool]) -> dict[str, Any]:
    parameters = tool.Params.model_json_schema()
    parameters.pop("title", None)
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters},
    }


def lines_within(lines: Iterable[str], budget: int) -> list[str]:
    """The leading lines whose joined text (one newline each) fits in ``budget`` characters;
    always at least one, so a single long line is shown rather than nothing."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if kept and used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return kept
