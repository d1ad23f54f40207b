"""``baton batch --executor ray`` as a real child process.

A local Ray that Baton starts leaves nothing behind (no ``~/.ray/auth_token`` that would make
later clusters on the machine demand a token) and keeps Ray's logging in
``<data>/logs/ray.log``: the terminal gets Baton's lines only.

The Ray cluster goes away mid-batch: the batch ends with one line naming the cluster, then
the summary line, exit status 1; the item that was running ends ``error`` with the reason, the
items not started stay pending for a resume, and no run file is left empty.

The cluster is one this test starts with ``ray start --head`` in a folder of its own, and kills
by process id (everything of that cluster, never another Ray on the machine). Importing
:mod:`tests.test_batch_ray` skips this module when the Ray extra is missing."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from core.batch.ray_setup import ray_log_path
from core.batch.store import BatchStore
from core.config.settings import save_settings
from core.record.run_files import run_file
from tests.cli_child import REPO
from tests.llm_server import LLMServer, Reply
from tests.test_batch_ray import write_inputs
from tests.test_batch_seam import echo

ray = pytest.importorskip("ray")  # present: importing tests.test_batch_ray did not skip

pytestmark = pytest.mark.ray

EXIT_S = 120.0
"""How long the batch gets to end once its cluster is gone (generous: a loaded machine)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def without_ray_authentication() -> dict[str, str]:
    """This environment without Ray's authentication settings: those are the cases here."""
    return {
        name: value
        for name, value in os.environ.items()
        if name not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
    }


class HeadNode:
    """A one-node cluster started with ``ray start --head``; :meth:`kill` ends every process
    of it (found by its own temp folder, and their children)."""

    def __init__(self) -> None:
        # Short: Ray's unix sockets live below it, and socket paths are limited to ~107 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="rh", dir="/tmp"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"

    def start(self) -> None:
        ray_cli = Path(sys.executable).parent / "ray"
        subprocess.run(
            [
                str(ray_cli),
                "start",
                "--head",
                f"--port={self.port}",
                "--node-ip-address=127.0.0.1",
                "--num-cpus=1",
                f"--temp-dir={self.folder}",
                "--include-dashboard=false",
                "--disable-usage-stats",
            ],
            check=True,
            capture_output=True,
            timeout=180,
            env=without_ray_authentication(),
        )

    def processes(self) -> list[psutil.Process]:
        found: dict[int, psutil.Process] = {}
        for process in psutil.process_iter():
            try:
                if str(self.folder) in " ".join(process.cmdline()):
                    found[process.pid] = process
                    for child in process.children(recursive=True):
                        found[child.pid] = child
            except psutil.Error:
                continue
        return list(found.values())

    def kill(self) -> None:
        processes = self.processes()
        for process in processes:
            try:
                process.kill()
            except psutil.Error:
                continue
        psutil.wait_procs(processes, timeout=30)


@pytest.fixture
def head_node() -> Iterator[HeadNode]:
    node = HeadNode()
    try:
        node.start()
        yield node
    finally:
        node.kill()
        shutil.rmtree(node.folder, ignore_errors=True)


def baton(*arguments: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "core.cli", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**without_ray_authentication(), "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )


def test_a_local_ray_leaves_no_token_file_and_keeps_its_logs_to_itself(
    llm_server: LLMServer, tmp_path: Path, isolated_home: Path
) -> None:
    save_settings(llm_server.settings())
    llm_server.responder = echo
    inputs = write_inputs(tmp_path, 2)
    child = baton(
        *("batch", "scout-and-plan", "--inputs", str(inputs), "--cwd", str(tmp_path)),
        *("--executor", "ray", "--concurrency", "1"),
    )
    try:
        _, err = child.communicate(timeout=EXIT_S * 2)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()

    assert child.returncode == 0, err
    assert all(line.startswith("baton batch: ") for line in err.strip().splitlines()), err
    (record,) = BatchStore().list()
    assert record.counts() == {"ok": 2}
    assert not (isolated_home / ".ray").exists()
    assert "Started a local Ray instance" in ray_log_path().read_text(encoding="utf-8")


def test_a_killed_head_node_ends_the_batch_with_its_reason_and_summary(
    llm_server: LLMServer, head_node: HeadNode, tmp_path: Path
) -> None:
    save_settings(llm_server.settings())
    llm_server.responder = lambda body: Reply.hang()
    inputs = write_inputs(tmp_path, 3)
    command = ["batch", "scout-and-plan", "--inputs", str(inputs), "--cwd", str(tmp_path)]
    options = ["--executor", "ray", "--ray-address", head_node.address, "--concurrency", "1"]
    child = baton(*command, *options)
    try:
        llm_server.wait_until(lambda: llm_server.in_flight == 1, timeout=EXIT_S)
        head_node.kill()
        _, err = child.communicate(timeout=EXIT_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()

    (record,) = BatchStore().list()
    lines = err.strip().splitlines()
    assert child.returncode == 1, err
    assert lines[-2] == (
        f"baton batch: {record.id}: the Ray cluster at {head_node.address} stopped answering "
        "(Connection refused); the items not started stay pending"
    ), err
    assert lines[-1] == (
        f"baton batch: {record.id}: 1 failed, 2 pending "
        f"(run the rest: baton batch resume {record.id})"
    ), err
    assert all(line.startswith("baton batch: ") for line in lines), err  # no Ray logs
    assert record.counts() == {"error": 1, "pending": 2}
    (ran,) = [item for item in record.items if item.status == "error"]
    assert [item.run_id for item in record.items if item.status == "pending"] == [None, None]
    runs = run_file(ran.run_id or "").parent
    files = sorted(runs.iterdir())
    assert [path.name for path in files] == [run_file(ran.run_id or "").name]
    end = json.loads(files[0].read_text(encoding="utf-8").splitlines()[-1])
    assert end["type"] == "run_finished" and end["status"] == "error"
    assert f"the Ray cluster at {head_node.address} stopped answering" in end["error"]
