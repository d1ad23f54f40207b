"""The backend protocol: one step of a run, as a stream of events.

A backend turns ``(agent, task, cwd, model, tools)`` into events. It is deliberately small
(architecture: "Backends"), like httpx's transport: the runner owns everything around it.

Contract, from the runner's side:

* The runner emits ``step_started`` before calling :meth:`Backend.run` and ``step_finished``
  after it; a backend yields only what happens inside the step (text, thinking, tool calls,
  usage, retries, logs) and **ends by yielding one** :class:`~core.model.events.StepFinished`
  carrying ``status``, ``output`` (the final text handed to the next chain step) and
  ``error``. The runner replaces its ``usage`` with the sum of the ``usage`` events it saw, and
  treats a stream that ends without one as an error.
* Cancel is two-stage. First ``ctx.cancelled`` is set: a backend that can stop gracefully
  (Claude Code's ``interrupt``) does so and finishes with ``status="aborted"``. After
  :attr:`Backend.cancel_grace_s` seconds the runner cancels the task iterating the backend;
  the generator's ``finally`` must then release what it holds (close HTTP streams; SIGTERM,
  then SIGKILL after 5 s, a child process). The runner closes tool calls left open and
  records the step as aborted, so a backend never has to yield after being cancelled.
* Tool calls that need permission go through ``ctx.approvals``; the gate emits the approval
  events itself.
* A person's messages to the running step arrive in ``ctx.inbox`` (:mod:`core.backends.steering`); a
  backend that can deliver them opens it, and takes them at its next turn boundary.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from core.backends.steering import Continuation, StepInbox
from core.config.settings import Settings
from core.definitions.agents import AgentDefinition
from core.definitions.project_context import steering_fingerprint
from core.safety import checkout_programs
from core.safety.redaction import Redactor
from core.workspace.prompt_sources import PromptSources, read_prompt_sources

if TYPE_CHECKING:
    from core.model.budget import BudgetGuard
    from core.model.events import Event
    from core.safety.approvals import ApprovalGate
    from core.tools.mcp_hub import McpHub

E = TypeVar("E", bound="Event")


class RunClock:
    """Seconds since the run started, from a monotonic clock (see :mod:`core.model.events`)."""

    def __init__(self, offset: float = 0.0) -> None:
        self._start = time.monotonic() - offset

    def now(self) -> float:
        return round(time.monotonic() - self._start, 6)


@dataclass
class StepContext:
    """Everything a backend needs to run one step. Created by the runner, one per step."""

    run_id: str
    step: int
    agent: AgentDefinition
    task: str
    cwd: Path
    model: str | None
    tools: tuple[str, ...]
    """Baton tool names the step may use (already filtered by the agent's ``tools:``)."""
    settings: Settings
    approvals: ApprovalGate
    clock: RunClock = field(default_factory=RunClock)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    scrub: Callable[[str], str] = lambda text: text
    """The run's redactor, for what tools keep beyond the run (agent-written documents)."""
    redactor: Redactor | None = None
    """The run's redactor itself (the recording's): a backend scrubs what it sends the model
    with it instead of building one from the settings per step. None: build one."""
    budget: BudgetGuard | None = None
    """Checked before every model request (``await ctx.budget.check(ctx.step)``)."""
    continues: Continuation | None = None
    """The finished conversation this step goes on with (Continue); ``task`` is the follow-up."""
    inbox: StepInbox = field(default_factory=StepInbox)
    """What a person types to the running step (:mod:`core.backends.steering`); a backend opens it
    while it can deliver at its next turn boundary."""
    checkout_trust: str | None = None
    """The fingerprint of the folder's CLI program files as the person trusted them; None:
    a CLI backend must not load the project's settings, hooks or servers at all
    (:mod:`core.safety.checkout_programs`)."""

    trace_environment: dict[str, str] = field(default_factory=dict)
    """Variables a CLI step's process gets so its own traces nest under the step's span
    (``TRACEPARENT``, :mod:`core.telemetry.trace_ids`); empty when traces are off."""
    project_trusted: bool = False
    """The person trusted the project: Baton's loop may load its AGENTS.md / CLAUDE.md and
    its skills (:mod:`core.backends.system_prompt`). False: nothing from the checkout."""
    project_trust: str | None = None
    """The context files and skills as they were when the run was prepared
    (:func:`~core.definitions.project_context.steering_fingerprint`); None: not taken."""
    prompt_trust: str | None = None
    """What Baton's own loop could put in the prompt, as it was when the run was prepared
    (:func:`~core.workspace.prompt_sources.prompt_fingerprint`); None: not taken."""
    skill_folders: tuple[Path, ...] = ()
    """Folders of the skills offered to this step (resolved): the ``read`` tool may open files
    inside them wherever they are, read-only."""
    mcp: McpHub | None = None
    """The run's MCP servers (:mod:`core.tools.mcp_hub`), shared by its steps; None: a step
    that uses MCP starts its own and stops them when it ends."""

    def checkout_trusted(self) -> bool:
        """Whether the CLI may load what the folder's settings name: trusted, and unchanged
        since (an earlier step may have rewritten them)."""
        trusted = self.checkout_trust
        return trusted is not None and trusted == checkout_programs.fingerprint(self.cwd)

    def project_context_trusted(self) -> bool:
        """Whether the step may be given the project's context files and skills: trusted, and
        unchanged since the run was prepared (an earlier step may have rewritten them). For a
        CLI's or an ACP agent's step; Baton's loop asks :meth:`trusted_prompt_sources`."""
        if not self.project_trusted:
            return False
        return self.project_trust is None or self.project_trust == steering_fingerprint(self.cwd)

    def trusted_prompt_sources(self) -> PromptSources | None:
        """What Baton's own loop may put in the prompt from the checkout, read once: None
        unless the project is trusted and that reading is what the run was prepared with (the
        rest of the project's context is the CLIs' to load, not the loop's). The prompt is
        built from this reading, so nothing written after the comparison reaches it."""
        if not self.project_trusted:
            return None
        sources = read_prompt_sources(self.cwd)
        if self.prompt_trust is not None and self.prompt_trust != sources.fingerprint:
            return None
        return sources

    def project_context_changed(self) -> bool:
        """Trusted, but an earlier step changed the context files or skills: say so."""
        return self.project_trusted and not self.project_context_trusted()

    def make(self, kind: type[E], **fields: Any) -> E:
        """Build an event of this step, with ``run_id``, ``step`` and ``ts`` filled in."""
        return kind(run_id=self.run_id, step=self.step, ts=self.clock.now(), **fields)


class BackendError(Exception):
    """The backend cannot run at all (executable missing, too old, no provider configured).

    Raised before any event is yielded; the message tells the user how to fix it and becomes
    the step's error.
    """


class Backend(Protocol):
    name: ClassVar[str]
    cancel_grace_s: ClassVar[float]
    """How long the runner waits after setting ``ctx.cancelled`` before cancelling the task."""

    def run(self, ctx: StepContext) -> AsyncGenerator[Event, None]: ...
