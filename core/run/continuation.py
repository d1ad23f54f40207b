"""Continue: a follow-up to a finished step, in the same conversation, as a new step.

A run file ends with ``run_finished`` and is never appended to afterwards (the index, the
liveness lock and every reader rely on it), so the follow-up runs as a **new run** of one
step, linked to its parent like a resume or a re-run (:class:`core.model.events.Lineage`, kind
``continue``, naming the parent's step). That step has the same agent, backend, model and
folder as the one it continues; its task is the follow-up, which also shows in its stream as a
``user_message`` (delivery ``continue``). History and the run header say "continues run X,
step N".

How the conversation goes on, per backend:

* Baton's own loop: the conversation is rebuilt from the parent's run file (:func:`conversation`)
  — the task, every response's text and tool calls, every tool result as the model read it,
  every message the person sent — and sent before the follow-up. The run file is what was
  saved, so this needs nothing else, and it is redacted as the run file is.
* Claude Code: ``--resume <session> --fork-session``: the CLI's own session, recorded in the
  step's ``step_finished.session``, forked so the finished step's session stays as it was.
* pi: ``--fork <session file>``, the step's session (pi keeps it in Baton's private data
  folder, named in ``step_finished.session``), forked the same way.
* an ACP agent: ``session/load`` of the step's session id (the agent keeps the session in its
  own state folder); the history it replays is not shown again, and the follow-up is the next
  prompt of that same session. An agent that cannot load sessions gets a new one, with a
  warning in the step.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.backends.steering import Continuation
from core.model.errors import RunError
from core.model.events import (
    Event,
    Lineage,
    MessagesDelivered,
    Retry,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UserMessage,
)
from core.record.run_files import load_run, run_file
from core.run.run_request import RunRequest, StepSpec

LoadRun = Callable[[str], list[Event]]
"""A saved run's events by run id (the run files, by default)."""
MAX_LINKS = 100
"""Continuations of continuations followed back at most (a loop in hand-edited files ends)."""


def _saved_run(run_id: str) -> list[Event]:
    return load_run(run_file(run_id))


def continue_request(
    events: list[Event], step: int, text: str, load: LoadRun = _saved_run
) -> RunRequest:
    """A one-step run that goes on with the conversation of ``step`` (0-based) of the saved
    run ``events``, saying ``text``. Raises :class:`RunError` when that cannot be done.
    ``load`` reads the runs a continued run continues (their conversations come first)."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    if started is None:
        raise RunError("this file has no run_started event: it cannot be continued")
    begun = next((e for e in events if isinstance(e, StepStarted) and e.step == step), None)
    ended = next((e for e in events if isinstance(e, StepFinished) and e.step == step), None)
    where = f"step {step + 1} of run {started.run_id}"
    if begun is None or ended is None:
        raise RunError(f"{where} did not finish, so it cannot be continued")
    if begun.reused_from is not None:
        raise RunError(f"{where} was copied from run {begun.reused_from}; continue that one")
    if not text.strip():
        raise RunError("the follow-up is empty")
    if begun.backend in ("claude", "pi", "acp"):
        name = {"claude": "Claude Code", "pi": "pi", "acp": "ACP agent"}[begun.backend]
        if not ended.session:
            raise RunError(f"{where} has no recorded {name} session to continue")
        continues = Continuation(started.run_id, step, session=ended.session)
    elif begun.backend == "openai":
        messages = tuple(_history(events, step, load))
        continues = Continuation(started.run_id, step, messages=messages)
    else:
        raise RunError(
            f"{where} ran on {begun.backend or 'an unknown backend'}, whose steps cannot be "
            "continued"
        )
    spec = StepSpec(
        agent=begun.agent, task=text.strip(), cwd=begun.cwd, model=begun.model, continues=continues
    )
    return RunRequest(
        mode="single",
        steps=[spec],
        cwd=Path(started.cwd),
        backend=begun.backend,
        lineage=Lineage(run_id=started.run_id, step=step, kind="continue"),
    )


def _history(events: list[Event], step: int, load: LoadRun) -> list[dict[str, Any]]:
    """The whole conversation: a continued run's parents first, oldest first."""
    parts = [conversation(events, step)]
    for _ in range(MAX_LINKS):
        started = next((e for e in events if isinstance(e, RunStarted)), None)
        lineage = started.lineage if started is not None else None
        if lineage is None or lineage.kind != "continue":
            break
        try:
            events = load(lineage.run_id)
        except OSError as error:
            raise RunError(
                f"run {lineage.run_id}, which this run continues, cannot be read: "
                f"{error.strerror or error}"
            ) from None
        parts.append(conversation(events, lineage.step))
    return [message for part in reversed(parts) for message in part]


def conversation(events: list[Event], step: int) -> list[dict[str, Any]]:
    """Baton's own loop's conversation of ``step`` after its system prompt, rebuilt from its
    events as Chat Completions messages.

    The loop yields a response's text, then its ``usage``, then runs its tool calls; a
    ``retry`` drops the text of the failed attempt. So each ``usage`` closes an assistant
    message, the calls after it belong to that message, and their results follow it.

    A person's message is recorded when it was said (``user_message``) and joins the
    conversation where the loop says it delivered it (``messages_delivered``, before a
    request, after the tool results).
    """
    messages: list[dict[str, Any]] = []
    text = ""
    assistant: dict[str, Any] | None = None
    said: list[dict[str, Any]] = []  # not delivered yet
    for event in events:
        if event.step != step:
            continue
        if isinstance(event, StepStarted):
            messages.append({"role": "user", "content": event.task})
        elif isinstance(event, TextDelta) and event.parent_call_id is None:
            text += event.text
        elif isinstance(event, Retry):
            text = ""
        elif isinstance(event, Usage):
            assistant = {"role": "assistant", "content": text}
            messages.append(assistant)
            text = ""
        elif isinstance(event, ToolCallStarted) and assistant is not None:
            assistant["content"] = assistant["content"] or None
            call = {"name": event.tool, "arguments": json.dumps(event.arguments)}
            assistant.setdefault("tool_calls", []).append(
                {"id": event.call_id, "type": "function", "function": call}
            )
        elif isinstance(event, ToolCallFinished):
            messages.append(
                {"role": "tool", "tool_call_id": event.call_id, "content": event.result}
            )
        elif isinstance(event, UserMessage) and event.delivery == "steer":
            said.append({"role": "user", "content": event.text})
        elif isinstance(event, MessagesDelivered):
            messages.extend(said[: event.count])
            del said[: event.count]
    return messages
