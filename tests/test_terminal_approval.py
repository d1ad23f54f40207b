"""``--approve prompt``: the terminal shows what the dialog shows and offers its three choices."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from core.approvals import ApprovalAnswer, ApprovalRequest
from core.terminal_approval import TerminalApprover, describe_request


def _request(tool: str, cwd: Path, **arguments: object) -> ApprovalRequest:
    return ApprovalRequest(
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
    assert "worker (step 2) wants to use bash" in shown
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


async def test_end_of_input_denies(tmp_path: Path) -> None:
    answer, _, _ = await _ask(_request("bash", tmp_path, command="ls"), None)
    assert answer.decision == "deny" and answer.reason == "No answer (input closed)."


async def test_edit_shows_the_same_diff_as_the_dialog(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    request = _request("edit", tmp_path, path="a.txt", old_string="two", new_string="three")
    answer, shown, _ = await _ask(request, "d", "")
    assert answer == ApprovalAnswer(decision="deny")
    assert "--- a/a.txt" in shown and "-two" in shown and "+three" in shown
    assert describe_request(request) in shown


async def test_other_tools_show_their_arguments(tmp_path: Path) -> None:
    text = describe_request(_request("document", tmp_path, action="delete", id=7))
    assert '"action": "delete"' in text and '"id": 7' in text
