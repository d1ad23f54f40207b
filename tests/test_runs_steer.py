"""``baton runs steer``: a run hanging on the scripted server in a child ``baton run`` is
steered from this process; the message reaches the model's next request and the run file.
The spool folder between them is attacked the way a hostile file in it would attack it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from core.backends.steering import SteerError
from core.cli import main
from core.config.settings import save_settings
from core.model.events import UserMessage
from core.record.run_files import RunIndex, load_run
from core.run.steer_spool import (
    SteerMessage,
    SteerWatcher,
    answer_to,
    post,
    spool_dir,
    watching,
)
from tests.cli_child import REPO
from tests.llm_server import LLMServer, Reply
from tests.waiting import until

RUN = ["run", "--agent", "scout", "--task", "look"]


def _start_child(tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "core.cli", *RUN, "--cwd", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )


def _user_texts(messages: list[dict[str, object]]) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "user"]


def test_steer_reaches_a_run_in_another_process(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    hold = threading.Event()
    llm_server.queue(Reply.tool("ls", {"path": "."}, hold=hold), Reply.answer("done"))
    child = _start_child(tmp_path)
    try:
        llm_server.wait_requests(1, timeout=60)
        [record] = RunIndex().list()
        assert main(["runs", "steer", record.id, "also check the tests", "--step", "2"]) == 2
        assert "not delivered: step 2 is not running" in capsys.readouterr().err
        assert main(["runs", "steer", record.id, "also check the tests"]) == 0
        assert f"Delivered to step 1 of run {record.id}." in capsys.readouterr().out
        hold.set()
        _out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    finally:
        hold.set()
        if child.poll() is None:
            child.kill()
            child.wait()
    first, second = llm_server.requests
    assert not any("also check the tests" in t for t in _user_texts(first.messages))
    assert any("also check the tests" in t for t in _user_texts(second.messages))
    said = [e for e in load_run(Path(record.path)) if isinstance(e, UserMessage)]
    assert [(e.text, e.step) for e in said] == [("also check the tests", 0)]
    assert not spool_dir(record.id).exists()  # removed when the run ended

    assert main(["runs", "steer", record.id, "too late"]) == 2
    assert f"run '{record.id}' is not running" in capsys.readouterr().err


def test_steer_refuses_unknown_and_path_like_run_ids(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["runs", "steer", "nope", "hello"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
    assert main(["runs", "steer", "../../outside", "hello"]) == 2
    assert "not a run id" in capsys.readouterr().err
    assert not (Path(os.environ["BATON_DATA_DIR"]).parent / "outside").exists()


def test_spool_files_are_private_and_a_planted_symlink_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(SteerMessage(text="from the secret").model_dump_json(), encoding="utf-8")
    delivered: list[tuple[int | None, str]] = []

    def deliver(step: int | None, text: str) -> int:
        delivered.append((step, text))
        if step == 3:
            raise SteerError("step 3 is not running")
        return step or 1

    name = post("r-attack", SteerMessage(text="hello", step=None))
    folder = spool_dir("r-attack")
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / f"{name}.json").stat().st_mode & 0o777 == 0o600
    planted = "00000000000000000001-deadbeef"
    (folder / f"{planted}.json").symlink_to(secret)
    (folder / "not-a-message.json").write_text("{}", encoding="utf-8")
    refused = post("r-attack", SteerMessage(text="to three", step=3))

    assert SteerWatcher("r-attack", deliver).take() == 3
    assert delivered == [(None, "hello"), (3, "to three")]  # never the secret's text
    link = answer_to("r-attack", planted)
    assert link is not None and not link.delivered and "not a plain small file" in link.reason
    assert answer_to("r-attack", planted) is None  # an answer is cleared once read
    assert secret.exists() and not (folder / f"{planted}.json").exists()
    ok = answer_to("r-attack", name)
    assert ok is not None and ok.delivered and ok.step == 1
    no = answer_to("r-attack", refused)
    assert no is not None and not no.delivered and no.reason == "step 3 is not running"
    assert (folder / "not-a-message.json").exists()  # strangers are left alone, unread


def _steer_tasks() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t.get_name() == "steer spool"]


async def test_one_poller_serves_every_live_run_of_a_loop_and_ends_with_the_last() -> None:
    """A batch's items share one poller: each message reaches its own run, and when the last
    run ends no poller is left behind (nor any run's folder)."""
    said: dict[str, list[str]] = {"r-one": [], "r-two": []}

    def deliverer(run_id: str) -> Callable[[int | None, str], int]:
        def deliver(step: int | None, text: str) -> int:
            said[run_id].append(text)
            return 1

        return deliver

    async with watching("r-one", deliverer("r-one")), watching("r-two", deliverer("r-two")):
        assert len(_steer_tasks()) == 1
        post("r-one", SteerMessage(text="to one"))
        second = post("r-two", SteerMessage(text="to two"))
        await until(lambda: answer_to("r-two", second) is not None, "run two never answered")
        await until(lambda: said["r-one"] == ["to one"], "run one never got its message")
        assert said == {"r-one": ["to one"], "r-two": ["to two"]}
    await until(lambda: not _steer_tasks(), "the poller outlived the runs")
    assert not spool_dir("r-one").exists() and not spool_dir("r-two").exists()
