"""Batch throughput: 256 items of a 2-step chain against the scripted server.

Run from the repository root: ``python -m benchmarks.batch``. The scripted OpenAI-compatible
server runs in a child process (this module with ``--serve``), so the CPU time measured here
is the supervisor's alone: the runner, Baton's HTTP agent loop, the publisher, the run files
and the index — everything a batch costs besides the model.
Every item is an ordinary recorded run (``scout-and-plan``: scout, then planner).

Two servers, side by side in one run:

* **200 ms a request**, for the local executor at concurrency 4, 16 and 64: items/s next to
  the latency-bound limit ``concurrency / (2 × latency)`` (each item makes two requests in a
  row), and the supervisor's CPU per event (process CPU time / events published). 256 items
  are whole waves at every concurrency, so the limit is reachable. The server's own time over
  a request (``server_ms_per_request_c64``, ``server_p95_ms_c64``: body read to last byte,
  200 ms and whatever its threads waited for) says how much of the gap to the limit is the
  scripted model's.
* **an instant model** (no wait), at concurrency 64: what the supervisor alone can do —
  ``instant_items_per_s`` and ``supervisor_cpu_ms_per_item`` (process CPU per item: this
  process's threads, not the server's), split into ``supervisor_user_ms_per_item`` (Python)
  and ``supervisor_system_ms_per_item`` (the kernel's: files, sockets); ``check_ms_per_item``
  is the batch's check of its items before any runs (CPU, not in the figures above). The
  same batch again in a trusted git checkout of 2,000 folders with an ``AGENTS.md``
  (:func:`trusted_repository`), where batches usually run: ``trusted_repo_items_per_s``,
  ``trusted_repo_cpu_ms_per_item``, ``trusted_repo_check_ms_per_item`` — the project's
  context is looked at per item and per step there, which an empty folder never shows.

The Ray executor is measured too when it is installed (``ray_items_per_s_2workers``,
:func:`optional_executors`), unless ``--local-only``. Last line: one JSON object, keys
``instant_items_per_s``, ``supervisor_cpu_ms_per_item``, ``local_items_per_s_c4`` …,
``limit_c4`` …, ``local_efficiency_c64``, ``overhead_ms_per_event`` (the c64 figure) and the
others; ``events_per_item_c64`` says how many events the CPU per event is spread over (an
answer's chunks that arrive in one read are one delta, so a faster network makes fewer, and
``overhead_ms_per_item_c64`` is the same CPU per item); ``reference_ms`` says how fast the
machine was (:func:`benchmarks.background_load.reference_ms`).

The throwaway config and data folders are made beside Baton's data folder, where a real
batch writes its run files, not in the system's temporary folder. Every item creates its run
file, and what creating a file costs is the machine's, not Baton's: on the shared VM of the
latest figures it went from 40 to 1,350 µs of CPU within minutes, in any folder (``/tmp`` was
5 times dearer than the data folder one hour, half as dear the next). ``file_create_us`` (the
data folder used) and ``file_create_us_tmp`` report it beside the figures, so a slow disk
shows as itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from benchmarks.background_load import reference_ms
from core.batch.executor_registry import create_executor
from core.batch.executors import BatchExecutor, ExecutorOptions, ExecutorUnavailable
from core.batch.inputs import BatchItem
from core.batch.store import BatchSpec, BatchStore
from core.batch.supervisor import BatchRun
from core.config import paths
from core.config.settings import Settings
from core.model.events import Event
from core.safety.trust import TrustStore

if TYPE_CHECKING:
    from tests.llm_server import RecordedRequest

ROOT = Path(__file__).resolve().parents[1]

ITEMS = 256
LATENCY_S = 0.2
CONCURRENCIES = (4, 16, 64)


# ------------------------------------------------------------------------ the server (child)


def serve(latency: float) -> None:
    """Run the scripted server until stdin closes; print its port first. Every request waits
    ``latency`` seconds (in its own handler thread), then gets a short streamed answer."""
    from tests import llm_server
    from tests.llm_server import LLMServer, Reply

    # Tuned for load, not for tests: 64 connections at once overflow the default accept queue
    # of 5 (refused, then retried by Baton), and Nagle's algorithm with delayed ACKs holds
    # each small SSE write ~40 ms — both would be measured as Baton's overhead.
    llm_server._HTTPServer.request_queue_size = 256
    llm_server._Handler.disable_nagle_algorithm = True

    def respond(body: dict[str, Any]) -> Any:
        time.sleep(latency)
        return Reply.answer("## Files Retrieved\n- none needed")

    with LLMServer(responder=respond) as server:
        print(server.port, flush=True)
        reported = 0
        for _line in sys.stdin:  # each line asks for the requests served since the last one
            requests = server.requests
            print(json.dumps(served_ms(requests[reported:])), flush=True)
            reported = len(requests)


def served_ms(requests: list[RecordedRequest]) -> list[float]:
    """How long the server took over each request, from its body read to its last byte sent:
    the scripted model's own share of an item's time (its latency and whatever its threads
    waited for), which is not Baton's."""
    return [(r.finished - r.arrived) * 1000 for r in requests if r.finished is not None]


