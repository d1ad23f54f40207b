"""When runs become traces, and what stays out of them: the standard ``OTEL_*`` variables and
Settings ▸ Telemetry decide; with neither, the OpenTelemetry SDK is never imported. The OTLP
headers (a telemetry service's key) are a secret like any API key."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.config.settings import Settings, TelemetrySettings
from core.safety.environment import cli_environment, scrubbed_env
from core.safety.redaction import Redactor
from core.telemetry.switch import telemetry_config, traces_url
from core.telemetry.trace_ids import step_span_id, trace_environment, trace_id, traceparent
from tests.llm_server import LLMServer, Reply

REPO = Path(__file__).resolve().parents[1]
ON = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}


def test_off_without_a_variable_or_the_switch() -> None:
    assert telemetry_config(Settings(), {}) is None
    assert telemetry_config(Settings(), {"OTEL_SERVICE_NAME": "x"}) is None


def test_the_standard_endpoint_variables_turn_it_on() -> None:
    config = telemetry_config(Settings(), ON)
    assert config is not None and config.traces_url == "http://127.0.0.1:4318/v1/traces"
    specific = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h:1/custom", **ON}
    config = telemetry_config(Settings(), specific)
    assert config is not None and config.traces_url == "http://h:1/custom"


def test_sdk_disabled_and_exporter_none_keep_it_off() -> None:
    assert telemetry_config(Settings(), {**ON, "OTEL_SDK_DISABLED": "true"}) is None
    assert telemetry_config(Settings(), {**ON, "OTEL_TRACES_EXPORTER": "none"}) is None
    switched = Settings(telemetry=TelemetrySettings(enabled=True, endpoint="http://h:6006"))
    assert telemetry_config(switched, {"OTEL_SDK_DISABLED": "true"}) is None


def test_the_settings_switch_turns_it_on_with_its_endpoint() -> None:
    switched = Settings(telemetry=TelemetrySettings(enabled=True, endpoint="http://h:6006/"))
    config = telemetry_config(switched, {})
    assert config is not None and config.traces_url == "http://h:6006/v1/traces"
    assert not config.capture_content
    without_endpoint = Settings(telemetry=TelemetrySettings(enabled=True))
    assert telemetry_config(without_endpoint, {}) is None
    assert traces_url("http://h:6006/v1/traces") == "http://h:6006/v1/traces"


@pytest.mark.parametrize(
    ("value", "captured"),
    [("true", True), ("SPAN_ONLY", True), ("span_and_event", True), ("false", False),
     ("NO_CONTENT", False), ("", False)],
)  # fmt: skip
def test_message_content_only_with_the_conventions_opt_in(value: str, captured: bool) -> None:
    environ = {**ON, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": value}
    config = telemetry_config(Settings(), environ)
    assert config is not None and config.capture_content is captured


def test_a_step_s_traceparent_names_its_span_in_the_run_s_trace() -> None:
    parent = traceparent("run-1", 2)
    version, trace, span, flags = parent.split("-")
    assert (version, flags) == ("00", "01")
    assert int(trace, 16) == trace_id("run-1") and int(span, 16) == step_span_id("run-1", 2)
    assert trace_id("run-1") != trace_id("run-2")


def test_a_cli_step_never_gets_the_exporter_s_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack: the telemetry key in OTEL_EXPORTER_OTLP_HEADERS, read by a CLI's own tools."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "api_key=otel-secret-123")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "authorization=Bearer%20tok-4567890abc")
    config = telemetry_config(Settings())
    assert config is None  # headers alone name no endpoint
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    config = telemetry_config(Settings())
    assert config is not None
    environment = cli_environment((), ()) | trace_environment("r", 0, config)
    assert "otel-secret-123" not in str(environment) and "tok-4567890abc" not in str(environment)
    assert "OTEL_EXPORTER_OTLP_HEADERS" not in scrubbed_env()
    redactor = Redactor.from_environment()
    assert "otel-secret-123" not in redactor.scrub("key otel-secret-123")
    assert "tok-4567890abc" not in redactor.scrub("Bearer tok-4567890abc and tok-4567890abc")


def test_with_traces_off_a_run_never_imports_opentelemetry(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """A real run in a fresh interpreter (nothing imported by other tests), no OTEL_*."""
    llm_server.queue(Reply.answer("done"))
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from core.config.settings import Settings
        from core.run.run_request import RunRequest, StepSpec
        from core.run.runner import Runner
        settings = Settings.model_validate({{
            "providers": [{{"name": "test", "base_url": {llm_server.base_url!r}}}],
            "default_model": "test-model",
        }})
        request = RunRequest(mode="single", steps=[StepSpec(agent="planner", task="hi")],
                             cwd=Path({str(tmp_path)!r}))
        finished = asyncio.run(Runner(request, settings=settings).run())
        assert finished.status == "ok", finished.error
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    environment["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environment, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_without_the_extra_a_run_with_traces_asked_for_warns_and_runs(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """OTEL_EXPORTER_OTLP_ENDPOINT set on a machine without ``baton[otel]``: the run goes on,
    and the log says how to install the extra (the SDK blocked in a fresh interpreter)."""
    llm_server.queue(Reply.answer("done"))
    script = textwrap.dedent(
        f"""
        import asyncio, importlib.abc, logging, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] == "opentelemetry":
                    raise ModuleNotFoundError(name, name=name)
        sys.meta_path.insert(0, Block())
        logging.basicConfig(level=logging.WARNING)
        from pathlib import Path
        from core.config.settings import Settings
        from core.run.run_request import RunRequest, StepSpec
        from core.run.runner import Runner
        settings = Settings.model_validate({{
            "providers": [{{"name": "test", "base_url": {llm_server.base_url!r}}}],
            "default_model": "test-model",
        }})
        request = RunRequest(mode="single", steps=[StepSpec(agent="planner", task="hi")],
                             cwd=Path({str(tmp_path)!r}))
        finished = asyncio.run(Runner(request, settings=settings).run())
        print(finished.status)
        """
    )
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    environment.update(PYTHONPATH=str(REPO), OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environment, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "ok"
    assert "pip install 'baton[otel]'" in done.stderr
