"""Talking to a running step: the inbox between :meth:`Runner.steer` and a backend.

A person's message must reach the agent without cancelling anything, so it never interrupts a
model response or a tool call: it waits in the step's :class:`StepInbox` until the backend
reaches a turn boundary. Each backend takes it there in its own way:

* Baton's own loop (:mod:`core.backends.openai_compat`) appends it as a user message, after
  the pending tool results, before its next request — and a message that arrives while the
  final answer streams gets one more request instead of being dropped;
* pi gets it through its RPC ``steer`` command (pi queues it until its current tool calls
  are done, then adds it before the next model call);
* Claude Code gets it as a user message on its stream-json input (2.0.x adds it to the next
  request's tool result as "the user sent the following message", then answers it as a turn of
  its own; 2.1.x adds it to the next request only);
* an ACP agent has no way in during a turn (the protocol's ``session/prompt`` is one turn), so
  what waits is sent as the next prompt of the same session when the turn ends.

The inbox is *open* only while the backend can still deliver: a CLI that reported its final
result, or pi between ``agent_end`` and exit, would silently lose the text, so the runner
refuses then with :class:`SteerError` and the person can Continue the step instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

TALKING_BACKENDS = frozenset({"openai", "pi", "claude", "acp"})
"""Backends that deliver a person's messages to a running step and can continue a finished
one; a step of any other (an imported transcript's) shows its message box disabled."""


@dataclass(frozen=True)
class Continuation:
    """The finished conversation a new step continues (Continue, :mod:`core.run.continuation`)."""

    run_id: str
    step: int
    """The 0-based step of :attr:`run_id` whose conversation goes on."""
    messages: tuple[dict[str, Any], ...] = ()
    """Baton's own loop: that conversation after its system prompt, as Chat Completions
    messages rebuilt from the run file (so redacted as the run file is)."""
    session: str | None = None
    """A CLI's own record of it: Claude Code's session id, pi's session file (forked)."""


CONTINUABLE_BACKENDS = frozenset({"openai", "pi", "claude", "acp"})
"""Backends whose finished steps can be continued (:mod:`core.run.continuation`)."""


class SteerError(Exception):
    """The message cannot be delivered; the text says why, in words for the person."""


NOT_STARTED = "the step is not talking to its model yet"
FINISHING = "the step is finishing; continue it once it has finished"


class StepInbox:
    """Messages for one running step, in the order they were sent.

    Lives on the asyncio loop of the run; :meth:`put` is called by the runner, the rest by
    the step's backend. A backend that can take messages calls :meth:`open` once it can
    deliver them and :meth:`close` once it no longer can.
    """

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._arrived = asyncio.Event()
        self._open = False
        self._closed_reason = NOT_STARTED

    @property
    def accepting(self) -> bool:
        return self._open

    @property
    def has_pending(self) -> bool:
        return bool(self._pending)

    def open(self) -> None:
        self._open = True

    def close(self, reason: str = FINISHING) -> None:
        """Refuse further messages, saying ``reason``."""
        self._open = False
        self._closed_reason = reason

    def put(self, text: str) -> None:
        if not self._open:
            raise SteerError(self._closed_reason)
        self._pending.append(text)
        self._arrived.set()

    def take(self) -> list[str]:
        """Everything waiting, oldest first; the inbox is then empty."""
        taken, self._pending = self._pending, []
        self._arrived.clear()
        return taken

    async def stream(self) -> AsyncIterator[str]:
        """Each message as it arrives, for backends that forward at once (a CLI queues it
        until its own turn boundary). Ends only when the iterating task is cancelled."""
        while True:
            await self._arrived.wait()
            for text in self.take():
                yield text
