"""Step overhead: time from launching a run to the first request reaching the model server.

Measured side by side in one process against the scripted OpenAI-compatible server on
127.0.0.1, median of 20 runs each, the two sides alternated run by run (a busy moment on the
shared machine then hits both alike):

* ``openai`` — Baton's own agent loop (``Runner`` → ``OpenAICompatBackend`` → httpx);
* ``pi`` — the same runner driving the real ``pi`` CLI (``.tools/npm`` as installed by
  ``.ci/run``, or ``BATON_PI_BIN``, or ``pi`` on PATH); skipped (``null``) when pi is absent.

Last line: ``{"openai_ms", "pi_ms", "ratio", "median_ms"}`` where ``ratio = pi_ms / openai_ms``
and ``median_ms`` is the ``openai`` figure (the issue's name for it).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from core.config.settings import Settings
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from tests.llm_server import MODEL, LLMServer, Reply

ROOT = Path(__file__).resolve().parents[1]

RUNS = 20


def find_pi() -> str | None:
    candidates = [
        os.environ.get("BATON_PI_BIN"),
        str(ROOT / ".tools" / "npm" / "node_modules" / ".bin" / "pi"),
        shutil.which("pi"),
    ]
    return next((c for c in candidates if c and Path(c).exists()), None)


def configure_pi(folder: Path, server: LLMServer) -> None:
    """A private pi config pointing at the test server (no network, no retries)."""
    folder.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            "local": {
                "baseUrl": server.base_url,
                "api": "openai-completions",
                "apiKey": "any",
                "models": [{"id": MODEL, "contextWindow": 128000, "maxTokens": 4096}],
            }
        }
    }
    (folder / "models.json").write_text(json.dumps(models), encoding="utf-8")
    (folder / "settings.json").write_text(
        json.dumps({"retry": {"enabled": False}}), encoding="utf-8"
    )
    os.environ["PI_CODING_AGENT_DIR"] = str(folder)
    os.environ["PI_OFFLINE"] = "1"


async def time_to_first_request(
    server: LLMServer, settings: Settings, backend: str, model: str, cwd: Path
) -> float:
    before = len(server.requests)
    request = RunRequest(
        mode="single",
        steps=[StepSpec(agent="planner", task="hello")],
        cwd=cwd,
        backend=backend,
        model=model,
    )
    runner = Runner(request, settings=settings, record=False)
    started = time.perf_counter()
    task = asyncio.create_task(runner.run())
    await server.wait_until_async(lambda: len(server.requests) > before, timeout=60)
    elapsed = (time.perf_counter() - started) * 1000
    result = await task
    if result.status != "ok":
        raise SystemExit(f"{backend} run failed: {result.error}")
    return elapsed


def report(backend: str, samples: list[float]) -> float:
    median = statistics.median(samples)
    print(f"{backend}: median {median:.1f} ms (min {min(samples):.1f}, max {max(samples):.1f})")
    return median


async def measure(
    server: LLMServer, sides: dict[str, tuple[Settings, str]], cwd: Path
) -> dict[str, float]:
    """Median time to first request per backend, ``sides`` alternated run by run."""
    server.responder = lambda body: Reply.answer("ok")
    for backend, (settings, model) in sides.items():  # warm-up, not counted
        await time_to_first_request(server, settings, backend, model, cwd)
    samples: dict[str, list[float]] = {backend: [] for backend in sides}
    for _ in range(RUNS):
        for backend, (settings, model) in sides.items():
            samples[backend].append(
                await time_to_first_request(server, settings, backend, model, cwd)
            )
    return {backend: report(backend, values) for backend, values in samples.items()}


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, LLMServer() as server:
        home = Path(tmp)
        os.environ["BATON_CONFIG_DIR"] = str(home / "config")
        os.environ["BATON_DATA_DIR"] = str(home / "data")
        settings = server.settings()
        sides = {"openai": (settings, MODEL)}
        pi = find_pi()
        if pi is None:
            print("pi: not found (install it with .ci/run or set BATON_PI_BIN); skipped")
        else:
            configure_pi(home / "pi-agent", server)
            sides["pi"] = (settings.model_copy(update={"pi_path": pi}), f"local/{MODEL}")
        medians = await measure(server, sides, home)
        openai_ms, pi_ms = medians["openai"], medians.get("pi")
        ratio = round(pi_ms / openai_ms, 1) if pi_ms else None
        print(
            json.dumps(
                {
                    "openai_ms": round(openai_ms, 2),
                    "pi_ms": round(pi_ms, 1) if pi_ms else None,
                    "ratio": ratio,
                    "median_ms": round(openai_ms, 2),
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
