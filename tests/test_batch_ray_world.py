"""A Ray batch runs in the submitter's world: a local Ray whose workers' environment names
another endpoint and key (a second scripted server that must receive nothing), and the items
still go where the person's shell says, with the person's key, which no record keeps. A
resume runs with the executor and concurrency the batch was started with; flags given to it
override, and it says so.

Ray is the optional extra ``baton[ray]``: importing :mod:`tests.test_batch_ray` skips this
module as it skips that one when the extra is missing."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from core.batch.store import BatchPlacement, BatchStore
from core.cli import main
from core.config.settings import Settings, save_settings
from core.record.run_files import run_file
from tests.llm_server import MODEL, LLMServer
from tests.test_batch_ray import (  # noqa: F401  (the fixture replaces conftest's)
    GRACE_S,
    echo_noting_workers,
    no_leftover_threads_or_processes,
    worker_hosts,
    write_inputs,
)

ray = pytest.importorskip("ray")  # present: importing tests.test_batch_ray did not skip

pytestmark = pytest.mark.ray

WORKERS = 2
SUBMITTER_KEY = "sk-submitter-0123456789abcdef"
WORKER_KEY = "sk-worker-side-fedcba9876543210"


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[LLMServer]:
    """The endpoint the cluster's workers name in their own environment."""
    with LLMServer() as server:
        yield server


@pytest.fixture(scope="module", autouse=True)
def local_ray(tmp_path_factory: pytest.TempPathFactory, elsewhere: LLMServer) -> Iterator[None]:
    """A local Ray with 2 CPUs whose processes (and so every worker) see ``elsewhere`` as
    their ``OPENAI_BASE_URL``, with a key of their own; a home of their own, no keyring."""
    home = tmp_path_factory.mktemp("ray-home")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        # Set, so ray.init does not turn token authentication on by setting it in this
        # process's environment, where every later Ray of the session would inherit it.
        env.setenv("RAY_AUTH_MODE", "disabled")
        env.setenv("OPENAI_BASE_URL", elsewhere.base_url)
        env.setenv("OPENAI_API_KEY", WORKER_KEY)
        ray.init(
            num_cpus=WORKERS,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    yield
    ray.shutdown()


def start_batch(inputs: Path, folder: Path, *options: str) -> int:
    command = ["batch", "scout-and-plan", "--inputs", str(inputs), "--cwd", str(folder)]
    return main([*command, *options])


def test_the_submitters_endpoint_and_key_win_over_the_workers(
    llm_server: LLMServer,
    elsewhere: LLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    save_settings(Settings(default_model=MODEL))  # no provider: the shell's variables name it
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SUBMITTER_KEY)
    on_workers: set[int] = set()
    llm_server.responder = echo_noting_workers(on_workers)
    code = start_batch(write_inputs(tmp_path, 4), tmp_path, "--executor", "ray")
    assert code == 0, capsys.readouterr().err

    assert elsewhere.all_requests == []
    assert len(llm_server.requests) == 8  # two steps per item
    assert on_workers  # they ran on Ray's workers, not here
    keys = {request.headers.get("authorization") for request in llm_server.requests}
    assert keys == {f"Bearer {SUBMITTER_KEY}"}
    (record,) = BatchStore().list()
    assert record.counts() == {"ok": 4}
    for item in record.items:  # the key reached the worker, but no record keeps it
        assert SUBMITTER_KEY not in run_file(item.run_id or "").read_text(encoding="utf-8")
    assert SUBMITTER_KEY not in record.model_dump_json()


def test_resume_runs_as_the_batch_was_started_unless_told_otherwise(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    on_workers: set[int] = set()
    llm_server.responder = echo_noting_workers(on_workers)
    inputs = write_inputs(tmp_path, 2)
    assert start_batch(inputs, tmp_path, "--executor", "ray", "--concurrency", "1") == 0
    (record,) = BatchStore().list()
    assert record.placement == BatchPlacement(executor="ray", concurrency=1)
    store = BatchStore()
    for item in record.items:  # as if both had failed: a resume runs them again
        store.finished(record.id, item.index, item.run_id or "", "error")
    capsys.readouterr()
    on_workers.clear()

    assert main(["batch", "resume", record.id]) == 0
    err = capsys.readouterr().err
    assert f"{record.id}: 2 of 2 items, ray executor, concurrency 1" in err
    assert "instead of" not in err
    assert on_workers  # on Ray again, not locally at 4

    store.finished(record.id, 0, "", "error")
    psutil.wait_procs(worker_hosts(), timeout=GRACE_S)  # the Ray batch's workers, killed, end
    on_workers.clear()
    assert main(["batch", "resume", record.id, "--executor", "local"]) == 0
    err = capsys.readouterr().err
    assert "resume: --executor local instead of ray (as started)" in err
    assert f"{record.id}: 1 of 2 items, local executor, concurrency 1" in err
    assert not on_workers
    final = store.get(record.id)
    assert final is not None and final.placement == BatchPlacement(concurrency=1)
    assert json.loads(final.model_dump_json())["placement"]["executor"] == "local"