class ServerProcess:
    def __init__(self, latency: float) -> None:
        self.child = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.batch", "--serve", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.child.stdout is not None
        self.port = int(self.child.stdout.readline())
        self.process = psutil.Process(self.child.pid)

    def cpu_s(self) -> float:
        """CPU seconds the server has used so far (to tell its limits from Baton's)."""
        times = self.process.cpu_times()
        return float(times.user + times.system)

    def served_ms(self) -> list[float]:
        """The server's own time over each request since the last call (see :func:`served_ms`)."""
        assert self.child.stdin is not None and self.child.stdout is not None
        self.child.stdin.write("stats\n")
        self.child.stdin.flush()
        times: list[float] = json.loads(self.child.stdout.readline())
        return times

    def close(self) -> None:
        assert self.child.stdin is not None
        self.child.stdin.close()
        self.child.wait(timeout=30)


# ------------------------------------------------------------------------ the supervisor


class Counter:
    def __init__(self) -> None:
        self.events = 0

    def __call__(self, index: int, event: Event) -> None:
        self.events += 1


async def measure(
    executor: BatchExecutor, settings: Settings, folder: Path, items: int = ITEMS
) -> dict[str, float]:
    """Run one batch of ``items``; items/s and the supervisor's CPU ms per event."""
    store = BatchStore()
    spec = BatchSpec(preset="scout-and-plan", cwd=str(folder))
    rows = [BatchItem(args=[f"task {n}"]) for n in range(items)]
    record = store.create(spec, rows, "benchmark")
    counter = Counter()
    batch = BatchRun(record, executor, settings=settings, listeners=[counter], store=store)
    checking = time.process_time()
    batch.prepare()
    checking = time.process_time() - checking
    usage, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    outcomes = await batch.run()
    wall, after = time.perf_counter() - wall, resource.getrusage(resource.RUSAGE_SELF)
    user, system = after.ru_utime - usage.ru_utime, after.ru_stime - usage.ru_stime
    cpu = user + system  # this process's threads, as the process's CPU clock counts them
    failed = [o for o in outcomes if o.status != "ok"]
    if failed or len(outcomes) != items:
        raise SystemExit(f"{len(failed)} items failed, e.g. {failed[0].error if failed else ''}")
    return {
        "items_per_s": items / wall,
        "ms_per_event": cpu * 1000 / counter.events,
        "events": counter.events,
        "cpu_ms_per_item": cpu * 1000 / items,
        "user_ms_per_item": user * 1000 / items,
        "system_ms_per_item": system * 1000 / items,
        "check_ms_per_item": checking * 1000 / items,
    }


