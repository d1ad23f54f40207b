"""Gates on the terminal and headless: ``baton run`` asks (continue, edit in $EDITOR or typed,
send back, stop), ``--gate`` answers without asking, and without a terminal a gate fails the
run with the reason instead of waiting."""

from __future__ import annotations

import io
import json
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.model.events import GateDecided, GateWaiting, RunFinished, event_from_json
from core.run.gates import GateUnanswerable, fixed_answers
from core.terminal.gate_prompt import TerminalGateAsker
from tests.graph_runs import by_agent
from tests.llm_server import LLMServer

GATED = """\
name: gated
mode: graph
steps:
  - {name: draft, agent: worker, task: "Draft: $@"}
  - name: ship
    agent: worker
    task: "Ship: {previous}"
    gate: {question: "Ship it?", default: stop}
"""

WAITING = GateWaiting(
    run_id="r",
    gate_id="ship#1",
    node="ship",
    question="Ship it?",
    handoff="draft 1",
    options=["continue", "edit", "send_back", "stop"],
)


def lines(*answers: str) -> Iterator[str]:
    yield from answers


def reader(*answers: str) -> Callable[[str], str]:
    given = lines(*answers)

    def read(prompt: str) -> str:
        try:
            return next(given)
        except StopIteration:
            raise EOFError from None

    return read


async def test_the_terminal_shows_the_handoff_and_reads_each_decision() -> None:
    out = io.StringIO()
    asker = TerminalGateAsker(out, reader("what?", "c"), editor="")
    answer = await asker(WAITING)
    assert answer.decision == "continue" and answer.by == "person"
    assert "Gate before 'ship': Ship it?" in out.getvalue()
    assert "What would be handed on:\ndraft 1" in out.getvalue()
    sent = await TerminalGateAsker(out, reader("s", "shorter"), editor="")(WAITING)
    assert (sent.decision, sent.note) == ("send_back", "shorter")
    assert (await TerminalGateAsker(out, reader("x"), editor="")(WAITING)).decision == "stop"


async def test_an_edit_without_an_editor_is_typed_until_a_dot() -> None:
    asker = TerminalGateAsker(io.StringIO(), reader("e", "line one", "line two", "."), editor="")
    answer = await asker(WAITING)
    assert (answer.decision, answer.text) == ("edit", "line one\nline two")


async def test_an_edit_opens_the_editor_on_the_handoff(tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    seen = tmp_path / "seen.txt"
    editor.write_text(
        f'#!/bin/sh\ncp "$1" {seen}\nprintf "rewritten by hand\\n" > "$1"\n', encoding="utf-8"
    )
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    answer = await TerminalGateAsker(io.StringIO(), reader("e"), editor=str(editor))(WAITING)
    assert (answer.decision, answer.text) == ("edit", "rewritten by hand\n")
    assert seen.read_text(encoding="utf-8") == "draft 1"


async def test_closed_input_cannot_answer_and_fixed_answers_are_the_default() -> None:
    with pytest.raises(GateUnanswerable, match="input was closed"):
        await TerminalGateAsker(io.StringIO(), reader(), editor="")(WAITING)
    assert (await fixed_answers("continue")(WAITING)).by == "default"
    assert (await fixed_answers("default")(WAITING)).decision == "stop"
    pick = WAITING.model_copy(update={"options": ["attempt#1", "attempt#2"]})
    kept = await fixed_answers("continue")(pick)
    assert (kept.decision, kept.text) == ("continue", "attempt#1")
    chosen = await TerminalGateAsker(io.StringIO(), reader("2"), editor="")(pick)
    assert chosen.text == "attempt#2"


@pytest.fixture
def gated_preset(user_presets: Path, llm_server: LLMServer) -> LLMServer:
    save_settings(llm_server.settings())
    (user_presets / "gated.yaml").write_text(GATED, encoding="utf-8")
    llm_server.responder = by_agent({"worker": lambda task: f"did {task}"})
    return llm_server


def test_baton_run_without_a_terminal_fails_the_gate_with_the_reason(
    gated_preset: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "gated", "x", "--json", "--cwd", str(tmp_path), "--scope", "user"])
    assert code == 1
    events = [event_from_json(line) for line in capsys.readouterr().out.splitlines()]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.error == (
        "the gate before 'ship' needs a person: there is no terminal to ask on; "
        "pass --gate continue, --gate stop or --gate default"
    )
    assert len(gated_preset.requests) == 1


