"""Searching every saved run (``baton runs search``, History's search box) over 1,000 runs.

Each run is a 3-step chain (scout → planner → worker) written as a real run file and indexed in
``runs.sqlite`` in a temporary data folder: tasks, answers, and 3 tool calls per step (``read``,
``grep``, ``bash``) whose arguments and results are text from the documents benchmark's
generator (``benchmarks/documents_corpus.py``: English, Chinese, Japanese and mixed, Zipf word
frequencies, seeded) — about 15,000 passages, 20 MB of text.

Measured:

* ``index_s`` — the lazy catch-up: the first search indexes every run (what a history recorded
  before the index existed costs once);
* per query, the time of :meth:`core.history.run_search.RunSearch.search` *as the box calls it*
  (including its check for newly ended runs), for several classes: one- and two-letter
  prefixes, words, two- and three-character CJK, quoted exact text, two words, no hit.
  ``cold`` is each query's first run in a fresh process right after the catch-up (pages of the
  index not yet in SQLite's cache, though the OS may have them: the files were just written);
  ``warm`` are the next 5 runs of every query.

Last line, JSON: ``run_search_p95_ms`` [goal ≤ 50] — the p95 over cold and warm together —
then ``run_search_cold_p95_ms``, ``run_search_warm_p95_ms``, the worst class and its p95,
``run_search_index_s`` and the counts. ``benchmarks/checkpoint.py`` runs this too (measure
``run_search``) and prints the same keys beside ``checkpoint_ms``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUNS = 1_000
WARM_REPEATS = 5
QUERIES: dict[str, list[str]] = {
    "prefix1": ["s", "r", "c", "t"],
    "prefix2": ["re", "co", "de", "pa"],
    "word": ["retry", "timeout", "schema", "session", "latency", "checkout"],
    "cjk2": ["登录", "数据", "配置", "ログ"],
    "cjk3": ["数据库", "用户名", "ログイン"],
    "quoted": ['"user_id"', '"retry budget"', '"src/app"'],
    "two_words": ["cache retry", "login 配置", "deploy release"],
    "no_hit": ["zqxjk", "量子纠缠态", '"no such phrase here"'],
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def make_runs(count: int) -> int:
    """Write ``count`` run files and index them in ``runs.sqlite``; returns passages made."""
    from benchmarks.documents_corpus import TextMaker
    from core.model.events import (
        PlannedStep,
        RunFinished,
        RunStarted,
        StepFinished,
        StepStarted,
        TextDelta,
        ToolCallFinished,
        ToolCallStarted,
        UsageStats,
    )
    from core.record.run_files import Redactor, RunIndex, RunWriter

    maker = TextMaker(20)
    index = RunIndex()
    agents = ("scout", "planner", "worker")
    passages = 0
    for number in range(count):
        run_id = f"run-{number:05d}"
        tasks = [maker.document().title for _ in agents]
        steps = [PlannedStep(agent=a, task=t, cwd="/w") for a, t in zip(agents, tasks, strict=True)]
        started_at = f"2026-{1 + number % 12:02d}-{1 + number % 28:02d}T10:00:00+00:00"
        events: list[object] = [
            RunStarted(run_id=run_id, mode="chain", steps=steps, cwd="/w", started_at=started_at)
        ]
        ts = 0.0
        for step, (agent, task) in enumerate(zip(agents, tasks, strict=True)):
            ts += 1
            events.append(
                StepStarted(run_id=run_id, step=step, ts=ts, agent=agent, task=task, cwd="/w")
            )
            calls = (
                ("read", {"path": f"src/app/module_{number % 97}.py"}),
                ("grep", {"pattern": maker.english_sentence().split()[0], "path": "src"}),
                ("bash", {"command": f"pytest -q tests/test_{number % 53}.py -k user_id"}),
            )
            for call, (tool, arguments) in enumerate(calls):
                call_id = f"c{step}{call}"
                events.append(
                    ToolCallStarted(
                        run_id=run_id,
                        step=step,
                        ts=ts,
                        call_id=call_id,
                        tool=tool,
                        arguments=arguments,
                    )
                )
                events.append(
                    ToolCallFinished(
                        run_id=run_id,
                        step=step,
                        ts=ts,
                        call_id=call_id,
                        status="ok",
                        result=maker.document().content,
                    )
                )
            answer = maker.document().content
            events.append(TextDelta(run_id=run_id, step=step, ts=ts, text=answer))
            events.append(
                StepFinished(
                    run_id=run_id,
                    step=step,
                    ts=ts,
                    status="ok",
                    output=answer,
                    usage=UsageStats(turns=4, input=4000, output=500),
                )
            )
            passages += 2 + 2 * len(calls)
        events.append(RunFinished(run_id=run_id, ts=ts, status="ok", usage=UsageStats()))
        writer = RunWriter(run_id, Redactor())
        for event in events:
            writer.append(event)  # type: ignore[arg-type]
        writer.close()
        index.add_file(writer.path)
    return passages


def measure_run_search(runs: int = RUNS) -> dict[str, float | int | str]:
    """Build ``runs`` runs in a temporary data folder, catch the index up, time the queries;
    the table goes to stderr, the figures are returned (``benchmarks/checkpoint.py`` merges
    them into its last line)."""
    previous = os.environ.get("BATON_DATA_DIR")
    try:
        with tempfile.TemporaryDirectory() as data:
            os.environ["BATON_DATA_DIR"] = data
            return _measure(runs)
    finally:
        if previous is None:
            os.environ.pop("BATON_DATA_DIR", None)
        else:
            os.environ["BATON_DATA_DIR"] = previous


def _measure(runs: int) -> dict[str, float | int | str]:
    from core.history.run_search import RunSearch

    def say(line: str) -> None:
        print(line, file=sys.stderr)

    began = time.perf_counter()
    passages = make_runs(runs)
    say(f"{runs} runs written and indexed in the history: {time.perf_counter() - began:.1f} s")
    search = RunSearch()
    began = time.perf_counter()
    indexed = search.update()
    index_s = time.perf_counter() - began
    size_mb = Path(search.path).stat().st_size / 1e6
    say(f"lazy catch-up: {indexed} runs, {passages:,} passages, {index_s:.1f} s")
    say(f"index file: {size_mb:.0f} MB")

    cold: dict[str, list[float]] = {}
    warm: dict[str, list[float]] = {}
    hits: dict[str, int] = {}
    for repeat in range(1 + WARM_REPEATS):
        for kind, queries in QUERIES.items():
            for query in queries:
                began = time.perf_counter()
                result = search.search(query)
                took = (time.perf_counter() - began) * 1000
                (cold if repeat == 0 else warm).setdefault(kind, []).append(took)
                hits[query] = len(result.hits)
    say(f"\n{'class':<11}{'queries':>8}{'cold p95':>10}{'warm p95':>10}   hits (of 20 max)")
    every_cold = [t for times in cold.values() for t in times]
    every_warm = [t for times in warm.values() for t in times]
    for kind, queries in QUERIES.items():
        found = ", ".join(f"{q} {hits[q]}" for q in queries)
        say(
            f"{kind:<11}{len(queries):>8}{percentile(cold[kind], 0.95):>10.2f}"
            f"{percentile(warm[kind], 0.95):>10.2f}   {found}"
        )
    both = {kind: cold[kind] + warm[kind] for kind in QUERIES}
    worst = max(both, key=lambda kind: percentile(both[kind], 0.95))
    return {
        "run_search_p95_ms": round(percentile(every_cold + every_warm, 0.95), 2),
        "run_search_cold_p95_ms": round(percentile(every_cold, 0.95), 2),
        "run_search_warm_p95_ms": round(percentile(every_warm, 0.95), 2),
        "run_search_worst_class": worst,
        "run_search_worst_class_p95_ms": round(percentile(both[worst], 0.95), 2),
        "run_search_runs": runs,
        "run_search_passages": passages,
        "run_search_index_s": round(index_s, 1),
    }


def main() -> int:
    print(json.dumps(measure_run_search()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