async def optional_executors(settings: Settings, folder: Path) -> dict[str, float]:
    """Figures for executors that need an extra (skipped, with a note, when it is missing).

    Ray: a local Ray with 2 workers, started once outside the timing (a batch sent to a
    running cluster does not pay it; ``ray_start_s`` says what a batch without an address
    adds). Each batch still starts its own worker processes, which is timed. At concurrency 2
    each worker runs one item at a time; at 16, eight, on its own event loop."""
    results: dict[str, float] = {}
    try:
        create_executor("ray", ExecutorOptions(concurrency=2))
    except ExecutorUnavailable as why:
        print(f"ray: skipped ({why})")
        return results
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    results["ray_start_s"] = round(time.perf_counter() - started, 2)
    try:
        for concurrency, suffix in ((2, ""), (16, "_c16")):
            executor = create_executor("ray", ExecutorOptions(concurrency=concurrency))
            figures = await measure(executor, settings, folder)
            limit = concurrency / (2 * LATENCY_S)
            speed = figures["items_per_s"]
            results[f"ray_items_per_s_2workers{suffix}"] = round(speed, 2)
            results[f"ray_limit_2workers{suffix}"] = round(limit, 2)
            results[f"ray_efficiency_2workers{suffix}"] = round(speed / limit, 3)
            results[f"ray_overhead_ms_per_event{suffix}"] = round(figures["ms_per_event"], 3)
            print(
                f"ray, 2 workers, concurrency {concurrency}: {speed:.1f} items/s, limit "
                f"{limit:.1f} ({speed / limit:.0%}), {figures['ms_per_event']:.3f} ms CPU per "
                f"event in the supervisor (Ray started in {results['ray_start_s']:.1f} s)"
            )
    finally:
        ray.shutdown()
    return results


def scratch_parent() -> Path:
    """The folder the throwaway folders go in: the one Baton's own data folder is in
    (:func:`core.config.paths.data_dir`, ``BATON_DATA_DIR`` respected), on its disk."""
    return paths.data_dir().parent


def file_create_us(parent: Path, files: int = 200) -> float:
    """CPU microseconds to create (and close) one empty file in a new folder in ``parent``:
    what the disk adds to every item, which creates its run file."""
    with tempfile.TemporaryDirectory(dir=parent, prefix="baton-bench-") as folder:
        cpu = time.thread_time()
        for number in range(files):
            with open(Path(folder) / f"{number}.jsonl", "a", encoding="utf-8"):
                pass
        return round((time.thread_time() - cpu) * 1e6 / files, 1)


def bench_settings(server: ServerProcess) -> Settings:
    provider = {"name": "bench", "base_url": f"http://127.0.0.1:{server.port}/v1"}
    return Settings.model_validate({"providers": [provider], "default_model": "test-model"})


async def run_instant(server: ServerProcess, folder: Path) -> dict[str, float]:
    """The supervisor's own limit: 256 items at concurrency 64 against a model that answers
    at once (the server's CPU is not counted)."""
    settings = bench_settings(server)
    warm_up = create_executor("local", ExecutorOptions(concurrency=CONCURRENCIES[0]))
    await measure(warm_up, settings, folder, items=CONCURRENCIES[0])
    executor = create_executor("local", ExecutorOptions(concurrency=CONCURRENCIES[-1]))
    figures = await measure(executor, settings, folder)
    print(
        f"instant model, c{CONCURRENCIES[-1]}: {figures['items_per_s']:.1f} items/s, "
        f"{figures['cpu_ms_per_item']:.2f} ms supervisor CPU per item "
        f"({figures['system_ms_per_item']:.2f} of it in the kernel), "
        f"{figures['ms_per_event']:.3f} ms per event"
    )
    repo = await asyncio.to_thread(trusted_repository, folder / "repo")
    in_repo = await measure(executor, settings, repo)
    print(
        f"instant model, c{CONCURRENCIES[-1]}, in a trusted project of {REPO_FOLDERS:,} "
        f"folders: {in_repo['items_per_s']:.1f} items/s, {in_repo['cpu_ms_per_item']:.2f} ms "
        f"supervisor CPU per item, its check {in_repo['check_ms_per_item']:.2f} ms"
    )
    return {
        "instant_items_per_s": round(figures["items_per_s"], 1),
        "supervisor_cpu_ms_per_item": round(figures["cpu_ms_per_item"], 3),
        "instant_ms_per_event": round(figures["ms_per_event"], 3),
        "instant_events_per_item": round(figures["events"] / ITEMS, 2),
        "supervisor_user_ms_per_item": round(figures["user_ms_per_item"], 3),
        "supervisor_system_ms_per_item": round(figures["system_ms_per_item"], 3),
        "check_ms_per_item": round(figures["check_ms_per_item"], 3),
        "trusted_repo_items_per_s": round(in_repo["items_per_s"], 1),
        "trusted_repo_cpu_ms_per_item": round(in_repo["cpu_ms_per_item"], 3),
        "trusted_repo_check_ms_per_item": round(in_repo["check_ms_per_item"], 3),
    }


