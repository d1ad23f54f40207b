"""``--approve prompt``: the terminal shows what the dialog shows (one describer for both) and
offers its choices, "always allow <rule> here" included."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from core.safety.approvals import ApprovalAnswer, ApprovalRequest
from core.terminal.approval_prompt import TerminalApprover, describe_request


def _request(
    tool: str, cwd: Path, suggested_rule: str | None = None, **arguments: object
) -> ApprovalRequest:
    return ApprovalRequest(
        suggested_rule=suggested_rule,
        request_id="r-a1",
        run_id="r",
        step=1,
        agent="worker",
        tool=tool,
        call_id="c1",
        arguments=arguments,
        cwd=str(cwd),
    )


def _answers(*lines: str | None) -> tuple[Callable[[str], str], list[str]]:
    """A ``read_line`` that returns ``lines`` in order (None: end of input) and records the
    prompts it was given."""
    prompts: list[str] = []
    pending = list(lines)

    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        line = pending.pop(0)
        if line is None:
            raise EOFError
        return line

    return read_line, prompts


async def _ask(
    request: ApprovalRequest, *lines: str | None
) -> tuple[ApprovalAnswer, str, list[str]]:
    out = io.StringIO()
    read_line, prompts = _answers(*lines)
    answer = await TerminalApprover(out=out, read_line=read_line)(request)
    return answer, out.getvalue(), prompts


async def test_bash_shows_command_and_folder_and_once_approves(tmp_path: Path) -> None:
    answer, shown, prompts = await _ask(_request("bash", tmp_path, command="make test"), "o")
    assert answer == ApprovalAnswer(decision="approve")
    assert "worker wants to run a command (step 2, tool bash)" in shown
    assert f"folder:  {tmp_path}" in shown and "command: make test" in shown
    assert "[o]nce" in prompts[0] and "[r]" in prompts[0] and "[d]eny" in prompts[0]


async def test_run_approves_the_tool_for_the_run(tmp_path: Path) -> None:
    answer, _, _ = await _ask(_request("bash", tmp_path, command="ls"), "r")
    assert answer == ApprovalAnswer(decision="approve_run")


async def test_deny_asks_for_a_reason_and_returns_it(tmp_path: Path) -> None:
    answer, _, prompts = await _ask(
        _request("bash", tmp_path, command="rm -rf /"), "maybe", "d", "never delete the disk"
    )
    assert answer == ApprovalAnswer(decision="deny", reason="never delete the disk")
    assert len(prompts) == 3  # an unknown answer asks again
    assert prompts[2].startswith("Reason for the agent")


async def test_end_of_input_denies_and_says_nobody_answered(tmp_path: Path) -> None:
    answer, _, _ = await _ask(_request("bash", tmp_path, command="ls"), None)
    assert answer.decision == "deny" and answer.decided_by == "no_one"
    assert answer.denial_message() == "Denied: no answer (the terminal's input was closed)"


async def test_always_allow_offers_the_suggested_rule(tmp_path: Path) -> None:
    request = _request("bash", tmp_path, "Bash(git diff:*)", command="git diff HEAD~1")
    answer, _, prompts = await _ask(request, "a")
    assert "[a]lways allow Bash(git diff:*) here" in prompts[0]
    assert answer == ApprovalAnswer(decision="approve", remember_rule="Bash(git diff:*)")


async def test_without_a_suggestion_always_is_not_offered(tmp_path: Path) -> None:
    answer, _, prompts = await _ask(_request("bash", tmp_path, command="a; b"), "a", "o")
    assert "always" not in prompts[0] and len(prompts) == 2
    assert answer.decision == "approve" and answer.remember_rule is None


async def test_edit_shows_the_same_diff_as_the_dialog(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    request = _request("edit", tmp_path, path="a.txt", old_string="two", new_string="three")
    answer, shown, _ = await _ask(request, "d", "")
    assert answer == ApprovalAnswer(decision="deny")
    assert "--- a/a.txt" in shown and "-two" in shown and "+three" in shown
    assert describe_request(request) in shown


async def test_other_tools_show_their_arguments(tmp_path: Path) -> None:
    text = describe_request(_request("deploy", tmp_path, target="prod", replicas=3))
    assert '"target": "prod"' in text and '"replicas": 3' in text


async def test_documents_show_the_same_facts_as_the_dialog(tmp_path: Path) -> None:
    text = describe_request(_request("document", tmp_path, action="delete", id=7))
    assert "wants to delete document #7" in text
    assert "Document: #7" in text and "Change: the document and its content are removed" in text


async def test_a_huge_diff_is_capped_on_the_terminal_too(tmp_path: Path) -> None:
    content = "x\n" * 3000
    text = describe_request(_request("write", tmp_path, path="big.txt", content=content))
    assert "(diff too large — 3003 lines)" in text
    assert text.count("\n") < 10


async def test_the_rule_that_asked_is_named(tmp_path: Path) -> None:
    request = _request("bash", tmp_path, command="git push").model_copy(
        update={"rule": "ask Bash(git push:*)"}
    )
    assert "  Asked by the project rule Bash(git push:*)" in describe_request(request)


async def test_rewriting_a_big_file_is_not_diffed(tmp_path: Path) -> None:
    """difflib is quadratic in changed lines: a 40,000-line rewrite took 100 s uncapped."""
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(40_000)))
    content = "".join(f"line {i * 7}\n" for i in range(40_000))
    text = describe_request(_request("write", tmp_path, path="big.txt", content=content))
    assert "(diff too large — 80000 lines)" in text
