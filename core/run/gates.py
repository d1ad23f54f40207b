"""Gates: a graph run waiting for a person (architecture: "Graph pipelines").

A gate is raised as a ``gate_waiting`` event and answered exactly once — by whoever is first:
the window or the inbox (through :meth:`core.run.runner.Runner.decide_gate`), the terminal's
prompt (an :data:`GateAsker` the command line passes), or the gate's ``timeout`` (its default
decision). The answer is published as ``gate_decided``, so the run file says who decided and
what they handed on (an edit is recorded as the person's text). Cancelling the run ends every
waiting gate: nothing waits forever.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Literal

from core.model.events import Event, GateDecided, GateDecider, GateDecision, GateWaiting


class GateError(ValueError):
    """A decision a gate cannot take (unknown gate, an option not offered, an empty edit)."""


class GateUnanswerable(Exception):
    """Nobody can answer this gate (no terminal, no default given); the run ends with it."""


@dataclass(frozen=True)
class GateAnswer:
    decision: GateDecision
    text: str | None = None
    note: str | None = None
    by: GateDecider = "person"


GateAsker = Callable[[GateWaiting], Awaitable[GateAnswer]]
"""Asks someone (the terminal) and returns their answer; raises :class:`GateUnanswerable`."""

PERSON_OPTIONS = ["continue", "edit", "send_back", "stop"]

GateChoice = Literal["continue", "stop", "default"]
"""``--gate``: every gate answered the same way without asking (:func:`fixed_answers`)."""


class Gates:
    """The run's waiting gates, by id."""

    def __init__(
        self,
        run_id: str,
        emit: Callable[[Event], None],
        now: Callable[[], float],
        scrub: Callable[[str], str] = lambda text: text,
    ) -> None:
        self._run_id = run_id
        self._emit = emit
        self._now = now
        self._scrub = scrub
        """The run's redaction: the asker sees what the run file and the window see."""
        self._pending: dict[str, tuple[GateWaiting, asyncio.Future[GateAnswer]]] = {}
        self._ids = itertools.count(1)

    def new_id(self, node: str) -> str:
        return f"{node}#{next(self._ids)}"

    @property
    def waiting(self) -> list[GateWaiting]:
        return [event for event, _ in self._pending.values()]

    def decide(
        self,
        gate_id: str,
        decision: GateDecision,
        *,
        text: str | None = None,
        note: str | None = None,
        by: GateDecider = "person",
    ) -> None:
        """Answer a waiting gate; raises :class:`GateError` when it cannot be answered so."""
        pending = self._pending.get(gate_id)
        if pending is None:
            raise GateError(f"no gate '{gate_id}' is waiting")
        event, future = pending
        offered = [o for o in event.options if o in PERSON_OPTIONS]
        if offered and decision not in offered:
            raise GateError(f"'{decision}' is not offered here ({', '.join(offered)})")
        if not offered and decision not in ("continue", "stop"):
            raise GateError("pick one of the attempts (continue with its name) or stop")
        if not offered and decision == "continue" and text not in event.options:
            raise GateError(f"pick one of: {', '.join(event.options)}")
        if decision == "edit" and not (text or "").strip():
            raise GateError("an edit needs the text to hand on")
        if not future.done():
            future.set_result(GateAnswer(decision, text, note, by))

    async def ask(
        self, waiting: GateWaiting, asker: GateAsker | None, cancelled: asyncio.Event
    ) -> GateAnswer:
        """Publish ``waiting`` and wait for its answer (see the module docstring); a cancelled
        run answers ``stop``. Raises :class:`GateUnanswerable` from the asker."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[GateAnswer] = loop.create_future()
        self._pending[waiting.gate_id] = (waiting, future)
        self._emit(waiting)
        helpers: list[asyncio.Task[None]] = []
        if asker is not None:
            shown = waiting.model_copy(
                update={
                    "handoff": self._scrub(waiting.handoff),
                    "question": self._scrub(waiting.question),
                    "options": [self._scrub(option) for option in waiting.options],
                }
            )
            helpers.append(asyncio.create_task(self._from_asker(shown, asker, future)))
        cancel_wait: asyncio.Future[object] = asyncio.ensure_future(cancelled.wait())
        answered: asyncio.Future[object] = future  # type: ignore[assignment]
        try:
            await asyncio.wait(
                {answered, cancel_wait},
                timeout=waiting.timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            cancel_wait.cancel()
            for helper in helpers:
                helper.cancel()
                with suppress(asyncio.CancelledError, Exception):
                    await helper
            self._pending.pop(waiting.gate_id, None)
        if future.done():
            answer = future.result()
        elif cancelled.is_set():
            answer = GateAnswer("stop", note="the run was cancelled", by="default")
        else:
            answer = GateAnswer(waiting.default, by="timeout")
        self._emit(
            GateDecided(
                run_id=self._run_id,
                step=waiting.step,
                ts=self._now(),
                gate_id=waiting.gate_id,
                decision=answer.decision,
                text=answer.text,
                note=answer.note,
                by=answer.by,
            )
        )
        return answer

    async def _from_asker(
        self, waiting: GateWaiting, asker: GateAsker, future: asyncio.Future[GateAnswer]
    ) -> None:
        try:
            answer = await asker(waiting)
        except GateUnanswerable as error:
            if not future.done():
                future.set_exception(error)
            return
        if not future.done():
            future.set_result(answer)


def fixed_answers(choice: GateChoice) -> GateAsker:
    """Every gate answered the same way without asking (``--gate``; recorded as the
    ``default``): continue, stop, or each gate's own default. A best-of pick's ``continue``
    keeps the first attempt that finished."""

    async def answer(waiting: GateWaiting) -> GateAnswer:
        decision = waiting.default if choice == "default" else choice
        if decision == "continue" and not any(o in PERSON_OPTIONS for o in waiting.options):
            return GateAnswer("continue", text=waiting.options[0], by="default")
        return GateAnswer(decision, by="default")

    return answer


def nobody_to_ask(reason: str) -> GateAsker:
    """Gates fail the run with ``reason``: where no person can answer, nothing waits."""

    async def refuse(waiting: GateWaiting) -> GateAnswer:
        raise GateUnanswerable(reason)

    return refuse
