"""Gates on a terminal (``baton run`` of a graph preset; architecture: "Graph pipelines").

A gate shows its question and what would be handed on, then reads one of: continue, edit
(``$VISUAL``/``$EDITOR`` opens the hand-off in a private temporary file; without an editor the
new text is typed, ending with a line holding only ``.``), send back with a note, or stop. A
best-of pick lists the attempts by number instead. Reading happens in a worker thread, so
other steps keep running while the person reads.

Without a terminal nobody is asked: ``--gate continue|stop`` answers every gate, ``--gate
default`` takes each gate's own default, and with none of them the gate fails the run with the
reason — a headless run never waits for an answer that cannot come.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Callable
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

_CHOICES = "[c]ontinue  [e]dit what is handed on  [s]end back with a note  [x] stop"


class TerminalGateAsker:
    """Asks each gate on the terminal, one at a time."""

    def __init__(
        self,
        out: TextIO | None = None,
        read_line: Callable[[str], str] = input,
        editor: str | None = None,
    ) -> None:
        self._out = out or sys.stderr
        self._read_line = read_line
        self._editor = editor if editor is not None else editor_command()
        self._lock = asyncio.Lock()

    async def __call__(self, waiting: GateWaiting) -> GateAnswer:
        async with self._lock:
            return await self._ask(waiting)

    async def _ask(self, waiting: GateWaiting) -> GateAnswer:
        person = [o for o in waiting.options if o in PERSON_OPTIONS]
        self._say(f"\n── Gate before '{waiting.node}': {visible(waiting.question)}")
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
                text = await asyncio.to_thread(self._edit, waiting.handoff)
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
        try:
            return (await asyncio.to_thread(self._read_line, prompt)).strip()
        except EOFError:
            raise GateUnanswerable("the terminal's input was closed") from None

    def _edit(self, text: str) -> str:
        if not self._editor:
            self._say("Type what to hand on; end with a line holding only '.':")
            lines: list[str] = []
            while True:
                try:
                    line = self._read_line("")
                except EOFError:
                    break
                if line.strip() == ".":
                    break
                lines.append(line)
            return "\n".join(lines)
        folder = Path(tempfile.mkdtemp(prefix="baton-gate-"))
        path = folder / "handoff.md"
        try:
            path.write_text(text, encoding="utf-8")
            path.chmod(0o600)
            subprocess.run([*shlex.split(self._editor), str(path)], check=False)
            return path.read_text(encoding="utf-8")
        finally:
            path.unlink(missing_ok=True)
            folder.rmdir()

    def _say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()


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


def editor_command() -> str:
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or ""


NO_TERMINAL = "there is no terminal to ask on; pass --gate continue, --gate stop or --gate default"


def gate_asker_for(choice: GateChoice | None, interactive: bool) -> GateAsker:
    """The asker ``baton run`` uses: ``--gate`` when given, else the terminal, else none."""
    if choice is not None:
        return fixed_answers(choice)
    return TerminalGateAsker() if interactive else nobody_to_ask(NO_TERMINAL)
