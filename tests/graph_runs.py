"""Helpers for graph-run tests: run a graph preset's text against the scripted server, and
answer by agent (each built-in agent's system prompt says who it is)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from core.config.settings import Settings
from core.definitions.agents import discover_agents
from core.definitions.presets import parse_preset_text
from core.model.events import Event
from core.run.gates import GateAsker
from core.run.run_request import request_from_preset
from core.run.runner import Runner
from tests.llm_server import LLMServer, Reply, last_user_text


class EventLog(list[Event]):
    """A run's events as it publishes them, with a wake-up for a test waiting on the next one
    (a gate appearing, say) instead of a poll."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()

    def append(self, event: Event) -> None:
        super().append(event)
        self.arrived.set()

    async def next_arrival(self, run: asyncio.Task[Any]) -> None:
        """Return when another event is published, or when ``run`` ends."""
        self.arrived.clear()
        arrival = asyncio.ensure_future(self.arrived.wait())
        try:
            await asyncio.wait({run, arrival}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            arrival.cancel()


def agent_of(body: Mapping[str, Any]) -> str:
    system = str((body.get("messages") or [{}])[0].get("content") or "")
    for name in ("reviewer", "worker", "planner", "scout"):
        if f"You are a {name}." in system:
            return name
    return "?"


def review(*severities: str) -> str:
    """A reviewer's answer (``output: review``) with one issue per severity given."""
    issues = [{"severity": s, "description": f"a {s} problem"} for s in severities]
    return "```json\n" + json.dumps({"passed": not issues, "issues": issues}) + "\n```"


def graph_runner(
    server: LLMServer,
    text: str,
    folder: Path,
    *,
    args: tuple[str, ...] = ("the task",),
    settings: Settings | None = None,
    gate_asker: GateAsker | None = None,
    **options: Any,
) -> tuple[Runner, EventLog]:
    preset = parse_preset_text(text)
    agents = discover_agents(folder, "user")
    request = request_from_preset(preset, list(args), folder, scope="user", **options)
    events = EventLog()
    runner = Runner(
        request,
        settings=settings or server.settings(),
        listeners=[events.append],
        agents=agents,
        gate_asker=gate_asker,
    )
    return runner, events


def by_agent(answers: Mapping[str, Callable[[str], str]]) -> Callable[[dict[str, Any]], Reply]:
    """A responder: each agent's answer made from the task it was given."""

    def respond(body: dict[str, Any]) -> Reply:
        return Reply.answer(answers[agent_of(body)](last_user_text(body)))

    return respond
