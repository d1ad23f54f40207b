"""Permission policy and pending approval requests (DESIGN §6).

Every tool call passes through :meth:`ApprovalGate.check` before it runs. The policy says
``allow`` (run it), ``deny`` (refuse without asking) or ``ask``: the step pauses, an
``approval_requested`` event goes out, and a *responder* answers — the GUI's dialog, the
terminal prompt of ``baton run --approve prompt``, or a fixed answer for ``--approve all|deny``.
A denial is not an error of the run: it returns to the backend, which hands the reason to the
model as the tool's error result, and the step goes on.

"Approve this tool for this run" is remembered by the gate (one per run), so later calls of the
same tool in the same run pass without asking.

Threading: everything here runs on the asyncio loop; responders are coroutines on that loop.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.events import ApprovalRequested, ApprovalResolved, Event
from core.settings import PolicyValue

Decision = Literal["approve", "approve_run", "deny"]


class ApprovalRequest(BaseModel):
    """What a person is asked about: enough to decide without opening anything else."""

    model_config = ConfigDict(frozen=True)

    request_id: str
    run_id: str
    step: int
    agent: str
    tool: str
    action: str | None = None
    call_id: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    cwd: str


class ApprovalAnswer(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Decision
    reason: str | None = None
    updated_arguments: dict[str, Any] | None = None
    """A person may edit a command before approving it (Claude Code's ``updatedInput``)."""

    @property
    def approved(self) -> bool:
        return self.decision != "deny"


Responder = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
EventSink = Callable[[Event], None]


async def deny_all(request: ApprovalRequest) -> ApprovalAnswer:
    """The responder of a run nobody can answer (no terminal, ``--approve deny``)."""
    return ApprovalAnswer(
        decision="deny", reason="Not approved: nobody was available to approve this call."
    )


async def approve_all(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(decision="approve")


class ApprovalGate:
    """The policy and the pending requests of one run."""

    def __init__(
        self,
        policy: dict[str, PolicyValue],
        responder: Responder,
        emit: EventSink,
        now: Callable[[], float],
    ) -> None:
        self._policy = policy
        self._responder = responder
        self._emit = emit
        self._now = now
        self._approved_for_run: set[str] = set()
        self._ids = itertools.count(1)
        self.pending: dict[str, ApprovalRequest] = {}

    def policy_for(self, tool: str, action: str | None = None) -> PolicyValue:
        """``document.delete`` falls back to ``document``; unknown tools ask."""
        if action is not None and f"{tool}.{action}" in self._policy:
            return self._policy[f"{tool}.{action}"]
        return self._policy.get(tool, "ask")

    async def check(
        self,
        *,
        run_id: str,
        step: int,
        agent: str,
        tool: str,
        call_id: str,
        arguments: dict[str, Any],
        cwd: str,
        action: str | None = None,
        flagged: bool = False,
    ) -> ApprovalAnswer:
        """Decide whether a tool call may run, asking a person if the policy says so.

        ``flagged``: the backend's own safety check already singled this call out (Claude Code
        asks only about calls outside its safe set, e.g. a ``Read`` outside the working
        folder), so a tool the policy allows is asked about anyway; "deny" still denies.

        If the waiting task is cancelled (the run was cancelled), the request is resolved as
        denied in the event stream before the cancellation propagates.
        """
        verdict = self.policy_for(tool, action)
        if verdict == "allow" and flagged:
            verdict = "ask"
        if verdict == "allow":
            return ApprovalAnswer(decision="approve")
        if verdict == "deny":
            what = f"{tool} {action}" if action else tool
            return ApprovalAnswer(
                decision="deny", reason=f"The user's policy does not allow the {what} tool."
            )
        run_key = f"{tool}.{action}" if action else tool
        request = ApprovalRequest(
            request_id=f"{run_id}-a{next(self._ids)}",
            run_id=run_id,
            step=step,
            agent=agent,
            tool=tool,
            action=action,
            call_id=call_id,
            arguments=arguments,
            cwd=cwd,
        )
        self._emit(
            ApprovalRequested(
                run_id=run_id,
                step=step,
                ts=self._now(),
                request_id=request.request_id,
                call_id=call_id,
                tool=tool,
                arguments=arguments,
                agent=agent,
                cwd=cwd,
            )
        )
        if run_key in self._approved_for_run:
            answer = ApprovalAnswer(decision="approve_run")
            self._resolve(request, answer, automatic=True)
            return answer
        self.pending[request.request_id] = request
        try:
            answer = await self._responder(request)
        except asyncio.CancelledError:
            self._resolve(request, ApprovalAnswer(decision="deny", reason="run cancelled"))
            raise
        finally:
            self.pending.pop(request.request_id, None)
        if answer.decision == "approve_run":
            self._approved_for_run.add(run_key)
        self._resolve(request, answer)
        return answer

    def _resolve(
        self, request: ApprovalRequest, answer: ApprovalAnswer, *, automatic: bool = False
    ) -> None:
        self._emit(
            ApprovalResolved(
                run_id=request.run_id,
                step=request.step,
                ts=self._now(),
                request_id=request.request_id,
                decision=answer.decision,
                reason=answer.reason,
                automatic=automatic,
            )
        )
