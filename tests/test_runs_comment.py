"""``baton runs comment``: review comments from a terminal, sent as a follow-up step against
the scripted server; a comment cannot quote a file from outside the run's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.record.run_files import RunIndex
from core.run.pending_comments import pending
from tests.llm_server import LLMServer, Reply


def _reviewed_run(server: LLMServer, folder: Path) -> str:
    save_settings(server.settings())
    folder.mkdir(exist_ok=True)
    (folder / "app.py").write_text("import os\nprint(os.environ)\n", encoding="utf-8")
    server.queue(Reply.answer("line one\nline two\nline three"))
    assert main(["run", "--agent", "scout", "--task", "look", "--cwd", str(folder)]) == 0
    [record] = RunIndex().list()
    return record.id


def test_comments_wait_then_go_to_a_follow_up_step(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _reviewed_run(llm_server, tmp_path)
    comment = ["runs", "comment", run_id, "--step", "1"]
    assert main([*comment, "--line", "2", "--end-line", "3", "say more here"]) == 0
    assert main([*comment, "--file", "app.py", "--line", "2", "do not print secrets"]) == 0
    assert "2 comments waiting" in capsys.readouterr().out
    assert [c.path for c in pending(run_id)] == ["step 1 output", "app.py"]

    llm_server.queue(Reply.answer("fixed"))
    assert main(["runs", "comments", run_id, "--send"]) == 0
    assert len(llm_server.requests) == 2  # the reviewed step was reused, not asked again
    task = "\n".join(
        str(m["content"]) for m in llm_server.requests[1].messages if m["role"] == "user"
    )
    assert "## Comment 1: step 1 output, line 2-3" in task
    assert "line two\nline three" in task and "say more here" in task
    assert "## Comment 2: app.py, line 2" in task and "print(os.environ)" in task
    assert pending(run_id) == []
    [follow_up] = [r for r in RunIndex().list() if r.id != run_id]
    assert follow_up.status == "ok" and follow_up.mode == "chain"


def test_bad_comments_are_refused(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _reviewed_run(llm_server, tmp_path / "project")
    (tmp_path / "secret.txt").write_text("the key\n", encoding="utf-8")
    comment = ["runs", "comment", run_id, "--step", "1", "--line", "1"]
    assert main([*comment, "--file", "../secret.txt", "quote it"]) == 2
    assert "outside the run's folder" in capsys.readouterr().err
    assert main([*comment, "--file", str(tmp_path / "secret.txt"), "quote it"]) == 2
    (tmp_path / "project" / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert main([*comment, "--file", "link.txt", "quote it"]) == 2
    assert main(["runs", "comment", run_id, "--step", "1", "--line", "9", "past the end"]) == 2
    assert "has 3 lines" in capsys.readouterr().err
    assert main(["runs", "comment", run_id, "--step", "4", "--line", "1", "no step"]) == 2
    assert main(["runs", "comment", "../../x", "--step", "1", "--line", "1", "hi"]) == 2
    assert main(["runs", "comments", run_id, "--send"]) == 2
    assert "no comments waiting" in capsys.readouterr().err
    assert pending(run_id) == []
    assert main([*comment, "fine"]) == 0
    capsys.readouterr()
    assert main(["runs", "comments", run_id]) == 0
    assert capsys.readouterr().out.strip() == "step 1 · step 1 output, line 1: fine"
    assert main(["runs", "comments", run_id, "--clear"]) == 0
    assert pending(run_id) == []
