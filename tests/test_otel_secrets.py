"""Traces carry no secret, even with content capture on and even from events nobody redacted
before: an MCP server's literal header value in a tool call's arguments, its result, an
approval rule quoting it, the step's answer — none reaches a span. The OTLP endpoint's own
credentials are never shown, logged or handed to a CLI step."""

from __future__ import annotations

import json

import pytest

from tests.extras import extra_missing

try:
    import opentelemetry.sdk.trace  # noqa: F401
except ImportError as error:
    extra_missing("otel", error)

from core.config import paths
from core.config.settings import Settings, TelemetrySettings
from core.model.events import (
    ApprovalResolved,
    Event,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    ToolCallFinished,
    ToolCallStarted,
)
from core.safety.redaction import Redactor
from core.telemetry.export import otlp_json
from core.telemetry.switch import telemetry_config
from core.telemetry.trace_ids import trace_environment

pytestmark = pytest.mark.otel
TOKEN = "mcp-tok-4f3e2d1c0b9a8f7e6d5c"
PASSWORD = "otlp-pass-9a8b7c6d5e4f3a2b1c0d"


def test_attack_no_mcp_secret_reaches_a_span_with_content_capture_on() -> None:
    (paths.config_dir()).mkdir(parents=True, exist_ok=True)
    server = {"type": "http", "url": "https://mcp.example.com/mcp"}
    server["headers"] = {"Authorization": f"Bearer {TOKEN}"}  # type: ignore[assignment]
    (paths.config_dir() / "mcp.json").write_text(json.dumps({"mcpServers": {"t": server}}))
    run = "r-otel-secret"
    events: list[Event] = [
        RunStarted(
            run_id=run, mode="single", steps=[PlannedStep(agent="a", task="t", cwd=".")],
            cwd=".", started_at="2026-01-01T00:00:00+00:00",
        ),
        StepStarted(run_id=run, step=0, ts=0.1, agent="a", task=f"use {TOKEN}", cwd="."),
        ToolCallStarted(
            run_id=run, step=0, ts=0.2, call_id="c1", tool="bash",
            arguments={"command": f"curl -H 'Authorization: Bearer {TOKEN}' x"},
        ),
        ApprovalResolved(
            run_id=run, step=0, ts=0.25, request_id="q1", decision="approve", call_id="c1",
            tool="bash", decided_by="rule", rule=f"allow Bash(curl -H {TOKEN}:*)",
            added_rule=f"allow Bash(curl -H {TOKEN}:*)",
        ),
        ToolCallFinished(run_id=run, step=0, ts=0.3, call_id="c1", status="ok", result=TOKEN),
        StepFinished(run_id=run, step=0, ts=0.4, status="ok", output=f"the key is {TOKEN}"),
        RunFinished(run_id=run, ts=0.5, status="ok"),
    ]  # fmt: skip
    document = otlp_json(events, capture_content=True)
    assert "invoke_agent a" in document and "allow Bash(curl -H [redacted]" in document
    assert TOKEN not in document


def test_attack_the_endpoint_password_is_never_shown_logged_or_passed_on() -> None:
    endpoint = f"https://bot:{PASSWORD}@collector.example.com"
    settings = Settings(telemetry=TelemetrySettings(enabled=True, endpoint=endpoint))
    config = telemetry_config(settings, environ={})
    assert config is not None and config.traces_url is not None
    assert PASSWORD in config.traces_url  # the exporter itself gets the address whole
    assert config.describe() == "https://collector.example.com/v1/traces"
    assert PASSWORD not in repr(config)
    step_env = trace_environment("r1", 0, config)
    assert PASSWORD not in json.dumps(step_env)
    assert step_env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == config.describe()
    assert PASSWORD not in Redactor.for_settings(settings).scrub(f"failed: {endpoint}")
    assert PASSWORD not in Redactor.for_settings(settings).scrub(f"the password is {PASSWORD}")
