"""One name and one status word per run, the same in the runs list, exports and the window."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.record.run_files import RunIndex
from core.record.run_names import run_name, status_word
from tests.llm_server import LLMServer, Reply


@pytest.mark.parametrize(
    ("mode", "preset", "args", "agents", "expected"),
    [
        ("chain", "implement", ["add", "a flag"], ["scout", "planner"], "implement add a flag"),
        ("chain", None, [], ["scout", "planner", "worker"], "scout → planner → worker"),
        ("parallel", None, [], ["beta", "beta", "gamma"], "parallel: beta ×2, gamma"),
        ("single", None, [], ["worker"], "worker"),
        ("single", None, [], [], ""),
    ],
)
def test_run_names(
    mode: str, preset: str | None, args: list[str], agents: list[str], expected: str
) -> None:
    assert run_name(mode, preset, args, agents) == expected


def test_one_word_for_a_cancelled_run() -> None:
    assert [status_word(s) for s in ("ok", "error", "aborted", "interrupted")] == [
        "done",
        "failed",
        "cancelled",
        "interrupted",
    ]


def test_a_parallel_run_reads_the_same_in_the_list_and_the_export(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    llm_server.queue(Reply.answer("one"), Reply.answer("two"))
    tasks = ["--parallel", "scout=look here", "--parallel", "scout=look there"]
    code = main(["run", *tasks, "--cwd", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    (record,) = RunIndex().list()
    assert main(["runs", "list"]) == 0
    listed = capsys.readouterr().out
    assert "parallel: scout ×2" in listed and "done" in listed
    assert main(["runs", "export", record.id, "--format", "md"]) == 0
    exported = capsys.readouterr().out
    assert exported.splitlines()[0] == "# parallel: scout ×2"
