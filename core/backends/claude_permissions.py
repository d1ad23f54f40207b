"""Baton's permission policy as Claude Code's own permission settings (architecture: "Tools,
approvals and trust").

Claude Code decides by itself which calls it asks about: reads inside the working folder (its
"safe set") run without a question, and the user's own Claude settings may allow more. Asking
goes through Baton's gate (``can_use_tool``) only for what Claude would have asked a person.
So each step tells Claude Code, through its flags, what Baton's policy says:

* ``--permission-mode default`` — never a mode from the user's settings that skips questions
  (``bypassPermissions``, ``acceptEdits``, ``dontAsk``).
* policy **deny** → ``--disallowedTools`` (and left out of ``--tools``): the model is never
  offered the tool, so it cannot even try.
* policy **ask** → a ``permissions.ask`` rule in ``--settings`` (a JSON string): ask rules win
  over any allow rule of the user's or project's settings, so every such call — a ``Read``
  inside the safe set included — reaches ``can_use_tool`` and Baton's gate.

* Baton's own folders → ``Read``/``Edit``/``Write`` deny rules for them (even reads in the
  safe set), besides the gate's own check of every question (:mod:`core.backends.cli_paths`).

Policy **allow** adds nothing: Claude's safe set and its own questions stand, and the gate
still asks about a call Claude singles out (``flagged``).

Only Claude's tools that have a Baton policy are mapped (those of :data:`CLAUDE_TO_BATON`, and
any tool the policy names with Claude's spelling, e.g. ``WebFetch: deny``); Claude's
bookkeeping tools (``TodoWrite``…) keep Claude's own defaults.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from core.backends.cli_paths import claude_deny_rules
from core.safety.approvals import ApprovalGate

CLAUDE_TO_BATON: dict[str, str] = {
    "Read": "read",
    "Grep": "grep",
    "Glob": "find",
    "LS": "ls",
    "Bash": "bash",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Write": "write",
}
"""Claude Code's built-in tools (2.0.x and 2.1.x; ``LS`` and ``MultiEdit`` only in older
releases) and the Baton tool whose policy governs each."""


def _governed(policy_names: Iterable[str]) -> dict[str, str]:
    """Claude tool → the policy key deciding it: the mapped ones, plus policy keys spelled as
    Claude tools (an upper-case first letter, as Claude names them)."""
    governed = dict(CLAUDE_TO_BATON)
    for name in policy_names:
        if name[:1].isupper() and name not in governed:
            governed[name] = name
    return governed


def denied_tools(gate: ApprovalGate, policy_names: Iterable[str]) -> list[str]:
    """Claude tools the policy denies: never offered to the model."""
    governed = _governed(policy_names)
    return [claude for claude, baton in governed.items() if gate.policy_for(baton) == "deny"]


def permission_args(gate: ApprovalGate, policy_names: Iterable[str]) -> list[str]:
    """The flags that make Claude Code ask Baton about every *ask* tool and never offer a
    *deny* one."""
    names = list(policy_names)
    governed = _governed(names)
    ask = [claude for claude, baton in governed.items() if gate.policy_for(baton) == "ask"]
    args = ["--permission-mode", "default"]
    denied = denied_tools(gate, names)
    if denied:
        args.append("--disallowedTools=" + ",".join(denied))
    settings = {"permissions": {"ask": ask, "deny": denied + claude_deny_rules()}}
    args.append("--settings=" + json.dumps(settings, separators=(",", ":")))
    return args
