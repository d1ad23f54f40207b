"""Gates on a terminal (``baton run`` of a graph preset; architecture: "Graph pipelines").

A gate shows its question and what would be handed on, then reads one of: continue, edit
(``$VISUAL``/``$EDITOR`` opens the hand-off in a private temporary file; without an editor the
new text is typed, ending with a line holding only ``.``), send back with a note, or stop. A
best-of pick lists the attempts by number instead. Reading happens in a worker thread, so
other steps keep running while the person reads.

A gate with a ``timeout`` says so beside its question. When it passes (or the window answers
first) the gate stops waiting, but a read blocked on the terminal cannot be taken back: it is
left pending in a daemon thread (:class:`TerminalLines`), so it keeps neither the process
alive nor the next gate's answer to itself, and an editor still open is closed.

Without a terminal nobody is asked: ``--gate continue|stop`` answers every gate, ``--gate
default`` takes each gate's own default, and with none of them the gate fails the run with the
reason — a headless run never waits for an answer that cannot come.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import tempfile
import threading
import unicodedata
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TextIO

from core.model.events import GateWaiting
from core.run.gates import (
    PERSON_OPTIONS,
    GateAnswer,
    GateAsker,
    GateChoice,
    GateUnanswerable,
    fixed_answers,
    nobody_to_ask,
)

EDITOR_GRACE_S = 5.0
"""How long an editor gets to end once its gate was decided without it."""
_CHOICES = "[c]ontinue  [e]dit what is handed on  [s]end back with a note  [x] stop"


class TerminalLines:
    """The terminal's lines, read one at a time by a daemon thread.

    ``input()`` cannot be interrupted, so a gate that stops waiting (its timeout, an answer
    from the window) leaves its read pending. In the event loop's executor that read would
    keep ``baton run`` from exiting until someone pressed Enter, and the next gate's read
    would queue behind it: the person's answer to that gate would go to the one already
    decided. Here the pending read is shared instead: a line typed while a gate asks answers
    that gate, whichever gate the read began for; a line typed while none asks is dropped
    (its gate was decided without it)."""

    def __init__(self, read_line: Callable[[str], str]) -> None:
        self._read_line = read_line
        self._pending: Future[str] | None = None

    async def read(self) -> str:
        """The next line typed; raises ``EOFError`` when the terminal's input is closed."""
        if self._pending is None or self._pending.done():
            self._pending = self._start()
        return await asyncio.wrap_future(self._pending)

    def _start(self) -> Future[str]:
        future: Future[str] = Future()
        future.set_running_or_notify_cancel()  # a cancelled waiter cannot cancel the read

        def read() -> None:
            try:
                future.set_result(self._read_line(""))
            except Exception as error:  # EOFError, or the terminal went away
                future.set_exception(error)

        threading.Thread(target=read, name="baton-gate-input", daemon=True).start()
        return future


