"""The real receiver: Arize Phoenix (pinned in .ci/run, in its own venv under
``.tools/phoenix-venv``) on 127.0.0.1 with nothing reaching outside, receives a run over
OTLP/HTTP, and its REST API gives the trace back: span names, parent and child, the GenAI
attributes, the decisions and approval events, and no secret anywhere.

Phoenix drops span links (always null when read back), so the hand-off links are asserted
where they survive: the SDK's in-memory exporter (tests/test_otel_spans.py) and a real
OTLP/HTTP receiver that keeps every field (tests/test_otel_export.py).

Without Phoenix the test skips, except under ``CI=true``, where it must run. Its gRPC
listener binds every interface whatever ``PHOENIX_HOST`` says, so Baton sends over HTTP and
the gRPC port is only moved off the default."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.extras import extra_missing

try:
    import opentelemetry.sdk.trace  # noqa: F401
except ImportError as error:
    extra_missing("otel", error)

from core.telemetry import export
from core.telemetry.trace_ids import trace_id
from tests.llm_server import LLMServer
from tests.trace_scenario import DENIAL, plant_secret, run_chain
from tests.waiting import wait_until

pytestmark = pytest.mark.otel
PHOENIX = Path(__file__).resolve().parents[1] / ".tools" / "phoenix-venv" / "bin" / "phoenix"
START_S = 240.0
"""Phoenix serves after 19–34 s on a quiet machine; a busy 2-core one gets much longer."""
PROJECT = "baton-tests"
QUIET = {
    "PHOENIX_TELEMETRY_ENABLED": "false",
    "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
    "PHOENIX_ALLOWED_SANDBOX_PROVIDERS": "NONE",
}
"""Without these Phoenix reaches out at start (measured: the field notes' "An OTLP receiver")."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    executable = Path(os.environ.get("BATON_PHOENIX_BIN", PHOENIX))
    if not executable.is_file():
        reason = f"Arize Phoenix is not installed at {executable} (.ci/run installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI=true: the receiver test must run, not skip")
        pytest.skip(reason)
    port = _free_port()
    folder = tmp_path_factory.mktemp("phoenix")
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))},
        **QUIET,
        "PHOENIX_WORKING_DIR": str(folder),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
    }
    log = (folder / "phoenix.log").open("wb")
    process = subprocess.Popen(
        [str(executable), "serve"], env=environment, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if process.poll() is not None:
            raise RuntimeError((folder / "phoenix.log").read_text(errors="replace")[-2000:])
        try:
            return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(healthy, "Phoenix did not serve /healthz", START_S)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _spans_of(url: str, trace: str) -> list[dict[str, Any]]:
    answer = httpx.get(
        f"{url}/v1/projects/{PROJECT}/spans", params={"trace_id": trace, "limit": 100}, timeout=30
    )
    if answer.status_code == 404:  # the project appears with its first span
        return []
    answer.raise_for_status()
    data: list[dict[str, Any]] = answer.json()["data"]
    return data


async def test_phoenix_receives_the_chain_as_one_trace(
    phoenix: str, llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = plant_secret(monkeypatch)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix)
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={PROJECT}")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    try:
        runner, finished, _ = await run_chain(llm_server, tmp_path, secret)
        assert finished.status == "ok"
        assert export.flush()
    finally:
        export.shutdown()
    trace = f"{trace_id(runner.run_id):032x}"
    spans: list[dict[str, Any]] = []

    def listed() -> bool:
        spans[:] = _spans_of(phoenix, trace)
        return len(spans) >= 11

    wait_until(listed, "Phoenix did not list the run's 11 spans")
    assert len(spans) == 11
    names = sorted(span["name"] for span in spans)
    assert names == sorted(
        ["invoke_workflow chain"]
        + [f"invoke_agent {agent}" for agent in ("scout", "worker", "planner")]
        + ["chat test-model"] * 5
        + ["execute_tool read", "execute_tool bash"]
    )
    by_id = {span["context"]["span_id"]: span for span in spans}
    (root,) = [span for span in spans if span["parent_id"] is None]
    assert root["name"] == "invoke_workflow chain"
    for span in spans:
        if span["name"].startswith("invoke_agent"):
            assert span["parent_id"] == root["context"]["span_id"]
        elif span is not root:
            assert by_id[span["parent_id"]]["name"].startswith("invoke_agent")
    scout = next(s for s in spans if s["name"] == "invoke_agent scout")
    read = next(s for s in spans if s["name"] == "execute_tool read")
    assert read["parent_id"] == scout["context"]["span_id"]
    assert scout["attributes"]["gen_ai.agent.name"] == "scout"
    assert scout["attributes"]["gen_ai.request.model"] == "test-model"
    assert scout["attributes"]["gen_ai.usage.input_tokens"] == 280
    chats = [s for s in spans if s["name"] == "chat test-model"]
    assert sorted(c["attributes"]["gen_ai.usage.output_tokens"] for c in chats) == [
        8, 12, 20, 25, 30,
    ]  # fmt: skip
    bash = next(s for s in spans if s["name"] == "execute_tool bash")
    assert bash["attributes"]["gen_ai.tool.name"] == "bash"
    assert bash["attributes"]["baton.approval.decision"] == "deny"
    assert bash["attributes"]["baton.approval.decided_by"] == "person"
    assert bash["attributes"]["baton.approval.reason"] == DENIAL
    assert [event["name"] for event in bash["events"]] == [
        "baton.approval.requested",
        "baton.approval.resolved",
    ]
    everything = json.dumps(spans)
    assert "deploy --key" in everything  # the content was opted in ...
    assert secret not in everything  # ... and redacted
