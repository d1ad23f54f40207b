"""Runs exported to a real OTLP/HTTP receiver: the runner attaches the exporter by itself when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set; the bytes sent carry the whole trace (links and events
too) and no secret; a saved run is sent again as the same trace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.extras import extra_missing

try:
    import opentelemetry.sdk.trace  # noqa: F401
except ImportError as error:
    extra_missing("otel", error)

from core.config.settings import Settings
from core.record.run_files import load_run, run_file
from core.telemetry import export
from core.telemetry.switch import telemetry_config
from core.telemetry.trace_ids import step_span_id, trace_id
from tests.llm_server import LLMServer
from tests.otlp_sink import OtlpSink
from tests.trace_scenario import plant_secret, run_chain

pytestmark = pytest.mark.otel
SPANS = 11
"""The scenario's trace: the run, 3 steps, 5 model requests, 2 tool calls."""


@pytest.fixture
def sink(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpSink]:
    with OtlpSink() as started:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", started.endpoint)
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
        yield started
        export.shutdown()


async def test_the_runner_exports_when_the_endpoint_variable_is_set(
    sink: OtlpSink, llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    runner, finished, _ = await run_chain(llm_server, tmp_path, secret)
    assert finished.status == "ok"
    spans = sink.wait_for(SPANS)
    assert {s.trace_id for s in spans} == {f"{trace_id(runner.run_id):032x}"}
    planner = next(s for s in spans if s.name == "invoke_agent planner")
    assert planner.links == [
        (f"{step_span_id(runner.run_id, 1):016x}", {"baton.link.kind": "handoff"})
    ]
    bash = next(s for s in spans if s.name == "execute_tool bash")
    assert [name for name, _ in bash.events] == [
        "baton.approval.requested",
        "baton.approval.resolved",
    ]
    assert "deploy --key" in str(bash.attributes)  # content was opted in ...
    assert not any(secret.encode() in body for body in sink.raw)  # ... redacted


async def test_a_saved_run_is_sent_again_as_the_same_trace(
    sink: OtlpSink, llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    runner, _, _ = await run_chain(llm_server, tmp_path, secret)
    live = sorted((s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in sink.wait_for(SPANS))
    config = telemetry_config(Settings())
    assert config is not None
    assert export.send_run(load_run(run_file(runner.run_id)), config) == SPANS
    spans = sink.wait_for(2 * SPANS)
    again = sorted((s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in spans[SPANS:])
    assert again == live


def test_an_endpoint_that_refuses_is_an_error_with_its_address() -> None:
    config = telemetry_config(Settings(), {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    assert config is not None
    with pytest.raises(OSError, match=r"127\.0\.0\.1:9"):
        export.send_test_trace(config)


async def test_a_remote_batch_item_is_exported_once_by_the_supervisor(
    sink: OtlpSink, llm_server: LLMServer, tmp_path: Path
) -> None:
    """The worker's runner is unrecorded: the supervisor, which writes the run file, exports
    the run; the worker only passes its steps the trace context. One trace per item, once."""
    from core.config.settings import save_settings
    from tests.test_batch_seam import InProcessRemote, echo, run_batch

    save_settings(llm_server.settings())
    llm_server.responder = echo
    batch = await run_batch(llm_server.settings(), tmp_path, InProcessRemote())
    assert batch.counts() == {"ok": 2}
    per_item = 1 + 2 + 2  # scout-and-plan: the run, 2 steps, 1 request each
    spans = sink.wait_for(2 * per_item)
    assert export.flush()
    assert len(sink.spans) == len(spans) == 2 * per_item
    traces = {f"{trace_id(item.run_id):032x}" for item in batch.items}
    assert {s.trace_id for s in spans} == traces
    roots = [s for s in spans if s.parent_id is None]
    assert [s.attributes["baton.batch_id"] for s in roots] == [batch.id, batch.id]
