"""Trace context reaches the real CLIs: Claude Code's own spans join the step's span in Baton's
trace (it reads ``TRACEPARENT`` when its tracing is on), sent to the same OTLP endpoint."""

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
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.telemetry import export
from core.telemetry.trace_ids import step_span_id, trace_id
from tests import real_clis
from tests.anthropic_server import AnthropicServer, reply
from tests.otlp_sink import OtlpSink, ReceivedSpan

pytestmark = [pytest.mark.otel, pytest.mark.integration]


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as started:
        yield started
    export.shutdown()


async def run_claude_step(
    claude: Path, sink: OtlpSink, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """One Claude Code step with traces on (to ``sink``); returns the run id."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.endpoint)
    with AnthropicServer() as server:
        real_clis.point_claude_at(server.url, monkeypatch)
        server.script = [reply("Nothing to do.")]
        runner = Runner(
            RunRequest(
                mode="single",
                steps=[StepSpec(agent="planner", task="Say hello")],
                cwd=folder,
                backend="claude",
            ),
            settings=Settings(claude_path=str(claude)),
        )
        finished = await runner.run()
    assert finished.status == "ok", finished.error
    return runner.run_id


@pytest.mark.parametrize("cli", real_clis.CLAUDE_CLIS, ids=lambda cli: cli.name)
async def test_a_claude_code_step_runs_with_traces_on(
    cli: real_clis.Cli, sink: OtlpSink, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code 2.0 refuses to start with ``OTEL_METRICS_EXPORTER=none`` when its telemetry
    is on (measured): the step's environment must not name one."""
    run_id = await run_claude_step(real_clis.find(cli, monkeypatch), sink, tmp_path, monkeypatch)
    spans = sink.wait_for(2)
    assert f"{trace_id(run_id):032x}" in {s.trace_id for s in spans}


async def test_claude_code_s_spans_nest_under_the_step(
    sink: OtlpSink, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest Claude Code reads TRACEPARENT (2.0.76 sends no spans of its own)."""
    claude = real_clis.find(real_clis.CLAUDE_CLIS[1], monkeypatch)
    run_id = await run_claude_step(claude, sink, tmp_path, monkeypatch)
    step = f"{step_span_id(run_id, 0):016x}"

    def theirs() -> list[ReceivedSpan]:
        return [s for s in sink.spans if s.name.startswith("claude_code.")]

    sink.wait_until(lambda spans: any(s.name.startswith("claude_code.") for s in spans))
    sink.wait_until(lambda spans: any(s.parent_id is None for s in spans))  # Baton's root
    spans = sink.spans
    assert theirs(), f"Claude Code sent no span ({sorted(s.name for s in spans)})"
    assert {s.trace_id for s in spans} == {f"{trace_id(run_id):032x}"}
    assert step in {s.parent_id for s in theirs()}
    assert set(sink.paths) == {"/v1/traces"}  # no metrics or logs sent to a traces receiver
