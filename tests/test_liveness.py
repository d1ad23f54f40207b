"""A run whose process is killed reads ``interrupted`` — never ``running`` forever."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.model.events import RunFinished, RunStarted, TextDelta
from core.record.liveness import OWNERS, LivenessLock, lock_path, owner_alive
from core.record.run_files import INTERRUPTED_ERROR, RunIndex, load_run, runs_dir
from tests.cli_child import start_baton
from tests.llm_server import LLMServer, Reply

REPO = Path(__file__).resolve().parents[1]


def test_the_lock_is_seen_from_the_same_process_and_gone_once_released(tmp_path: Path) -> None:
    run = tmp_path / "r.jsonl"
    assert not owner_alive(run)
    lock = LivenessLock(run)
    assert owner_alive(run) and f"pid {os.getpid()} " in lock_path(run).read_text()
    with pytest.raises(OSError):
        LivenessLock(run)  # one owner at a time
    lock.release()
    assert not owner_alive(run) and not lock_path(run).exists()


@pytest.mark.skipif(os.name != "posix", reason="kill -9 of a child needs POSIX")
def test_a_killed_baton_run_is_indexed_and_finished_as_interrupted(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    llm_server.queue(Reply.answer("I will now think for a long time"), Reply.hang())
    command = ["run", "--chain", "scout=look", "--chain", "planner=plan {previous}", "--json"]
    child = start_baton([*command, "--cwd", str(tmp_path)])
    try:
        llm_server.wait_requests(2, timeout=30)  # the second step is waiting on the model
        [record] = RunIndex().list()
        assert record.status == "running"  # its owner is alive: no guessing from file age
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()  # type: ignore[union-attr]
        child.stderr.close()  # type: ignore[union-attr]
    assert child.returncode == -signal.SIGKILL

    assert main(["runs", "list"]) == 0
    assert f"{record.id}  interrupted " in capsys.readouterr().out
    assert main(["runs", "list", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["status"] == "interrupted" and listed["error"] == INTERRUPTED_ERROR
    events = load_run(Path(record.path))
    assert isinstance(events[0], RunStarted)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith("I will now")
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert len(finished) == 1 and finished[0] == events[-1]
    assert finished[0].status == "interrupted" and finished[0].usage.turns == 1
    assert not list(runs_dir().glob("*.lock"))  # the dead owner's lock file is not left either

    assert main(["runs", "export", record.id]) == 0
    assert "Status: **interrupted**" in capsys.readouterr().out


@pytest.mark.skipif(os.name != "posix", reason="run locks are links to one file on POSIX")
def test_the_runs_of_one_process_lock_links_to_one_owner_file(tmp_path: Path) -> None:
    first, second = LivenessLock(tmp_path / "a.jsonl"), LivenessLock(tmp_path / "b.jsonl")
    assert first.path.stat().st_ino == second.path.stat().st_ino  # one inode, no new file
    assert owner_alive(tmp_path / "a.jsonl") and owner_alive(tmp_path / "b.jsonl")
    first.release()
    assert not lock_path(tmp_path / "a.jsonl").exists() and owner_alive(tmp_path / "b.jsonl")
    second.release()
    assert not owner_alive(tmp_path / "b.jsonl")


@pytest.mark.skipif(os.name != "posix", reason="owner files are a POSIX thing")
def test_a_dead_owners_files_are_taken_over_and_swept(tmp_path: Path) -> None:
    dead = tmp_path / OWNERS / "1-dead.lock"  # no process holds it any more
    dead.parent.mkdir()
    dead.write_text("pid 1 started 0\n")
    os.link(dead, lock_path(tmp_path / "r.jsonl"))  # its run was interrupted
    other = LivenessLock(tmp_path / "other.jsonl")  # this process's first run here
    assert not dead.exists()  # swept; the interrupted run's link stays until repaired
    assert not owner_alive(tmp_path / "r.jsonl")
    taken = LivenessLock(tmp_path / "r.jsonl")  # e.g. a resume: the stale lock is replaced
    assert owner_alive(tmp_path / "r.jsonl")
    assert f"pid {os.getpid()} " in lock_path(tmp_path / "r.jsonl").read_text()
    taken.release()
    other.release()


@pytest.mark.skipif(os.name != "posix", reason="kill -9 of a child needs POSIX")
def test_a_killed_process_leaves_its_runs_unowned(tmp_path: Path) -> None:
    script = (
        "import sys, time; from pathlib import Path;"
        "from core.record.liveness import LivenessLock;"
        f"locks = [LivenessLock(Path({str(tmp_path)!r}) / f'{{n}}.jsonl') for n in range(3)];"
        "print('held', flush=True); time.sleep(600)"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        assert all(owner_alive(tmp_path / f"{n}.jsonl") for n in range(3))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
    assert not any(owner_alive(tmp_path / f"{n}.jsonl") for n in range(3))


def test_a_process_that_ends_leaves_no_owner_files_behind(tmp_path: Path) -> None:
    script = (
        "from pathlib import Path; from core.record.liveness import LivenessLock;"
        f"LivenessLock(Path({str(tmp_path)!r}) / 'r.jsonl').release()"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=REPO, timeout=120)
    assert list(tmp_path.iterdir()) == []
