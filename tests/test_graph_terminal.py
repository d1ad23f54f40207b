"""Gates on the terminal and headless: ``baton run`` asks (continue, edit in $EDITOR or typed,
send back, stop), ``--gate`` answers without asking, and without a terminal a gate fails the
run with the reason instead of waiting."""

from __future__ import annotations

import asyncio
import io
import json
import os
import queue
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from core.cli import main
from core.config.settings import save_settings
from core.model.events import GateDecided, GateWaiting, RunFinished, event_from_json
from core.run.gates import GateUnanswerable, fixed_answers
from core.terminal.gate_prompt import TerminalGateAsker
from tests.cli_child import start_baton
from tests.graph_runs import by_agent, graph_runner
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
    secret = "tok-gate+ept=ance-7f3e2d1c0b9a8877"
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    llm_server.responder = by_agent({"worker": lambda task: f"the token is {secret}"})
    out = io.StringIO()
    asker = TerminalGateAsker(out, reader("c"), editor="")
    runner, events = graph_runner(llm_server, GATED, tmp_path, gate_asker=asker)
    assert (await runner.run()).status == "ok"
    assert "the token is " in out.getvalue() and secret not in out.getvalue()
    assert all(secret not in e.model_dump_json() for e in events)


class Screen(io.StringIO):
    """The terminal's output: a test waits for a text to be shown there (the asker writes
    from the event loop, a reader thread may too)."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = threading.Condition()

    def write(self, text: str) -> int:
        with self._changed:
            written = super().write(text)
            self._changed.notify_all()
        return written

    async def shown(self, text: str, after: str = "") -> None:
        """Return once ``text`` is on the screen (after ``after``, when given)."""

        def seen() -> bool:
            screen = self.getvalue()
            return text in screen[screen.index(after) :] if after in screen else False

        def wait() -> None:
            with self._changed:
                assert self._changed.wait_for(seen, timeout=WAIT_S), f"never shown: {text!r}"

        await asyncio.to_thread(wait)


class Keyboard:
    """The terminal's input: ``read_line`` blocks, as ``input()`` does, until a line is typed
    (a prompt is echoed to the screen as ``input()`` prints it); nobody types unless the test
    does. ``unplug`` ends every read still waiting, as a closed terminal does."""

    def __init__(self, screen: Screen) -> None:
        self._screen = screen
        self._typed: queue.Queue[str | None] = queue.Queue()
        self.reads = 0

    def read_line(self, prompt: str) -> str:
        self.reads += 1
        self._screen.write(prompt)
        line = self._typed.get()
        if line is None:
            raise EOFError
        return line

    def type(self, line: str) -> None:
        self._typed.put(line)

    def unplug(self) -> None:
        for _ in range(8):
            self._typed.put(None)


WAIT_S = 60.0
"""How long a test waits for a condition before it fails (never how long anything should
take: a gate's timeout is the only clock these tests depend on)."""

TIMED = """\
name: timed
mode: graph
steps:
  - {{name: draft, agent: worker, task: "Draft: $@"}}
  - name: ship
    agent: worker
    task: "Ship: {{previous}}"
    gate: {{question: "Ship it?", timeout: 1, default: {default}}}
"""


@pytest.mark.parametrize(
    ("default", "status", "requests"), [("continue", "ok", 2), ("stop", "aborted", 1)]
)
async def test_a_gate_nobody_answers_on_the_terminal_takes_its_default_at_the_timeout(
    llm_server: LLMServer, tmp_path: Path, default: str, status: str, requests: int
) -> None:
    llm_server.responder = by_agent({"worker": lambda task: f"did {task}"})
    screen = Screen()
    keyboard = Keyboard(screen)
    asker = TerminalGateAsker(screen, keyboard.read_line, editor="")
    runner, events = graph_runner(
        llm_server, TIMED.format(default=default), tmp_path, gate_asker=asker
    )
    try:
        result = await runner.run()
    finally:
        keyboard.unplug()
    assert result.status == status
    (decided,) = [e for e in events if isinstance(e, GateDecided)]
    assert (decided.decision, decided.by) == (default, "timeout")
    assert len(llm_server.requests) == requests
    assert keyboard.reads == 1  # the person was asked, on the terminal
    assert f"Ship it? (no answer in 1 s: {default})" in screen.getvalue()


async def test_an_editor_left_open_past_the_timeout_is_closed(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The person chose edit and walked away: the timeout's default is taken, and the editor
    that would hold the terminal (and keep ``baton run`` from exiting) is closed."""
    llm_server.responder = by_agent({"worker": lambda task: f"did {task}"})
    pid_file = tmp_path / "editor.pid"
    editor = tmp_path / "editor.sh"
    editor.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 600\n", encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    screen = Screen()
    keyboard = Keyboard(screen)
    keyboard.type("e")
    asker = TerminalGateAsker(screen, keyboard.read_line, editor=str(editor))
    timed = TIMED.format(default="continue")
    runner, events = graph_runner(llm_server, timed, tmp_path, gate_asker=asker)
    try:
        result = await runner.run()
    finally:
        keyboard.unplug()
    assert result.status == "ok"
    (decided,) = [e for e in events if isinstance(e, GateDecided)]
    assert (decided.decision, decided.by) == ("continue", "timeout")
    assert "decided while the editor was open: the edit is dropped" in screen.getvalue()
    if pid_file.exists():  # else it was closed before it could say who it was
        assert not psutil.pid_exists(int(pid_file.read_text(encoding="utf-8")))


TWO_GATES = """\
name: two-gates
mode: graph
steps:
  - {name: draft, agent: worker, task: "Draft: $@"}
  - name: ship
    agent: worker
    task: "Ship: {previous}"
    gate: {question: "Ship it?", timeout: 1, default: continue}
  - name: announce
    agent: worker
    task: "Announce: {previous}"
    gate: {question: "Announce it?", timeout: 600, default: continue}
"""


async def test_a_line_typed_after_a_gate_timed_out_answers_the_gate_then_asking(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The read begun for a gate that timed out cannot be taken back (``input()`` blocks):
    it must not swallow the answer the person types at the next gate."""
    llm_server.responder = by_agent({"worker": lambda task: f"did {task}"})
    screen = Screen()
    keyboard = Keyboard(screen)
    asker = TerminalGateAsker(screen, keyboard.read_line, editor="")
    runner, events = graph_runner(llm_server, TWO_GATES, tmp_path, gate_asker=asker)
    run = asyncio.create_task(runner.run())
    try:
        await screen.shown("[x] stop: ", after="Gate before 'announce'")
        keyboard.type("x")
        result = await asyncio.wait_for(run, WAIT_S)
    finally:
        keyboard.unplug()
    decided = [(e.gate_id, e.decision, e.by) for e in events if isinstance(e, GateDecided)]
    assert decided == [("ship#1", "continue", "timeout"), ("announce#2", "stop", "person")]
    assert result.status == "aborted"
    assert len(llm_server.requests) == 2


def baton_run_on_a_terminal(preset: str, folder: Path, typed: str = "") -> tuple[int, str, str]:
    """``baton run PRESET --json`` with a terminal (a pseudo-terminal) as its input, where
    ``typed`` is typed ahead and nothing more; returns its exit status, stdout and stderr.
    The terminal stays open until the child has exited: its end is not an end of input."""
    controller, terminal = os.openpty()
    arguments = ["run", preset, "x", "--json", "--cwd", str(folder), "--scope", "user"]
    child = start_baton(arguments, stdin=terminal)
    try:
        os.write(controller, typed.encode())
        out, err = child.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("baton run still waits for its terminal")
    finally:
        os.close(terminal)
        os.close(controller)
    return child.returncode, out, err


def test_baton_run_on_a_terminal_nobody_answers_ends_once_the_gate_timed_out(
    gated_preset: LLMServer, user_presets: Path, tmp_path: Path
) -> None:
    """A real ``baton run`` on a terminal: the gate times out to its default, the run ends,
    and the process exits without anyone pressing Enter (a read still blocked on the
    terminal kept it alive, or aborted its exit). The prompt stays off the JSON on stdout."""
    (user_presets / "timed.yaml").write_text(TIMED.format(default="continue"), encoding="utf-8")
    code, out, err = baton_run_on_a_terminal("timed", tmp_path)
    assert code == 0, err
    assert "Gate before 'ship': Ship it? (no answer in 1 s: continue)" in err
    events = [event_from_json(line) for line in out.splitlines()]
    (decided,) = [e for e in events if isinstance(e, GateDecided)]
    assert (decided.decision, decided.by) == ("continue", "timeout")
    assert len(gated_preset.requests) == 2


def test_baton_run_reads_the_answer_typed_on_its_terminal(
    gated_preset: LLMServer, tmp_path: Path
) -> None:
    code, out, err = baton_run_on_a_terminal("gated", tmp_path, typed="c\n")
    assert code == 0, err
    assert "[x] stop: " in err
    (decided,) = [e for e in map(event_from_json, out.splitlines()) if isinstance(e, GateDecided)]
    assert (decided.decision, decided.by) == ("continue", "person")
    assert len(gated_preset.requests) == 2
