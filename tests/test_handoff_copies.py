"""Hand-off copies live in Baton's data folder: the working folder stays as the person left
it, the next step can still read the copy, and nothing else in the data folder opens up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.cli import main
from core.config import paths
from core.config.settings import save_settings
from core.model.events import StepChanges
from core.record.run_files import RunIndex, load_run
from tests.git_repos import git
from tests.llm_server import LLMServer, Reply

ANSWER = "".join(f"line {n:06d} " + "x" * 88 + "\n" for n in range(1_000))  # 100 KB


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.name", "Person")
    git(folder, "config", "user.email", "person@example.com")
    (folder / "app.py").write_text("print('hi')\n", encoding="utf-8")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "start")
    return folder


def _marker_path(handed: str) -> str:
    found = re.search(r"The full text is in (\S+) \(open it with the read tool\)", handed)
    assert found is not None, handed[-400:]
    return found.group(1)


def _chain(server: LLMServer, folder: Path, *reads: str) -> list[str]:
    """Run scout → planner; the planner reads each of ``reads`` (the marker's path when
    ``"MARKER"``) and then answers. Returns the tool results the planner saw, in order."""
    calls = iter(reads)

    def respond(body: dict[str, object]) -> Reply:
        messages = body["messages"]
        assert isinstance(messages, list)
        user = next(m["content"] for m in messages if m["role"] == "user")
        if not str(user).startswith("PLAN:"):
            return Reply.answer(ANSWER)
        target = next(calls, None)
        if target is None:
            return Reply.answer("planned")
        path = _marker_path(str(user)) if target == "MARKER" else target
        return Reply.tool("read", {"path": path, "limit": 3})

    server.responder = respond
    save_settings(server.settings())
    assert (
        main(["run", "--chain", "scout=look", "planner=PLAN:{previous}", "--cwd", str(folder)]) == 0
    )
    return [str(m["content"]) for m in server.requests[-1].tool_messages]


def test_a_long_hand_off_leaves_git_status_clean_and_the_copy_readable(
    llm_server: LLMServer, repo: Path
) -> None:
    results = _chain(llm_server, repo, "MARKER")
    assert git(repo, "status", "--porcelain", "--ignored") == ""
    run = RunIndex().list()[0]
    copy = paths.data_dir() / "handoff" / run.id / "step-1.md"
    assert copy.read_text(encoding="utf-8") == ANSWER
    assert results == [
        "1\tline 000000 "
        + "x" * 88
        + "\n2\tline 000001 "
        + "x" * 88
        + "\n3\tline 000002 "
        + "x" * 88
        + "\n\n[Showing lines 1-3 of 1000. Call read with offset=4 to continue.]"
    ]
    changes = [e for e in load_run(Path(run.path)) if isinstance(e, StepChanges)]
    assert all(not e.files for e in changes), changes  # step 1 is blamed for nothing


def test_deleting_the_run_deletes_its_copies(llm_server: LLMServer, repo: Path) -> None:
    _chain(llm_server, repo)
    run = RunIndex().list()[0]
    folder = paths.data_dir() / "handoff" / run.id
    assert (folder / "step-1.md").is_file()
    RunIndex().delete(run.id)
    assert not folder.exists()


def test_no_other_data_folder_file_is_readable(llm_server: LLMServer, repo: Path) -> None:
    """The allowance is the current run's step files only: another run's copy, the run
    index, a look-alike name and a `..` walk out of the folder are all still refused."""
    other = paths.data_dir() / "handoff" / "20260101-000000-abcdef"
    other.mkdir(parents=True)
    (other / "step-1.md").write_text("someone else's answer\n", encoding="utf-8")
    (paths.data_dir() / "secret.md").write_text("private\n", encoding="utf-8")
    handoff = paths.data_dir() / "handoff"
    attempts = [
        str(other / "step-1.md"),
        str(paths.data_dir() / "secret.md"),
        str(handoff / "{run}" / ".." / ".." / "secret.md"),
        str(handoff / "{run}" / "notes.md"),
    ]
    reads = iter(attempts)
    calls: list[str] = []

    def respond(body: dict[str, object]) -> Reply:
        messages = body["messages"]
        assert isinstance(messages, list)
        user = str(next(m["content"] for m in messages if m["role"] == "user"))
        if not user.startswith("PLAN:"):
            return Reply.answer(ANSWER)
        run_id = Path(_marker_path(user)).parent.name
        target = next(reads, None)
        if target is None:
            return Reply.answer("planned")
        calls.append(target.replace("{run}", run_id))
        return Reply.tool("read", {"path": calls[-1]})

    llm_server.responder = respond
    save_settings(llm_server.settings())
    args = ["run", "--chain", "scout=look", "planner=PLAN:{previous}", "--cwd", str(repo)]
    assert main(args) == 0
    results = [str(m["content"]) for m in llm_server.requests[-1].tool_messages]
    assert len(results) == len(attempts)
    for path, result in zip(calls, results, strict=True):
        assert "someone else's" not in result and "private" not in result, (path, result)
        assert "Baton's own settings or data folder" in result or "outside" in result, result
