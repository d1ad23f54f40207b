"""The built app does everything the pip install does: one case per subsystem, each driven
through the bundle's own ``baton`` command (see conftest.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests import real_clis
from tests.anthropic_server import AnthropicServer, ToolUse, reply
from tests.bundle.conftest import Baton, configure
from tests.git_repos import git, make_repo
from tests.llm_server import LLMServer, Reply, ToolCall

PRICED = "gpt-4o-mini"
"""A model in genai-prices' table: the run's cost comes from the bundled price data."""


def test_self_test_runs_a_step_and_the_window(baton: Baton) -> None:
    lines = baton("--self-test").out.splitlines()
    assert lines[-1] == "self-test passed"
    checks = {line.split(":")[0].split(maxsplit=1)[1] for line in lines if line.startswith("ok")}
    assert {"dependency metadata", "agent step", "window", "charts", "window run"} <= checks


def test_own_loop_chain_with_bash_allowed_denied_and_decided_by_a_rule(
    baton: Baton, model: LLMServer, tmp_path: Path
) -> None:
    # Allowed (--approve all), in a chain whose Markdown answer, usage and cost are printed.
    model.queue(
        Reply.tool("bash", {"command": "echo allowed > allowed.txt"}),
        Reply.answer("## Found\n\nWrote **allowed.txt**."),
        Reply.answer("1. Keep it."),
    )
    chain = ["--chain", "worker=write it", "planner=plan: {previous}"]
    out = baton("run", *chain, "--approve", "all", "--model", PRICED, "--cwd", str(tmp_path)).out
    assert (tmp_path / "allowed.txt").read_text() == "allowed\n"
    assert "## Found\n\nWrote **allowed.txt**." in out
    assert "Wrote **allowed.txt**." in model.requests[2].user_text  # handed on: {previous}
    assert "✓ run ok" in out and "↑" in out and "$0.0" in out
    [run] = baton.runs()
    assert run["usage"]["priced"] and run["usage"]["cost"] > 0

    # Denied (--approve deny): the command never runs, the model reads why.
    model.queue(Reply.tool("bash", {"command": "touch denied.txt"}), Reply.answer("ok"))
    baton("run", "--agent", "worker", "--task", "try", "--approve", "deny", "--cwd", str(tmp_path))
    assert not (tmp_path / "denied.txt").exists()
    assert "Denied" in model.requests[4].tool_messages[0]["content"]

    # Decided by the project's rules, with nobody at a terminal to ask.
    baton("rules", "--cwd", str(tmp_path), "add", "allow", "Bash(echo:*)")
    baton("rules", "--cwd", str(tmp_path), "add", "deny", "Bash(rm:*)")
    model.queue(
        Reply.tools(
            ToolCall("bash", {"command": "echo ruled"}),
            ToolCall("bash", {"command": "rm allowed.txt"}),
        ),
        Reply.answer("done"),
    )
    baton("run", "--agent", "worker", "--task", "rules", "--cwd", str(tmp_path))
    assert (tmp_path / "allowed.txt").exists()
    allowed, denied = model.requests[6].tool_messages
    assert allowed["content"].startswith("ruled\n")
    assert "Denied" in denied["content"] and "rm" in denied["content"]


@pytest.mark.integration
def test_pi_backend_gated_then_its_transcript_imported(
    baton: Baton, llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pi = real_clis.find(real_clis.PI_CLIS[0], monkeypatch)
    work = real_clis.configure_pi(tmp_path, llm_server, monkeypatch)
    configure(pi_path=str(pi))
    llm_server.queue(
        Reply.tool("bash", {"command": "touch pwned.txt"}, call_id="call_deny"),
        Reply.answer("I could not run it."),
        Reply.tool("bash", {"command": "touch made.txt"}, call_id="call_allow"),
        Reply.answer("Made it."),
    )
    run = ["run", "--backend", "pi", "--agent", "worker", "--cwd", str(work)]
    out = baton(*run, "--task", "go", "--approve", "deny").out
    assert not (work / "pwned.txt").exists() and "I could not run it." in out
    baton(*run, "--task", "again", "--approve", "all")
    assert (work / "made.txt").exists()

    # pi's own session file of that step is a transcript a person can import.
    sessions = sorted(Path(os.environ["BATON_DATA_DIR"]).glob("pi-sessions/**/*.jsonl"))
    assert sessions, "pi left no session file"
    before = len(baton.runs())
    baton("runs", "import", str(sessions[-1]))
    assert len(baton.runs()) == before + 1


@pytest.mark.integration
def test_claude_code_backend_gated(
    baton: Baton, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = real_clis.find(real_clis.CLAUDE_CLIS[0], monkeypatch)
    with AnthropicServer() as server:
        real_clis.point_claude_at(server.url, monkeypatch)
        configure(claude_path=str(claude))
        work = tmp_path / "work"
        work.mkdir()
        (work / "hello.txt").write_text("hello\n", encoding="utf-8")
        copy = ToolUse("Bash", {"command": "cp hello.txt copy.txt", "description": "Copy"})
        server.script = [reply("I'll copy it.", copy), reply("Understood, not copying.")]
        out = baton(
            "run",
            "--backend",
            "claude",
            "--agent",
            "worker",
            "--task",
            "Copy hello.txt",
            "--approve",
            "deny",
            "--cwd",
            str(work),
        ).out
        assert "Understood, not copying." in out
        assert not (work / "copy.txt").exists()
        assert len(server.main_requests) == 2


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no bash sandbox")
def test_bash_is_sandboxed(baton: Baton, model: LLMServer, tmp_path: Path) -> None:
    config = Path(os.environ["BATON_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "planted.txt").write_text("secret-in-config\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    attack = f"cat {config}/planted.txt; echo escaped > {outside}/escaped.txt; echo in > in.txt"
    model.queue(Reply.tool("bash", {"command": attack}), Reply.answer("done"))
    baton("run", "--agent", "worker", "--task", "t", "--approve", "all", "--cwd", str(work))
    result = model.requests[1].tool_messages[0]["content"]
    assert "secret-in-config" not in result
    assert not (outside / "escaped.txt").exists()
    assert (work / "in.txt").read_text() == "in\n"  # the working folder stays writable


def test_documents_create_search_edit_delete(baton: Baton) -> None:
    created = baton(
        "docs", "add", "--title", "登录设计", "--content", "用户登录 and sign-in notes", "--json"
    ).json()
    number = str(created["id"])
    assert baton("docs", "search", "登录", "--json").json()["total"] == 1
    assert baton("docs", "search", "sign", "--json").json()["total"] == 1
    baton("docs", "edit", number, "--content", "密码重置 password reset")
    assert baton("docs", "search", "密码", "--json").json()["total"] == 1
    assert baton("docs", "search", "登录用户", "--json").json()["total"] == 0
    baton("docs", "delete", number, "--yes")
    assert baton("docs", "list", "--json").json()["total"] == 0


def edit_app(model: LLMServer) -> None:
    model.queue(
        Reply.tool("edit", {"path": "app.py", "old_string": "hello", "new_string": "hi"}),
        Reply.answer("Changed the greeting."),
    )


def test_checkpoints_diff_and_restore_in_a_git_checkout(
    baton: Baton, model: LLMServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    edit_app(model)
    baton("run", "--agent", "worker", "--task", "greet", "--approve", "all", "--cwd", str(repo))
    assert "'hi'" in (repo / "app.py").read_text()
    [run] = baton.runs()
    patch = baton("runs", "diff", run["id"]).out
    assert "-    return 'hello'" in patch and "+    return 'hi'" in patch
    baton("runs", "restore", run["id"], "--step", "1", "--yes")
    assert (repo / "app.py").read_text() == "def greet():\n    return 'hello'\n"
    assert (repo / "staged.txt").read_text() == "three\n"  # the person's own work is kept


def test_worktree_run_and_merge(baton: Baton, model: LLMServer, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "commit", "-q", "-m", "staged")
    edit_app(model)
    baton(
        "run",
        "--agent",
        "worker",
        "--task",
        "greet",
        "--worktree",
        "--approve",
        "all",
        "--cwd",
        str(repo),
    )
    assert "'hello'" in (repo / "app.py").read_text()  # the checkout is untouched
    [run] = baton.runs()
    baton("runs", "merge", run["id"])
    assert "'hi'" in (repo / "app.py").read_text()


def test_run_export_search_and_compare(baton: Baton, model: LLMServer, tmp_path: Path) -> None:
    model.queue(Reply.answer("登录 uses exponential backoff"), Reply.answer("no backoff here"))
    for task in ("map the login", "map the logout"):
        baton("run", "--agent", "scout", "--task", task, "--cwd", str(tmp_path))
    second, first = baton.runs()
    markdown = baton("runs", "export", first["id"]).out
    assert "map the login" in markdown and "登录 uses exponential backoff" in markdown
    exported = baton("runs", "export", first["id"], "--format", "json").json()
    assert exported[0]["type"] == "run_started"
    hits = baton("runs", "search", "登录", "--json").json()
    assert [hit["run_id"] for hit in hits] == [first["id"]]
    compared = baton("runs", "compare", first["id"], second["id"]).out
    assert "exponential backoff" in compared and "no backoff here" in compared


def test_local_batch(baton: Baton, model: LLMServer, tmp_path: Path) -> None:
    model.responder = lambda body: Reply.answer("noted")
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps({"args": [f"item-{n}"]}) + "\n" for n in range(3)))
    out = baton(
        "batch",
        "scout-and-plan",
        "--inputs",
        str(inputs),
        "--concurrency",
        "2",
        "--json",
        "--cwd",
        str(tmp_path),
    ).out
    ends = [json.loads(line) for line in out.splitlines()]
    assert len(model.requests) == 6  # two steps per item
    assert ends and all("batch_id" in line for line in ends)


def test_a_saved_run_opens_in_the_window(baton: Baton, model: LLMServer, tmp_path: Path) -> None:
    model.queue(Reply.tool("bash", {"command": "echo shown"}), Reply.answer("## Shown"))
    baton("run", "--agent", "worker", "--task", "t", "--approve", "all", "--cwd", str(tmp_path))
    [run] = baton.runs()
    picture = tmp_path / "window.png"
    baton("open", run["path"], "--screenshot", str(picture))
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
