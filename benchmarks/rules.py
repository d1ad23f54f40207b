"""Rules: how long judging a command takes, and how long the supervisor's loop stalls meanwhile.

* ``p99_ms`` — judging each line of the rule table (``tests/rule_table.py``, 200+ lines, the
  attack classes included) against its rules with :func:`core.safety.rule_judge.judge`, 20 rounds:
  the 99th percentile of one judgement's CPU time (short lines are judged on the loop, so this
  is the loop's cost per bash call); ``p99_wall_ms`` is the same in wall time, which on a
  shared machine also counts whatever else ran meanwhile.
* ``max_stall_ms`` — the longest a ticker task on the same loop (waking every millisecond,
  like another task's stream) waited beyond its sleep while a 1 MB line was judged; also
  ``max_stall_deep_ms`` for a 2,000-deep ``$(`` and ``max_stall_30k_ms`` for a readable 30 KB
  line (both judged by the worker process), ``max_stall_4k_ms`` for 4 KB of ``a;a;…`` (judged
  in a thread).

Last line: ``{"p99_ms", "median_ms", "p99_wall_ms", "max_stall_ms", "max_stall_deep_ms",
"max_stall_30k_ms", "max_stall_4k_ms", "lines"}``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from core.safety.rule_judge import judge
from core.safety.rules import RuleSet
from tests.rule_table import LINES, RULES

ROUNDS = 20
TICK_S = 0.001


async def judging_times(rules: RuleSet, cwd: Path) -> tuple[list[float], list[float]]:
    """Milliseconds per judgement of every table line, ``ROUNDS`` times: CPU time of this
    thread (what the judgement costs the loop) and wall time (that, plus whatever else the
    machine ran meanwhile)."""
    cpu: list[float] = []
    wall: list[float] = []
    for line in LINES:  # warm-up: bashlex's tables, the regexes
        await judge(rules, "bash", None, {"command": line.command}, cwd)
    for _ in range(ROUNDS):
        for line in LINES:
            started, started_cpu = time.perf_counter(), time.thread_time()
            await judge(rules, "bash", None, {"command": line.command}, cwd)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            wall.append((time.perf_counter() - started) * 1000)
    return cpu, wall


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[int(len(ordered) * 0.99) - 1]


async def max_stall(work: Awaitable[Any]) -> float:
    """The longest the loop kept a 1 ms ticker waiting beyond its sleep while ``work`` ran."""
    done = asyncio.Event()
    worst = 0.0

    async def ticker() -> None:
        nonlocal worst
        while not done.is_set():
            before = time.perf_counter()
            await asyncio.sleep(TICK_S)
            worst = max(worst, (time.perf_counter() - before - TICK_S) * 1000)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    await work
    done.set()
    await task
    return worst


async def main() -> None:
    cwd = Path.cwd()
    rules = RuleSet.from_texts(cwd, RULES)
    cpu, wall = await judging_times(rules, cwd)
    median = statistics.median(cpu)
    print(
        f"judging {len(LINES)} lines x {ROUNDS}: CPU median {median:.3f} ms, p99 {p99(cpu):.3f}"
        f" ms; wall median {statistics.median(wall):.3f} ms, p99 {p99(wall):.3f} ms"
    )

    def judged(command: str) -> Awaitable[Any]:
        return judge(rules, "bash", None, {"command": command}, cwd)

    one_mb = "git log " + "a" * (1_000_000 - 8)
    deep = "git log " + "$(echo " * 2000 + "x" + ")" * 2000
    readable = "echo " + "a " * 15_000
    medium = "a;" * 2000
    stall = await max_stall(judged(one_mb))
    stall_deep = await max_stall(judged(deep))
    stall_30k = await max_stall(judged(readable))
    stall_4k = await max_stall(judged(medium))
    print(
        f"max stall: 1 MB {stall:.1f} ms, deep {stall_deep:.1f} ms, 30 KB {stall_30k:.1f} ms,"
        f" 4 KB (thread) {stall_4k:.1f} ms"
    )
    print(
        json.dumps(
            {
                "p99_ms": round(p99(cpu), 3),
                "median_ms": round(median, 3),
                "p99_wall_ms": round(p99(wall), 3),
                "max_stall_ms": round(stall, 1),
                "max_stall_deep_ms": round(stall_deep, 1),
                "max_stall_30k_ms": round(stall_30k, 1),
                "max_stall_4k_ms": round(stall_4k, 1),
                "lines": len(LINES),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
