"""Trace context reaches the real CLIs: Claude Code's own spans join the step's span in Baton's
trace (it reads ``TRACEPARENT`` when its tracing is on), sent to the same OTLP endpoint."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import opentelemetry.sdk.trace  # noqa: F401
except ImportError:
    if os.environ.get("BATON_REQUIRE_EXTRAS") == "1":
        raise
    pytest.skip(
        "the otel extra is not installed (pip install 'baton[otel]')", allow_module_level=True
    )

from core.config.settings import Settings
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.telemetry import export
from core.telemetry.trace_ids import step_span_id, trace_id
from tests import real_clis
from tests.anthropic_server import AnthropicServer, reply
from tests.otlp_sink import OtlpSink

pytestmark = [pytest.mark.otel, pytest.mark.integration]


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as started:
        yield started
    export.shutdown()


@pytest.mark.parametrize("cli", real_clis.CLAUDE_CLIS[1:], ids=lambda cli: cli.name)
async def test_claude_code_s_spans_nest_under_the_step(
    cli: real_clis.Cli, sink: OtlpSink, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = real_clis.find(cli, monkeypatch)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.endpoint)
    with AnthropicServer() as server:
        real_clis.point_claude_at(server.url, monkeypatch)
        server.script = [reply("Nothing to do.")]
        runner = Runner(
            RunRequest(
                mode="single",
                steps=[StepSpec(agent="planner", task="Say hello")],
                cwd=tmp_path,
                backend="claude",
            ),
            settings=Settings(claude_path=str(claude)),
        )
        finished = await runner.run()
    assert finished.status == "ok", finished.error
    step = f"{step_span_id(runner.run_id, 0):016x}"
    ours = {"invoke_workflow single", "invoke_agent planner"}
    spans = sink.wait_for(3)
    theirs = [s for s in spans if s.name not in ours]
    print(sorted((s.name, s.parent_id) for s in spans))
    assert theirs, "Claude Code sent no span"
    assert {s.trace_id for s in spans} == {f"{trace_id(runner.run_id):032x}"}
    assert step in {s.parent_id for s in theirs}
