"""Executing one tool call the model asked for, as events: Baton's own loop's tool side.

A call goes: ``tool_call_started`` → arguments parsed and validated against the tool's
``Params`` → the approval gate (which emits its own approval events) → the tool runs, its
streamed output becoming ``tool_call_output`` events as it arrives → ``tool_call_finished``.

Every problem the model can do something about — an unknown tool, arguments that are not JSON
or fail validation, a denial, a :class:`~core.tools.base.ToolError` — ends the call with an
error *result*, never an exception: :attr:`ToolOutcome.result` is what goes back to the model
in the ``tool`` message, and the step goes on.

Cancellation (the step's task cancelled) cancels the running tool and waits for it to finish
its own cleanup (bash kills its process group) before propagating.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from core.backends.base import StepContext
from core.config.handoff_files import readable_handoff_dir
from core.config.validation import format_validation_error
from core.model.events import (
    Event,
    Log,
    ToolAttachment,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
)
from core.safety.environment import known_key_names
from core.tools.base import Provenance, Tool, ToolContext, ToolError


@dataclass
class ToolOutcome:
    """Filled in by :func:`run_tool_call`; ``result`` is the text the model reads."""

    status: Literal["ok", "error"] = "error"
    result: str = ""
    attachments: list[ToolAttachment] = field(default_factory=list)
    """What the result holds beyond text (an MCP tool's images), for the step pane."""


async def run_tool_call(
    ctx: StepContext,
    call_id: str,
    name: str,
    raw_arguments: str,
    offered: Mapping[str, Tool],
    outcome: ToolOutcome,
) -> AsyncGenerator[Event, None]:
    """Yield the events of one call; ``offered`` are the tools this step may use."""
    arguments, problem = parse_arguments(raw_arguments)
    shown = arguments if problem is None else {"_raw": raw_arguments}
    yield ctx.make(ToolCallStarted, call_id=call_id, tool=name, arguments=shown)
    tool = offered.get(name)
    params: BaseModel | None = None
    if tool is None:
        problem = f"unknown tool '{name}' (available tools: {', '.join(offered) or 'none'})"
    elif problem is None:
        params, problem = validate_arguments(tool, arguments)
    if tool is None or params is None:
        outcome.result = problem or "invalid call"
        yield ctx.make(ToolCallFinished, call_id=call_id, status="error", result=outcome.result)
        return
    answer = await ctx.approvals.check(
        run_id=ctx.run_id,
        step=ctx.step,
        agent=ctx.agent.name,
        tool=tool.name,
        call_id=call_id,
        arguments=arguments,
        cwd=str(ctx.cwd),
        action=tool.approval_action(params, _caller(ctx, call_id)),
        note=tool.approval_note(),
    )
    if not answer.approved:
        outcome.result = answer.denial_message()
        yield ctx.make(ToolCallFinished, call_id=call_id, status="error", result=outcome.result)
        return
    if answer.updated_arguments is not None:  # a person edited the call before approving
        params, problem = validate_arguments(tool, answer.updated_arguments)
        if params is None:
            outcome.result = problem or "invalid call"
            yield ctx.make(ToolCallFinished, call_id=call_id, status="error", result=outcome.result)
            return
    started = time.monotonic()
    async with aclosing(_execute(ctx, tool, params, call_id, outcome)) as events:
        async for event in events:
            yield event
    yield ctx.make(
        ToolCallFinished,
        call_id=call_id,
        status=outcome.status,
        result=outcome.result,
        duration_ms=round((time.monotonic() - started) * 1000, 1),
        attachments=outcome.attachments,
    )


async def _execute(
    ctx: StepContext, tool: Tool, params: BaseModel, call_id: str, outcome: ToolOutcome
) -> AsyncGenerator[Event, None]:
    """Run the tool as a task, so the output it emits reaches the stream while it runs."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    chunks: asyncio.Queue[str | None] = asyncio.Queue()

    def emit_output(chunk: str) -> None:
        if threading.get_ident() == loop_thread:
            chunks.put_nowait(chunk)
        else:  # a tool reading a pipe in a worker thread
            loop.call_soon_threadsafe(chunks.put_nowait, chunk)

    tool_ctx = ToolContext(
        cwd=ctx.cwd,
        limits=ctx.settings.limits,
        emit_output=emit_output,
        provenance=_caller(ctx, call_id),
        scrub=ctx.scrub,
        handoff_dir=readable_handoff_dir(ctx.run_id),
        skill_folders=ctx.skill_folders,
        attach=outcome.attachments.extend,
        **confinement(ctx),
    )
    task = asyncio.create_task(tool.run(params, tool_ctx))
    task.add_done_callback(lambda _: chunks.put_nowait(None))
    try:
        while (chunk := await chunks.get()) is not None:
            if chunk:
                yield ctx.make(ToolCallOutput, call_id=call_id, chunk=chunk)
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
    if task.cancelled():
        outcome.status, outcome.result = "error", f"the {tool.name} tool was cancelled"
        return
    error = task.exception()
    if error is None:
        outcome.status, outcome.result = "ok", task.result()
    elif isinstance(error, ToolError):
        outcome.status, outcome.result = "error", str(error)
    else:  # a bug in the tool: the model still gets an answer, the run file the details
        detail = f"{type(error).__name__}: {error}"
        outcome.status = "error"
        outcome.result = f"the {tool.name} tool failed unexpectedly ({detail})"
        yield ctx.make(Log, level="error", message=f"tool {tool.name} crashed: {detail}")


def _caller(ctx: StepContext, call_id: str) -> Provenance:
    return Provenance(run_id=ctx.run_id, step=ctx.step, agent=ctx.agent.name, call_id=call_id)


def confinement(ctx: StepContext) -> dict[str, Any]:
    """The sandbox and environment fields of a :class:`ToolContext`: the run's settings,
    narrowed by the agent's frontmatter (``sandbox: {network: false}``, ``env: [...]``)."""
    sandbox = ctx.settings.sandbox
    network = sandbox.network and ctx.agent.network
    return {
        "sandbox": sandbox.model_copy(update={"network": network}),
        "env_allow": ctx.agent.env,
        "secret_env": known_key_names(ctx.settings),
    }


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """``(arguments, problem)``; the problem is a sentence for the model."""
    if not raw.strip():
        return {}, None  # some models send nothing for a call without parameters
    try:
        value = json.loads(raw)
    except ValueError as error:
        return {}, f"arguments are not valid JSON: {error}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def validate_arguments(
    tool: Tool, arguments: Mapping[str, Any]
) -> tuple[BaseModel | None, str | None]:
    try:
        return tool.Params.model_validate(dict(arguments)), None
    except ValidationError as error:
        return None, f"invalid arguments for {tool.name}: {format_validation_error(error)}"