class TerminalGateAsker:
    """Asks each gate on the terminal, one at a time."""

    def __init__(
        self,
        out: TextIO | None = None,
        read_line: Callable[[str], str] | None = None,
        editor: str | None = None,
    ) -> None:
        self._out = out or sys.stderr
        self._lines = TerminalLines(read_line or terminal_line)
        self._editor = editor if editor is not None else editor_command()
        self._lock = asyncio.Lock()

    async def __call__(self, waiting: GateWaiting) -> GateAnswer:
        async with self._lock:
            return await self._ask(waiting)

    async def _ask(self, waiting: GateWaiting) -> GateAnswer:
        person = [o for o in waiting.options if o in PERSON_OPTIONS]
        question = visible(waiting.question) + _deadline(waiting)
        self._say(f"\n── Gate before '{waiting.node}': {question}")
        if waiting.handoff:
            self._say(f"What would be handed on:\n{visible(waiting.handoff)}\n")
        if not person:
            return await self._pick(waiting)
        while True:
            answer = (await self._line(f"{_CHOICES}: ")).lower()
            if answer in ("c", "continue", "y", "yes"):
                return GateAnswer("continue")
            if answer in ("x", "stop", "q"):
                return GateAnswer("stop")
            if answer in ("s", "send back", "send_back"):
                note = await self._line("Note for the step sent back: ")
                return GateAnswer("send_back", note=note or None)
            if answer in ("e", "edit"):
                text = await self._edit(waiting.handoff)
                if text.strip():
                    return GateAnswer("edit", text=text)
                self._say("The edit is empty: nothing to hand on. Choose again.")

    async def _pick(self, waiting: GateWaiting) -> GateAnswer:
        for number, option in enumerate(waiting.options, start=1):
            self._say(f"  [{number}] {visible(option)}")
        while True:
            answer = (await self._line("Keep which attempt (number), or [x] stop: ")).lower()
            if answer in ("x", "stop"):
                return GateAnswer("stop")
            if answer.isdigit() and 1 <= int(answer) <= len(waiting.options):
                return GateAnswer("continue", text=waiting.options[int(answer) - 1])

    async def _line(self, prompt: str) -> str:
        """One answer. The prompt is written here, beside the question, rather than by
        ``input()``, which would write it to standard output: into ``--json``'s events."""
        self._out.write(prompt)
        self._out.flush()
        try:
            return (await self._lines.read()).strip()
        except EOFError:
            raise GateUnanswerable("the terminal's input was closed") from None

    async def _edit(self, text: str) -> str:
        if not self._editor:
            return await self._typed()
        path = _private_copy(text)
        try:
            await self._run_editor(path)
            return path.read_text(encoding="utf-8")
        finally:
            _remove(path)

    async def _typed(self) -> str:
        self._say("Type what to hand on; end with a line holding only '.':")
        lines: list[str] = []
        while True:
            try:
                line = await self._lines.read()
            except EOFError:
                break
            if line.strip() == ".":
                break
            lines.append(line)
        return "\n".join(lines)

    async def _run_editor(self, path: Path) -> None:
        """The editor on the terminal until it exits; closed when the gate stops waiting
        (its timeout passed): an editor left open would hold the terminal, and the process,
        for an edit nobody will read."""
        editor = await asyncio.create_subprocess_exec(*shlex.split(self._editor), str(path))
        try:
            await editor.wait()
        except asyncio.CancelledError:
            if editor.returncode is None:
                editor.terminate()  # an editor restores the terminal as it ends on TERM
                try:
                    await asyncio.wait_for(editor.wait(), EDITOR_GRACE_S)
                except TimeoutError:  # the gate must not wait on an editor that will not end
                    editor.kill()
                    await editor.wait()
            self._say("\nThe gate was decided while the editor was open: the edit is dropped.")
            raise

    def _say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()


def _private_copy(text: str) -> Path:
    """The hand-off in a file only this user can read, for the editor."""
    path = Path(tempfile.mkdtemp(prefix="baton-gate-")) / "handoff.md"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.parent.rmdir()


def _deadline(waiting: GateWaiting) -> str:
    """`` (no answer in 30 s: continue)``: what happens if nobody answers, and when."""
    if waiting.timeout_s is None:
        return ""
    return f" (no answer in {waiting.timeout_s:g} s: {waiting.default.replace('_', ' ')})"


def visible(text: str) -> str:
    """``text`` with control and format characters (escape sequences, bidi overrides) shown
    as ``\\x1b``-style codes: a model's answer must not redraw the screen or hide words from
    the person deciding on it. Line breaks and tabs stay."""
    return "".join(
        ch
        if ch in "\n\t" or not unicodedata.category(ch).startswith("C")
        else f"\\x{ord(ch):02x}"
        if ord(ch) < 0x100
        else f"\\u{ord(ch):04x}"
        for ch in text
    )


def terminal_line(prompt: str = "") -> str:
    """A line typed on standard input, without its line break, like ``input()`` — but read
    from the file descriptor: a read left blocked in ``sys.stdin`` by a gate that stopped
    waiting holds the buffer's lock, and the interpreter aborts at exit ("could not acquire
    lock ... at interpreter shutdown"). A terminal hands over one line per read. ``prompt``
    is not written: the asker writes it beside the question (``input()`` would write it to
    standard output, among ``--json``'s events)."""
    try:
        fd = sys.stdin.fileno()
    except (OSError, ValueError):  # a stand-in for the terminal: read it as it is
        line = sys.stdin.readline()
        if not line:
            raise EOFError from None
        return line.removesuffix("\n")
    chunks: list[bytes] = []
    while not chunks or not chunks[-1].endswith(b"\n"):
        chunk = os.read(fd, 4096)
        if not chunk:
            if chunks:
                break
            raise EOFError
        chunks.append(chunk)
    text = b"".join(chunks).decode(sys.stdin.encoding or "utf-8", errors="replace")
    return text.removesuffix("\n").removesuffix("\r")


def editor_command() -> str:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or ""


NO_TERMINAL = "there is no terminal to ask on; pass --gate continue, --gate stop or --gate default"


def gate_asker_for(choice: GateChoice | None, interactive: bool) -> GateAsker:
    """The asker ``baton run`` uses: ``--gate`` when given, else the terminal, else none."""
    if choice is not None:
        return fixed_answers(choice)
    return TerminalGateAsker() if interactive else nobody_to_ask(NO_TERMINAL)