REPO_FOLDERS = 2_000


def trusted_repository(root: Path) -> Path:
    """A git checkout of :data:`REPO_FOLDERS` folders (a file each) with an ``AGENTS.md`` at
    its top, trusted: where batches usually run. A trusted project's context files and skills
    are looked at when each item is checked and when each of its steps starts (an earlier step
    may have rewritten them)."""
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Keep answers short.\n", encoding="utf-8")
    for number in range(REPO_FOLDERS):
        module = root / f"package{number // 50}" / f"module{number}"
        module.mkdir(parents=True)
        (module / "code.py").write_text("VALUE = 1\n", encoding="utf-8")
    TrustStore().trust(root)
    return root


async def run_all(server: ServerProcess, folder: Path, with_ray: bool) -> dict[str, float]:
    settings = bench_settings(server)
    results: dict[str, float] = {}
    warm_up = create_executor("local", ExecutorOptions(concurrency=CONCURRENCIES[0]))
    await measure(warm_up, settings, folder, items=CONCURRENCIES[0])  # imports, price table
    for concurrency in CONCURRENCIES:
        executor = create_executor("local", ExecutorOptions(concurrency=concurrency))
        server_cpu = server.cpu_s()
        server.served_ms()  # the warm-up's and the last concurrency's are not this one's
        figures = await measure(executor, settings, folder)
        server_cpu = server.cpu_s() - server_cpu
        served = sorted(server.served_ms())
        served_mean = statistics.fmean(served)
        limit = concurrency / (2 * LATENCY_S)
        speed = figures["items_per_s"]
        results[f"local_items_per_s_c{concurrency}"] = round(speed, 2)
        results[f"limit_c{concurrency}"] = round(limit, 2)
        results[f"local_efficiency_c{concurrency}"] = round(speed / limit, 3)
        results[f"overhead_ms_per_event_c{concurrency}"] = round(figures["ms_per_event"], 3)
        results[f"overhead_ms_per_item_c{concurrency}"] = round(figures["cpu_ms_per_item"], 3)
        results[f"events_per_item_c{concurrency}"] = round(figures["events"] / ITEMS, 2)
        results[f"server_cpu_s_c{concurrency}"] = round(server_cpu, 2)
        results[f"server_ms_per_request_c{concurrency}"] = round(served_mean, 1)
        results[f"server_p95_ms_c{concurrency}"] = round(served[int(0.95 * (len(served) - 1))], 1)
        print(
            f"local c{concurrency}: {speed:.1f} items/s, limit {limit:.1f} "
            f"({speed / limit:.0%}), {figures['ms_per_event']:.3f} ms CPU per event "
            f"({figures['events']:.0f} events); the server used {server_cpu:.1f} s CPU and "
            f"{served_mean:.1f} ms a request (of {LATENCY_S * 1000:.0f})"
        )
    results["overhead_ms_per_event"] = results[f"overhead_ms_per_event_c{CONCURRENCIES[-1]}"]
    if with_ray:
        results.update(await optional_executors(settings, folder))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", type=float, metavar="LATENCY", help=argparse.SUPPRESS)
    parser.add_argument(
        "--local-only", action="store_true", help="measure the local executor only (no Ray)"
    )
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    parent = scratch_parent()
    disk = {
        "file_create_us": file_create_us(parent),
        "file_create_us_tmp": file_create_us(Path(tempfile.gettempdir())),
    }
    with tempfile.TemporaryDirectory(dir=parent, prefix="baton-bench-") as tmp:
        home = Path(tmp)
        os.environ["BATON_CONFIG_DIR"] = str(home / "config")
        os.environ["BATON_DATA_DIR"] = str(home / "data")
        instant = ServerProcess(0.0)
        try:
            results = asyncio.run(run_instant(instant, home))
        finally:
            instant.close()
        server = ServerProcess(LATENCY_S)
        try:
            results.update(asyncio.run(run_all(server, home, with_ray=not args.local_only)))
        finally:
            server.close()
    results.update(disk)
    results["load_average_1m"] = round(os.getloadavg()[0], 2)
    results["reference_ms"] = reference_ms()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
