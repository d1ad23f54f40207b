"""Permission policy and pending approval requests (architecture: "Tools, approvals and trust").

Every tool call passes through :meth:`ApprovalGate.check` before it runs. The policy says
``allow`` (run it), ``deny`` (refuse without asking) or ``ask``: the step pauses, an
``approval_requested`` event goes out, and a *responder* answers — the GUI's dialog, the
terminal prompt of ``baton run --approve prompt``, or a fixed answer for ``--approve all|deny``.
A denial is not an error of the run: it returns to the backend, which hands the reason to the
model as the tool's error result, and the step goes on.

"Approve this tool for this run" is remembered by the gate (one per run), so later calls of the
same tool in the same run pass without asking.

Per-project rules (:mod:`core.safety.rules`, kept by :class:`core.safety.rule_store.RuleStore`) are
weighed
after a policy ``deny`` (which they cannot widen) and before the rest of the policy: a deny
rule denies, an ask rule asks even where the policy allows, an allow rule runs the call
without asking. "Always allow ``<rule>`` here", answered by a person, adds a rule through the
gate, so it holds for the rest of the run too.

Every decision says who made it (:data:`core.model.events.Decider`) — the person, a named rule or
policy entry, the run's setting, the no-terminal default, a cancel — in the
``approval_resolved`` event, with the arguments a person edited: the run file is an honest
audit trail of what ran and why.

Threading: everything here runs on the asyncio loop; responders are coroutines on that loop.
Reading a bash line against the rules is the exception: a long one is read in a thread or a
worker process (:mod:`core.safety.rule_judge`), so one huge command cannot freeze every run.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.config.settings import PolicyValue
from core.model.events import ApprovalRequested, ApprovalResolved, Decider, Event, Log
from core.safety.rule_judge import judge
from core.safety.rule_store import RuleStore, project_of
from core.safety.rules import RuleError, RuleSet

Decision = Literal["approve", "approve_run", "deny"]

NO_ONE_TO_ASK = "Denied: no one to ask (no terminal — use --approve prompt or all)"


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
    rule: str | None = None
    """The rule that asked (``ask Bash(git push:*)``); None when the policy asked."""
    suggested_rule: str | None = None
    """A narrow rule a person may keep ("always allow ``Bash(git diff:*)`` here")."""
    project: str | None = None
    """The project folder whose rules apply (where an "always allow" rule would go)."""
    note: str | None = None
    """What the tool says about itself (an MCP server, its read-only / destructive hints)."""


class ApprovalAnswer(BaseModel):
    model_config = ConfigDict(frozen=True)

    decision: Decision
    reason: str | None = None
    """A person's reason for the model; for anyone else, the whole honest sentence."""
    updated_arguments: dict[str, Any] | None = None
    """A person may edit a command before approving it (Claude Code's ``updatedInput``)."""
    decided_by: Decider = "person"
    rule: str | None = None
    """The rule or policy entry that decided."""
    remember_rule: str | None = None
    """"Always allow this rule here": the person's approval also adds the rule for the project."""

    @property
    def approved(self) -> bool:
        return self.decision != "deny"

    def denial_message(self) -> str:
        """What the model reads as the tool's error result when the call is denied."""
        reason = (self.reason or "").strip()
        if self.decided_by == "person":
            return f"Denied by the user: {reason}" if reason else "Denied by the user."
        return reason or "Denied."


Responder = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
EventSink = Callable[[Event], None]


async def deny_all(request: ApprovalRequest) -> ApprovalAnswer:
    """The responder of a run nobody can answer (``baton run`` without a terminal)."""
    return ApprovalAnswer(decision="deny", reason=NO_ONE_TO_ASK, decided_by="no_one")


def deny_by_setting(setting: str) -> Responder:
    """The responder of a run started to deny every call that needs approval (``setting``
    names how, e.g. ``--approve deny``)."""

    async def deny(request: ApprovalRequest) -> ApprovalAnswer:
        reason = f"Denied: this run denies every call that needs approval ({setting})"
        return ApprovalAnswer(decision="deny", reason=reason, decided_by="setting")

    return deny


async def approve_all(request: ApprovalRequest) -> ApprovalAnswer:
    """The responder of ``--approve all``: the run's setting approves, not a person."""
    return ApprovalAnswer(decision="approve", decided_by="setting")


