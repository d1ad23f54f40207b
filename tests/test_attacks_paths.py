"""Paths no file can have, sent by a hostile model through Baton's own agent loop: a NUL byte,
a lone surrogate (valid in JSON, not in a file name), a name or a path too long. Each must come
back to the model as a tool error it can read — the step goes on and the run ends ``ok`` —
never as an internal error that ends the step. Every call is approved, as a person might.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.backends.cli_paths import protected_refusal
from core.config.settings import save_settings
from core.safety.approvals import ApprovalRequest
from core.safety.rules import RuleSet, suggest_rule
from core.tools.approval_describe import describe
from tests.llm_server import LLMServer, Reply
from tests.test_attacks_tools import run_worker, tool_results

UNREPRESENTABLE = (
    ("nul", "notes\x00.txt"),
    ("nul-in-folder", "sub\x00dir/notes.txt"),
    ("surrogate", "notes-\ud800.txt"),
    ("long-name", "n" * 300 + ".txt"),
    ("long-path", "d/" * 2100 + "notes.txt"),
)


@pytest.mark.parametrize(("kind", "path"), UNREPRESENTABLE, ids=[k for k, _ in UNREPRESENTABLE])
def test_an_unrepresentable_path_is_a_tool_error_the_model_reads(
    llm_server: LLMServer, isolated_home: Path, kind: str, path: str
) -> None:
    save_settings(llm_server.settings())
    work = isolated_home / "work"
    work.mkdir()
    llm_server.queue(
        Reply.tool("write", {"path": path, "content": "x"}),
        Reply.tool("edit", {"path": path, "old_string": "x", "new_string": "y"}),
        Reply.tool("read", {"path": path}),
        Reply.tool("ls", {"path": path}),
        Reply.tool("grep", {"pattern": "x", "path": path}),
        Reply.tool("find", {"pattern": "*", "path": path}),
        Reply.answer("done"),
    )
    results = tool_results(run_worker(llm_server, work))  # asserts the run ended ok
    assert [r.status for r in results] == ["error"] * 6
    for result in results:
        assert "internal error" not in result.result.lower()
        assert result.result.startswith("The path") or "path" in result.result
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(("kind", "path"), UNREPRESENTABLE, ids=[k for k, _ in UNREPRESENTABLE])
def test_what_judges_and_describes_a_call_never_raises_for_an_unrepresentable_path(
    kind: str, path: str, tmp_path: Path
) -> None:
    """The rules, the rule suggestion, the approval description and the CLI backends' path
    check all look at the path before any tool does."""
    rules = RuleSet.from_texts(tmp_path, {"deny": ["Edit(secret/**)"], "allow": ["Read"]})
    for tool in ("write", "edit", "read", "ls"):
        arguments = {"path": path, "content": "x", "old_string": "x", "new_string": "y"}
        verdict = rules.evaluate(tool, None, arguments, tmp_path)
        assert verdict is None or verdict.kind in ("allow", "deny", "ask")
        suggest_rule(tool, None, arguments, tmp_path, tmp_path)
        request = ApprovalRequest(
            request_id="r", run_id="x", step=0, agent="worker", tool=tool, call_id="c",
            arguments=arguments, cwd=str(tmp_path),
        )  # fmt: skip
        description = describe(request)
        if tool in ("write", "edit"):
            assert "no preview" in description.diff
        assert protected_refusal({"file_path": path}, tmp_path) is None
