"""The history index pages, filters and sorts every run in SQL (not only the newest 500)."""

from __future__ import annotations

from pathlib import Path

from core.model.events import PlannedStep, RunFinished, RunStarted, UsageStats
from core.record.run_files import RunIndex


def fill(index: RunIndex, count: int, folder: Path) -> None:
    """``count`` finished runs, one a minute; every seventh failed, costs growing with n."""
    for n in range(count):
        started = RunStarted(
            run_id=f"run-{n:04d}",
            mode="chain",
            preset="implement" if n % 2 else None,
            args=[f"task {n}"],
            steps=[PlannedStep(agent="scout" if n % 3 else "reviewer", task="t", cwd="/w")],
            cwd=f"/home/dev/project-{n % 5}",
            started_at=f"2026-12-{1 + n // 1440:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00+00:00",
        )
        index.started(started, folder / f"run-{n:04d}.jsonl")
        status = "error" if n % 7 == 0 else "ok"
        usage = UsageStats(input=1000 + n, output=10, cost=n / 1000)
        finished = RunFinished(
            run_id=started.run_id,
            ts=float(n % 50),
            status=status,
            usage=usage,
            error="HTTP 500" if status == "error" else None,
        )
        index.finished(finished, started.started_at)


def test_pages_reach_every_run_newest_first(tmp_path: Path) -> None:
    index = RunIndex(tmp_path / "runs.sqlite")
    fill(index, 130, tmp_path)

    assert index.count() == 130
    pages = [index.page(offset, 50) for offset in range(0, 130, 50)]
    ids = [record.id for page in pages for record in page]
    assert [len(page) for page in pages] == [50, 50, 30]
    assert ids == [f"run-{n:04d}" for n in reversed(range(130))]  # the oldest is reachable


def test_filter_words_and_sorting_run_in_sql(tmp_path: Path) -> None:
    index = RunIndex(tmp_path / "runs.sqlite")
    fill(index, 100, tmp_path)

    failed = index.page(0, 500, ["FAILED", "reviewer"])  # the word the table shows
    assert failed and all(r.status == "error" and r.agents == ["reviewer"] for r in failed)
    assert len(failed) == index.count(["failed", "reviewer"]) == len(range(0, 100, 21))
    assert [r.id for r in index.page(0, 5, ["project-3", "implement"])][:2] == [
        "run-0093",
        "run-0083",
    ]
    assert index.count(["100%_"]) == 0  # no LIKE wildcards
    by_cost = index.page(0, 3, sort="cost", descending=True)
    assert [r.id for r in by_cost] == ["run-0099", "run-0098", "run-0097"]
    by_tokens = index.page(0, 2, sort="tokens", descending=False)
    assert [r.id for r in by_tokens] == ["run-0000", "run-0001"]
    longest = index.page(0, 1, sort="duration")[0]
    assert longest.duration_s == 49.0


def test_runs_begun_in_the_same_second_list_in_the_order_they_began(tmp_path: Path) -> None:
    """Start times keep whole seconds; two runs begun in one second must not swap places
    (their ids' random tails would order them by chance)."""
    index = RunIndex(tmp_path / "runs.sqlite")
    for run_id in ("20261204-211309-ffffff", "20261204-211309-000000"):
        started = RunStarted(
            run_id=run_id,
            mode="single",
            args=["task"],
            steps=[PlannedStep(agent="scout", task="t", cwd="/w")],
            cwd="/w",
            started_at="2026-12-04T21:13:09+00:00",
        )
        index.started(started, tmp_path / f"{run_id}.jsonl")

    newest_first = ["20261204-211309-000000", "20261204-211309-ffffff"]
    assert [r.id for r in index.list()] == newest_first
    assert [r.id for r in index.page(0, 10)] == newest_first
    assert [r.id for r in index.page(0, 10, descending=False)] == newest_first[::-1]
