"""Real git repositories for checkpoint tests, and a step that changes one in three ways."""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.model.events import Event, StepChanges
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from tests.llm_server import LLMServer, Reply, ToolCall

ALLOW = {"bash": "allow", "edit": "allow", "write": "allow"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def user_state(repo: Path) -> dict[str, str]:
    """Everything of the user's git state a checkpoint must not touch."""
    return {
        "status": git(repo, "status", "--porcelain"),
        "index": git(repo, "ls-files", "-s"),
        "stash": git(repo, "stash", "list"),
        "reflog": git(repo, "reflog", "show", "--all"),
        "branches": git(repo, "for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
        "head": git(repo, "symbolic-ref", "HEAD"),
    }


def make_repo(folder: Path) -> Path:
    """A repository with history, a staged change, a stash and an ignored file."""
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.name", "Person")
    git(folder, "config", "user.email", "person@example.com")
    (folder / "app.py").write_text("def greet():\n    return 'hello'\n", encoding="utf-8")
    (folder / "notes.txt").write_text("colour: red\nsize: big\n", encoding="utf-8")
    (folder / "staged.txt").write_text("one\n", encoding="utf-8")
    (folder / ".gitignore").write_text("*.log\n", encoding="utf-8")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "start")
    (folder / "staged.txt").write_text("two\n", encoding="utf-8")
    git(folder, "stash", "-q")
    (folder / "staged.txt").write_text("three\n", encoding="utf-8")
    git(folder, "add", "staged.txt")
    (folder / "debug.log").write_text("ignored\n", encoding="utf-8")
    return folder


def three_changes(server: LLMServer) -> None:
    server.queue(
        Reply.tools(
            ToolCall("edit", {"path": "app.py", "old_string": "hello", "new_string": "hi"}),
            ToolCall("write", {"path": "docs/new.md", "content": "# New\n"}),
            ToolCall("bash", {"command": "sed -i 's/red/blue/' notes.txt && echo x >> run.log"}),
        ),
        Reply.answer("Done."),
    )


async def run_step(server: LLMServer, folder: Path, **settings: object) -> list[Event]:
    events: list[Event] = []
    runner = Runner(
        RunRequest(
            mode="single", steps=[StepSpec(agent="worker", task="change things")], cwd=folder
        ),
        settings=server.settings(policy=ALLOW, **settings),
        listeners=[events.append],
    )
    finished = await runner.run()
    assert finished.status == "ok", finished.error
    return events


def changes_of(events: list[Event]) -> StepChanges:
    (changes,) = [e for e in events if isinstance(e, StepChanges)]
    return changes


async def isolated_run(server: LLMServer, folder: Path) -> list[Event]:
    """The three changes, in a run that works in its own worktree (checked: ok)."""
    three_changes(server)
    events: list[Event] = []
    request = RunRequest(
        mode="single",
        steps=[StepSpec(agent="worker", task="change things")],
        cwd=folder,
        isolation="worktree",
    )
    runner = Runner(request, settings=server.settings(policy=ALLOW), listeners=[events.append])
    finished = await runner.run()
    assert finished.status == "ok", finished.error
    return events


async def run_parallel_edits(server: LLMServer, folder: Path) -> list[Event]:
    """A parallel run of two tasks in ``folder``: one edits app.py, the other writes
    docs/new.md (whichever task asks first gets the first reply: both files change)."""
    server.queue(
        Reply.tools(
            ToolCall("edit", {"path": "app.py", "old_string": "hello", "new_string": "hi"})
        ),
        Reply.tools(ToolCall("write", {"path": "docs/new.md", "content": "# New\n"})),
        Reply.answer("Done."),
        Reply.answer("Done."),
    )
    events: list[Event] = []
    steps = [StepSpec(agent="worker", task="one"), StepSpec(agent="worker", task="two")]
    runner = Runner(
        RunRequest(mode="parallel", steps=steps, cwd=folder),
        settings=server.settings(policy=ALLOW),
        listeners=[events.append],
    )
    finished = await runner.run()
    assert finished.status == "ok", finished.error
    return events
