"""Screenshot of a Baton run in Arize Phoenix for the Traces guide (``docs/guide/traces.md``).

Starts Phoenix (``.tools/phoenix-venv``, as ``.ci/run`` installs it) on 127.0.0.1 with nothing
reaching outside, runs the trace tests' 3-step chain (scout → worker → planner: a read, a
denied bash call, two hand-offs) against the scripted model with traces on, then opens the
run's trace in Phoenix's own UI in headless Chromium and saves what it shows::

    .venv/bin/python docs/make_traces_screenshot.py [OUTPUT.png]

The default output is ``docs/screenshots/traces-phoenix.png``. Needs the ``otel`` extra, the
Phoenix venv and ``chromium`` on PATH.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import scratch_home  # noqa: E402

SCRATCH = scratch_home("baton-traces-demo")

import httpx  # noqa: E402

from core.telemetry import export  # noqa: E402
from core.telemetry.trace_ids import trace_id  # noqa: E402
from tests.llm_server import LLMServer  # noqa: E402
from tests.test_otel_phoenix import PHOENIX, QUIET  # noqa: E402
from tests.trace_scenario import KEY_VARIABLE, run_chain  # noqa: E402

PROJECT = "baton"
WIDTH, HEIGHT = 1440, 900


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait(condition: object, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up after {limit_s:.0f} s")
        threading.Event().wait(0.3)


def healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def main() -> None:
    default = ROOT / "docs/screenshots/traces-phoenix.png"
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        **QUIET,
        "PHOENIX_WORKING_DIR": str(SCRATCH / "phoenix"),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
    }
    phoenix = subprocess.Popen(
        [str(PHOENIX), "serve"], env=environment, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait(lambda: healthy(url), 240)
        os.environ.update(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": url,
                "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT}",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
                KEY_VARIABLE: "sk-demo-0123456789abcdef0123",
            }
        )
        folder = Path(tempfile.mkdtemp(prefix="checkout-", dir=SCRATCH))
        with LLMServer() as server:
            runner, _, _ = asyncio.run(run_chain(server, folder, os.environ[KEY_VARIABLE]))
        export.flush()
        export.shutdown()
        trace = f"{trace_id(runner.run_id):032x}"

        def project_id() -> str | None:
            projects = httpx.get(f"{url}/v1/projects", timeout=30).json()["data"]
            return next((p["id"] for p in projects if p["name"] == PROJECT), None)

        wait(project_id, 60)
        project = project_id()
        spans = httpx.get(
            f"{url}/v1/projects/{PROJECT}/spans", params={"trace_id": trace}, timeout=30
        ).json()["data"]
        denied = next(s["id"] for s in spans if s["name"] == "execute_tool bash")
        # The denied call selected: its decision and who decided show on the right.
        page = f"{url}/projects/{project}/traces/{trace}?selectedSpanNodeId={denied}"
        print(f"trace {trace}: {page}")
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser is None:
            raise SystemExit("chromium is not on PATH (apt-get install chromium)")
        output.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--no-first-run", "--disable-extensions", "--disable-background-networking",
                f"--user-data-dir={SCRATCH / 'chromium'}", f"--window-size={WIDTH},{HEIGHT}",
                "--virtual-time-budget=20000", f"--screenshot={output}", page,
            ],
            check=True, capture_output=True, timeout=180,
        )  # fmt: skip
        print(f"wrote {output}")
    finally:
        phoenix.terminate()
        phoenix.wait(timeout=60)


if __name__ == "__main__":
    main()