@pytest.mark.parametrize(("choice", "code", "requests"), [("continue", 0, 2), ("stop", 1, 1)])
def test_baton_run_gate_answers_every_gate(
    gated_preset: LLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    choice: str,
    code: int,
    requests: int,
) -> None:
    args = ["run", "gated", "x", "--cwd", str(tmp_path), "--scope", "user", "--gate", choice]
    assert main([*args, "--json"]) == code
    events = [event_from_json(line) for line in capsys.readouterr().out.splitlines()]
    (decided,) = [e for e in events if isinstance(e, GateDecided)]
    assert (decided.decision, decided.by) == (choice, "default")
    assert len(gated_preset.requests) == requests


def test_the_transcript_says_what_the_graph_did(
    gated_preset: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "gated", "x", "--cwd", str(tmp_path), "--scope", "user", "--gate", "continue"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "⏸ gate before ship: Ship it?" in out
    assert "⏵ gate ship#1: continue (default)" in out


@pytest.mark.parametrize(
    ("extra", "code", "status"), [([], 1, "error"), (["--gate", "continue"], 0, "ok")]
)
def test_a_batch_of_a_gated_graph_never_waits(
    gated_preset: LLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    code: int,
    status: str,
) -> None:
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"args": ["one"]}\n{"args": ["two"]}\n', encoding="utf-8")
    args = ["batch", "gated", "--inputs", str(inputs), "--json", "--cwd", str(tmp_path)]
    assert main([*args, "--scope", "user", *extra]) == code
    ends = [
        json.loads(line)
        for line in capsys.readouterr().out.splitlines()
        if '"run_finished"' in line
    ]
    assert [end["status"] for end in ends] == [status, status]
    if status == "error":
        assert "the gate before 'ship' needs a person" in ends[0]["error"]


class Terminal(io.StringIO):
    """A terminal's standard input that a person has typed into."""

    def isatty(self) -> bool:
        return True


def test_a_batch_on_a_terminal_still_never_asks_at_a_gate(
    gated_preset: LLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A person at the terminal is not asked about each item's gate (``c`` typed would
    continue): a batch's gates are answered by ``--gate`` or fail the item."""
    monkeypatch.setattr("sys.stdin", Terminal("c\nc\n"))
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"args": ["one"]}\n', encoding="utf-8")
    args = ["batch", "gated", "--inputs", str(inputs), "--json", "--cwd", str(tmp_path)]
    assert main([*args, "--scope", "user", "--approve", "deny"]) == 1
    (end,) = [line for line in capsys.readouterr().out.splitlines() if '"run_finished"' in line]
    assert json.loads(end)["error"] == (
        "the gate before 'ship' needs a person: a batch item has no one to ask at a gate; "
        "pass --gate continue, stop or default"
    )


async def test_a_hostile_handoff_cannot_redraw_the_gate_or_hide_words() -> None:
    """The model writes the hand-off the person decides on: escape sequences (clear the
    screen, conceal text), a carriage return over the question, a bidi override."""
    out = io.StringIO()
    hostile = WAITING.model_copy(
        update={"handoff": "ok\x1b[2J\x1b[8mrm -rf ~\x1b[0m\rAll good\u202eevil 登录\ttab"}
    )
    await TerminalGateAsker(out, reader("x"), editor="")(hostile)
    shown = out.getvalue()
    assert "\x1b" not in shown and "\r" not in shown and "\u202e" not in shown
    assert "ok\\x1b[2J\\x1b[8mrm -rf ~\\x1b[0m\\x0dAll good\\u202eevil 登录\ttab" in shown


async def test_a_secret_in_the_handoff_never_reaches_the_terminal(
    llm_server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.graph_runs import graph_runner

    secret = "tok-gate+ept=ance-7f3e2d1c0b9a8877"
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    llm_server.responder = by_agent({"worker": lambda task: f"the token is {secret}"})
    out = io.StringIO()
    asker = TerminalGateAsker(out, reader("c"), editor="")
    runner, events = graph_runner(llm_server, GATED, tmp_path, gate_asker=asker)
    assert (await runner.run()).status == "ok"
    assert "the token is " in out.getvalue() and secret not in out.getvalue()
    assert all(secret not in e.model_dump_json() for e in events)
