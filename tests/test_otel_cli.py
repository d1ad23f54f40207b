"""``baton runs export --format otlp-json`` and ``baton runs send-traces``: saved runs as the
same traces a live export would have sent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.extras import extra_missing

try:
    import opentelemetry.sdk.trace  # noqa: F401
except ImportError as error:
    extra_missing("otel", error)

from core.cli import main
from core.telemetry import export
from core.telemetry.trace_ids import trace_id
from tests.llm_server import LLMServer
from tests.otlp_sink import OtlpSink
from tests.trace_scenario import plant_secret, run_chain

pytestmark = pytest.mark.otel


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as started:
        yield started
        export.shutdown()


async def test_export_writes_the_trace_as_otlp_json(
    llm_server: LLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secret = plant_secret(monkeypatch)
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    runner, _, _ = await run_chain(llm_server, tmp_path, secret)
    target = tmp_path / "trace.json"
    assert main(["runs", "export", runner.run_id, "--format", "otlp-json", "-o", str(target)]) == 0
    assert f"Wrote run {runner.run_id}" in capsys.readouterr().out
    text = target.read_text(encoding="utf-8")
    document = json.loads(text)
    (resource,) = document["resourceSpans"]
    names = {s["name"] for scope in resource["scopeSpans"] for s in scope["spans"]}
    assert "invoke_workflow chain" in names and "execute_tool bash" in names
    assert {"key": "service.name", "value": {"stringValue": "baton"}} in resource["resource"][
        "attributes"
    ]
    assert f"{trace_id(runner.run_id):032x}" in text
    assert "Read notes.txt" in text and secret not in text


async def test_send_traces_sends_named_runs_and_runs_since_a_date(
    sink: OtlpSink,
    llm_server: LLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secret = plant_secret(monkeypatch)
    runner, _, _ = await run_chain(llm_server, tmp_path, secret)  # recorded, traces off
    assert sink.spans == []
    assert main(["runs", "send-traces", runner.run_id]) == 2
    assert "traces are off" in capsys.readouterr().err
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.endpoint)
    assert main(["runs", "send-traces", runner.run_id]) == 0
    assert f"{runner.run_id}: sent 11 spans to {sink.endpoint}/v1/traces" in capsys.readouterr().out
    assert main(["runs", "send-traces", "--since", "2000-01-01"]) == 0
    spans = sink.wait_for(22)
    assert {s.trace_id for s in spans} == {f"{trace_id(runner.run_id):032x}"}
    assert not any(secret.encode() in body for body in sink.raw)
    assert main(["runs", "send-traces", "--since", "yesterday"]) == 2
    assert main(["runs", "send-traces"]) == 2
