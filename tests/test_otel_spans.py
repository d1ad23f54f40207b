"""A run's trace as the SDK's in-memory exporter receives it: span names, parents, GenAI
attributes, hand-off links, approval events, times from the events, and no secret anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.extras import extra_missing

try:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
except ImportError as error:
    extra_missing("otel", error)

from core.config.settings import Settings
from core.model.events import Event
from core.record.run_files import load_run, run_file
from core.telemetry.export import otlp_json, trace_subscriber
from core.telemetry.spans import gen_ai_attributes_used, spans_of_run
from core.telemetry.switch import TelemetryConfig
from core.telemetry.trace_ids import step_span_id, trace_id
from tests.llm_server import LLMServer
from tests.trace_scenario import DENIAL, plant_secret, run_chain

pytestmark = pytest.mark.otel


def exported(capture: bool) -> tuple[InMemorySpanExporter, TelemetryConfig]:
    return InMemorySpanExporter(), TelemetryConfig("http://unused", None, capture)


async def traced_chain(
    server: LLMServer, folder: Path, secret: str, capture: bool = True
) -> tuple[str, list[ReadableSpan], list[Event]]:
    memory, config = exported(capture)
    subscriber = trace_subscriber(Settings(), config=config, processor=SimpleSpanProcessor(memory))
    assert subscriber is not None
    runner, result, events = await run_chain(server, folder, secret, [subscriber])
    assert result.status == "ok"
    return runner.run_id, list(memory.get_finished_spans()), events


def by_name(spans: list[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        named.setdefault(span.name, []).append(span)
    return named


async def test_a_chain_is_one_trace_of_workflow_agents_requests_and_tools(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    run_id, spans, _ = await traced_chain(llm_server, tmp_path, secret)
    named = by_name(spans)
    assert sorted(named) == [
        "chat test-model",
        "execute_tool bash",
        "execute_tool read",
        "invoke_agent planner",
        "invoke_agent scout",
        "invoke_agent worker",
        "invoke_workflow chain",
    ]
    assert len(named["chat test-model"]) == 5
    assert {span.context.trace_id for span in spans} == {trace_id(run_id)}
    (root,) = named["invoke_workflow chain"]
    assert root.parent is None
    assert root.attributes is not None
    assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    steps = [named[f"invoke_agent {agent}"][0] for agent in ("scout", "worker", "planner")]
    for number, step in enumerate(steps):
        assert step.parent is not None and step.parent.span_id == root.context.span_id
        assert step.context.span_id == step_span_id(run_id, number)
        assert step.attributes is not None
        assert step.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert step.attributes["gen_ai.request.model"] == "test-model"
        assert step.attributes["baton.backend"] == "openai"
    # Requests and tool calls are children of their step.
    scout = steps[0]
    children = {
        span.name for span in spans if span.parent and span.parent.span_id == scout.context.span_id
    }
    assert children == {"chat test-model", "execute_tool read"}
    first_chat = min(named["chat test-model"], key=lambda s: s.start_time or 0)
    assert first_chat.attributes is not None
    assert first_chat.attributes["gen_ai.usage.input_tokens"] == 120
    assert first_chat.attributes["gen_ai.usage.output_tokens"] == 20
    assert first_chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 40
    assert scout.attributes is not None and scout.attributes["gen_ai.usage.input_tokens"] == 280


async def test_decisions_are_attributes_approvals_events_and_hand_offs_links(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    run_id, spans, _ = await traced_chain(llm_server, tmp_path, secret)
    named = by_name(spans)
    (bash,) = named["execute_tool bash"]
    assert bash.attributes is not None
    assert bash.attributes["gen_ai.tool.name"] == "bash"
    assert bash.attributes["gen_ai.tool.call.id"]
    assert bash.attributes["baton.approval.decision"] == "deny"
    assert bash.attributes["baton.approval.decided_by"] == "person"
    assert bash.attributes["baton.approval.reason"] == DENIAL
    assert [event.name for event in bash.events] == [
        "baton.approval.requested",
        "baton.approval.resolved",
    ]
    assert not bash.status.is_ok
    (read,) = named["execute_tool read"]
    assert read.attributes is not None and read.attributes["baton.status"] == "ok"
    worker, planner = named["invoke_agent worker"][0], named["invoke_agent planner"][0]
    assert [(link.context.span_id, dict(link.attributes or {})) for link in worker.links] == [
        (step_span_id(run_id, 0), {"baton.link.kind": "handoff"})
    ]
    assert [link.context.span_id for link in planner.links] == [step_span_id(run_id, 1)]


async def test_no_secret_reaches_any_span_even_with_content_captured(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    _, spans, _ = await traced_chain(llm_server, tmp_path, secret, capture=True)
    everything = "\n".join(span.to_json() for span in spans)
    assert "Read notes.txt" in everything  # the task is there (content was asked for) ...
    assert "deploy --key" in everything
    assert secret not in everything  # ... without the key
    assert secret[-12:] not in everything


async def test_without_the_opt_in_no_message_content_is_exported(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    _, spans, _ = await traced_chain(llm_server, tmp_path, secret, capture=False)
    everything = "\n".join(span.to_json() for span in spans)
    for content in ("Read notes.txt", "ship on Monday", "deploy --key", DENIAL):
        assert content not in everything
    for span in spans:
        assert not set(span.attributes or {}) & {
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        }


async def test_a_saved_run_replays_into_the_same_trace(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    run_id, live, _ = await traced_chain(llm_server, tmp_path, secret)
    replayed = spans_of_run(load_run(run_file(run_id)), capture_content=True)

    def shape(spans: list[ReadableSpan]) -> list[tuple[object, ...]]:
        return sorted(
            (s.name, s.context.span_id, s.parent.span_id if s.parent else None, s.start_time,
             s.end_time, json.dumps(dict(s.attributes or {}), sort_keys=True))
            for s in spans
        )  # fmt: skip

    assert shape(replayed) == shape(live)


async def test_otlp_json_holds_the_trace_with_hex_ids(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    run_id, _, events = await traced_chain(llm_server, tmp_path, secret)
    document = json.loads(otlp_json(events, capture_content=True))
    spans = [s for r in document["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
    assert len(spans) == 11  # the run, 3 steps, 5 requests, 2 tool calls
    assert {s["traceId"] for s in spans} == {f"{trace_id(run_id):032x}"}
    worker = next(s for s in spans if s["name"] == "invoke_agent worker")
    assert worker["links"][0]["spanId"] == f"{step_span_id(run_id, 0):016x}"
    assert secret not in json.dumps(document)


def test_every_gen_ai_attribute_exists_in_the_semantic_conventions() -> None:
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes

    known = {
        value
        for name, value in vars(gen_ai_attributes).items()
        if name.startswith("GEN_AI_") and isinstance(value, str)
    }
    assert set(gen_ai_attributes_used()) <= known
    operations = {v.value for v in gen_ai_attributes.GenAiOperationNameValues}
    assert {"invoke_workflow", "invoke_agent", "chat", "execute_tool"} <= operations


async def test_every_gen_ai_attribute_a_run_emits_is_listed(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    _, spans, _ = await traced_chain(llm_server, tmp_path, secret, capture=True)
    emitted = {
        key for span in spans for key in (span.attributes or {}) if key.startswith("gen_ai.")
    }
    assert emitted <= set(gen_ai_attributes_used())