class ApprovalGate:
    """The policy, the project rules and the pending requests of one run."""

    def __init__(
        self,
        policy: dict[str, PolicyValue],
        responder: Responder,
        emit: EventSink,
        now: Callable[[], float],
        *,
        rules: RuleStore | None = None,
    ) -> None:
        """``rules``: where per-project rules are read and "always allow" rules are added;
        None runs on the policy alone (tests, imports)."""
        self._policy = policy
        self._responder = responder
        self._emit = emit
        self._now = now
        self._store = rules
        self._rules: dict[str, RuleSet] = {}
        self._approved_for_run: set[str] = set()
        self._ids = itertools.count(1)
        self.pending: dict[str, ApprovalRequest] = {}

    def policy_for(self, tool: str, action: str | None = None) -> PolicyValue:
        """``document.delete`` falls back to ``document``; unknown tools ask."""
        if action is not None and f"{tool}.{action}" in self._policy:
            return self._policy[f"{tool}.{action}"]
        return self._policy.get(tool, "ask")

    def rules_for(self, cwd: str) -> RuleSet:
        """The rules of the project ``cwd`` belongs to (read once per run and folder)."""
        rules = self._rules.get(cwd)
        if rules is None:
            root = project_of(Path(cwd))
            rules = self._store.for_project(root) if self._store else RuleSet(root)
            self._rules[cwd] = rules
        return rules

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
        note: str | None = None,
    ) -> ApprovalAnswer:
        """Decide whether a tool call may run, asking a person if the policy says so.

        Order: a policy ``deny``, then the project's rules (deny → ask → allow), then the rest
        of the policy. ``flagged``: the backend's own safety check already singled this call
        out (Claude Code asks only about calls outside its safe set, e.g. a ``Read`` outside
        the working folder), so a tool the *policy* allows is asked about anyway; an allow
        rule, written by a person for exactly such calls, still allows.

        If the waiting task is cancelled (the run was cancelled), the request is resolved as
        denied in the event stream before the cancellation propagates.
        """
        what = f"{tool}.{action}" if action else tool
        call = _Call(run_id, step, tool, call_id)
        if self.policy_for(tool, action) == "deny":
            reason = f"Denied by the user's policy: {what.replace('.', ' ')} is set to deny"
            return self._decided(call, "deny", reason, "policy", f"policy {what}: deny")
        rules = self.rules_for(cwd)
        # Off the loop when the line is large: reading bash costs what the model chooses.
        judgement = await judge(rules, tool, action, arguments, Path(cwd))
        verdict = judgement.verdict
        if verdict is not None and verdict.kind == "deny":
            reason = f"Denied by the project rule {verdict.rules[0]}"
            return self._decided(call, "deny", reason, "rule", verdict.label())
        if verdict is not None and verdict.kind == "allow":
            return self._decided(call, "approve", None, "rule", verdict.label())
        asked_by = verdict.label() if verdict is not None else None
        policy = self.policy_for(tool, action)
        if policy == "allow" and not flagged and asked_by is None:
            return ApprovalAnswer(decision="approve", decided_by="policy", rule=f"policy {what}")
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
            rule=asked_by,
            # An ask rule outranks any allow rule: offering one would be a promise not kept.
            suggested_rule=None if asked_by else judgement.suggestion,
            project=str(rules.root),
            note=note,
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
                rule=asked_by,
                note=note,
            )
        )
        if what in self._approved_for_run and asked_by is None:
            answer = ApprovalAnswer(decision="approve_run", decided_by="run")
            self._resolve(request, answer, automatic=True)
            return answer
        self.pending[request.request_id] = request
        try:
            answer = await self._responder(request)
        except asyncio.CancelledError:
            cancelled = ApprovalAnswer(decision="deny", reason="run cancelled", decided_by="cancel")
            self._resolve(request, cancelled)
            raise
        finally:
            self.pending.pop(request.request_id, None)
        if answer.decision == "approve_run":
            self._approved_for_run.add(what)
        added = self._remember(request, answer) if answer.approved else None
        self._resolve(request, answer, added_rule=added)
        return answer

    def _remember(self, request: ApprovalRequest, answer: ApprovalAnswer) -> str | None:
        """Add the person's "always allow" rule to the project (and to this run's view)."""
        if answer.remember_rule is None or self._store is None:
            return None
        rules = self.rules_for(request.cwd)
        try:
            rule = self._store.add(rules.root, "allow", answer.remember_rule)
        except (RuleError, OSError) as error:
            self._emit(
                Log(
                    run_id=request.run_id,
                    step=request.step,
                    ts=self._now(),
                    level="warning",
                    message=f"could not keep the rule {answer.remember_rule}: {error}",
                )
            )
            return None
        rules.rules["allow"].append(rule)
        return str(rule)

    def _decided(
        self, call: _Call, decision: Decision, reason: str | None, by: Decider, rule: str
    ) -> ApprovalAnswer:
        """A decision nobody was asked about (a rule, a policy entry), still on record."""
        answer = ApprovalAnswer(decision=decision, reason=reason, decided_by=by, rule=rule)
        self._record(call, f"{call.run_id}-a{next(self._ids)}", answer, automatic=True)
        return answer

    def _resolve(
        self,
        request: ApprovalRequest,
        answer: ApprovalAnswer,
        *,
        automatic: bool = False,
        added_rule: str | None = None,
    ) -> None:
        call = _Call(request.run_id, request.step, request.tool, request.call_id)
        self._record(call, request.request_id, answer, automatic=automatic, added_rule=added_rule)

    def _record(
        self,
        call: _Call,
        request_id: str,
        answer: ApprovalAnswer,
        *,
        automatic: bool,
        added_rule: str | None = None,
    ) -> None:
        """Emit the ``approval_resolved`` event: the audit trail's one writer."""
        self._emit(
            ApprovalResolved(
                run_id=call.run_id,
                step=call.step,
                ts=self._now(),
                request_id=request_id,
                decision=answer.decision,
                reason=answer.reason,
                automatic=automatic or answer.decided_by != "person",
                decided_by=answer.decided_by,
                rule=answer.rule,
                updated_arguments=answer.updated_arguments if answer.approved else None,
                added_rule=added_rule,
                tool=call.tool,
                call_id=call.call_id,
            )
        )


@dataclass(frozen=True)
class _Call:
    """Which call a decision is about (for decisions made without a request)."""

    run_id: str
    step: int
    tool: str
    call_id: str
