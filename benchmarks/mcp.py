"""MCP: what a tool call through Baton costs beyond the SDK's own client.

Two copies of the suite's FastMCP server (``tests/mcp_test_server.py``) run over stdio: one
started by Baton's run-level hub (:mod:`core.tools.mcp_hub`, sandboxed as a run starts it), one
by the SDK's ``stdio_client`` + ``ClientSession`` directly. Calls of the ``echo`` tool alternate
between them, side by side in one run: through Baton a call is a whole own-loop tool call
(:func:`core.backends.tool_calls.run_tool_call`: the events, argument validation against the
tool's JSON Schema, the approval gate with an allow policy, the result rendered for the model);
directly it is ``session.call_tool``.

``call_overhead_ms`` is the median through Baton minus the median direct (the goal: ≤ 5);
``baton_median_ms`` / ``direct_median_ms`` and ``baton_p90_ms`` / ``direct_p90_ms`` are beside
it. Run from the repository root: ``python -m benchmarks.mcp``. Last line: one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path
from typing import TextIO

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from core.backends.base import StepContext
from core.backends.tool_calls import ToolOutcome, run_tool_call
from core.config.mcp_servers import McpServer, ServerEntry
from core.config.settings import Settings
from core.definitions.agents import AgentDefinition
from core.safety.approvals import ApprovalGate, deny_all
from core.tools.mcp_hub import Confinement, McpHub
from core.tools.mcp_tool import McpSelection, offer_mcp_tools

ROOT = Path(__file__).resolve().parents[1]
CALLS = 300
WARM_UP = 20
ARGUMENTS = {"text": "hello"}


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


async def measure(folder: Path, quiet: TextIO) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = McpServer(
        command=sys.executable, args=["-m", "tests.mcp_test_server"], env={"PYTHONPATH": str(ROOT)}
    )
    entry = ServerEntry("t", server, "user", Path("mcp.json"))
    settings = Settings()
    policy = {**settings.effective_policy(), "mcp__t__echo": "allow"}
    gate = ApprovalGate(policy, deny_all, lambda event: None, lambda: 0.0)
    ctx = StepContext(
        run_id="bench",
        step=0,
        agent=AgentDefinition(name="bench", description="benchmark", mcp=("t",)),
        task="",
        cwd=folder,
        model=None,
        tools=(),
        settings=settings,
        approvals=gate,
    )
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "tests.mcp_test_server"], env=env, cwd=str(folder)
    )
    baton: list[float] = []
    direct: list[float] = []
    async with McpHub() as hub, stdio_client(parameters, quiet) as (read, write):
        offered, warnings = await offer_mcp_tools(
            McpSelection.of(["t"], []), [entry], hub, Confinement(cwd=folder)
        )
        assert not warnings, warnings
        async with ClientSession(read, write) as session:
            await session.initialize()
            for number in range(WARM_UP + CALLS):
                started = time.perf_counter()
                outcome = ToolOutcome()
                calling = run_tool_call(
                    ctx, f"c{number}", "mcp__t__echo", json.dumps(ARGUMENTS), offered, outcome
                )
                async with aclosing(calling) as events:
                    async for _ in events:
                        pass
                through_baton = time.perf_counter() - started
                assert outcome.result == "echo: hello", outcome.result

                started = time.perf_counter()
                result = await session.call_tool("echo", ARGUMENTS)
                directly = time.perf_counter() - started
                assert not result.isError
                if number >= WARM_UP:
                    baton.append(through_baton * 1000)
                    direct.append(directly * 1000)
    baton_median, direct_median = statistics.median(baton), statistics.median(direct)
    return {
        "call_overhead_ms": round(baton_median - direct_median, 3),
        "baton_median_ms": round(baton_median, 3),
        "direct_median_ms": round(direct_median, 3),
        "baton_p90_ms": round(percentile(baton, 0.9), 3),
        "direct_p90_ms": round(percentile(direct, 0.9), 3),
        "calls": CALLS,
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("BATON_CONFIG_DIR", str(Path(folder) / "config"))
        os.environ.setdefault("BATON_DATA_DIR", str(Path(folder) / "data"))
        work = Path(folder) / "work"
        work.mkdir()
        with open(os.devnull, "w") as quiet:
            result = asyncio.run(measure(work, quiet))
    print(
        f"through Baton {result['baton_median_ms']} ms, SDK directly "
        f"{result['direct_median_ms']} ms (medians of {CALLS} calls each)"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
