"""Judging a call against the rules without ever blocking the event loop.

Reading a bash line is pure-Python parsing (bashlex), and its cost is the model's to choose:
a 200 KB line took 15 s, a 2,000-deep ``$(`` a minute — on the loop, that froze every run and
Cancel. So :func:`judge` reads a line on the loop only when it is short and shallow (well under
a millisecond); a medium one in a thread (bounded work; the GIL is handed back to the loop
every few milliseconds); anything larger in a worker *process* (a thread cannot be stopped),
which gets :data:`TIME_LIMIT_S` and is killed past it. A line over
:data:`MAX_COMMAND_CHARS`, or one the worker could not finish, is *asked* about — never allowed
— with the reason in the approval.

Each large line gets a fresh worker (the bundle: the executable itself, told so by
:data:`WORKER_VARIABLE`), which answers one JSON line and is gone: nothing lingers between
judgements, and several steps' lines are judged side by side. Large lines are rare (a short
command is judged on the loop), so the start-up of a Python is paid seldom; it does not count
against the time limit.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from core.safety.bash_line import read_line
from core.safety.rules import Rule, RuleSet, Verdict, suggest_bash, suggest_rule

MAX_COMMAND_CHARS = 32_768
"""Longer bash lines are asked about unread (a person reads them, not the rules)."""
TIME_LIMIT_S = 2.0
"""How long the worker may take over one line before it is killed and the line asked about."""
START_LIMIT_S = 60.0
"""How long a new worker may take to start (importing Python on a busy machine)."""
INLINE_CHARS = 128
INLINE_NESTING = 8
"""Lines at most this long, with at most this many brackets, braces and backticks, are read on
the loop: well under a millisecond usually, a few at worst (measured: 512 characters of
``a;a;…`` take 50 ms on a busy machine, so the bound is low)."""
THREAD_CHARS = 4096
THREAD_NESTING = 32
"""Up to these, a line is read in a thread: bashlex holds the GIL, but Python hands it back to
the loop every few milliseconds, and the work is bounded (well under a second) — no process
to start. Past them, a worker process, which can be killed."""


@dataclass(frozen=True)
class Judgement:
    """What the rules say about one call, and the rule a person could keep."""

    verdict: Verdict | None
    suggestion: str | None = None


async def judge(
    rules: RuleSet, tool: str, action: str | None, arguments: Mapping[str, Any], cwd: Path
) -> Judgement:
    """The rules' verdict on a call and a suggested rule, never blocking the loop for long."""
    if tool != "bash":
        verdict = rules.evaluate(tool, action, arguments, cwd)
        return Judgement(verdict, suggest_rule(tool, action, arguments, cwd, rules.root))
    if "bashlex" not in sys.modules:  # its parser tables take ~100 ms to load: not on the loop
        await asyncio.to_thread(importlib.import_module, "bashlex")
    command = str(arguments.get("command", ""))
    if len(command) > MAX_COMMAND_CHARS:
        reason = (
            f"the command is {len(command):,} characters long, and Baton checks lines of up "
            f"to {MAX_COMMAND_CHARS:,} against the rules"
        )
        return Judgement(Verdict("ask", (), reason))
    nesting = _nesting(command)
    if len(command) <= INLINE_CHARS and nesting <= INLINE_NESTING:
        return judge_bash(rules, command, cwd)
    if len(command) <= THREAD_CHARS and nesting <= THREAD_NESTING:
        reading = asyncio.to_thread(judge_bash, rules, command, cwd)
        try:
            return await asyncio.wait_for(reading, TIME_LIMIT_S)
        except TimeoutError:
            return _too_slow()
    texts, root = rules.texts(), str(rules.root)
    answer = await asyncio.to_thread(_ask_worker, (texts, root, command, str(cwd)))
    if answer is None:
        return _too_slow()
    kind, names, why, suggestion = answer
    verdict = None if kind is None else Verdict(kind, tuple(Rule.parse(n) for n in names), why)
    return Judgement(verdict, suggestion)


def _too_slow() -> Judgement:
    reason = f"checking the command against the rules took over {TIME_LIMIT_S:g} s"
    return Judgement(Verdict("ask", (), reason))


def judge_bash(rules: RuleSet, command: str, cwd: Path) -> Judgement:
    """Read ``command`` once and judge it (what the worker runs, and the loop for short lines)."""
    line = read_line(command)
    return Judgement(rules.evaluate_line(line), suggest_bash(line))


def _nesting(command: str) -> int:
    return command.count("(") + command.count("`") + command.count("{")


_Answer = tuple[Any, list[str], str | None, str | None]

WORKER_VARIABLE = "BATON_RULE_WORKER"
"""Set in the worker's environment: the bundled executable then serves rules, not the app."""


def serve() -> int:
    """The worker process: one JSON request a line on stdin, one answer a line on stdout."""
    import bashlex  # noqa: F401  (its parser tables load before "ready", not in the time limit)

    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else printed goes to stderr, never into an answer
    answers.write(b'"ready"\n')
    answers.flush()
    for request in sys.stdin.buffer:
        texts, root, command, cwd = json.loads(request)
        judged = judge_bash(RuleSet.from_texts(Path(root), texts), command, Path(cwd))
        verdict = judged.verdict
        answer: _Answer = (None, [], None, judged.suggestion)
        if verdict is not None:
            names = [str(rule) for rule in verdict.rules]
            answer = (verdict.kind, names, verdict.reason, judged.suggestion)
        answers.write(json.dumps(answer).encode() + b"\n")
        answers.flush()
    return 0


def _worker_argv() -> list[str]:
    """This Python running :func:`serve` (the bundle: itself, told by :data:`WORKER_VARIABLE`)."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the core package
    code = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "from core.safety.rule_judge import serve; serve()"
    )
    return [sys.executable, "-c", code]


def _ask_worker(request: tuple[Any, ...]) -> _Answer | None:
    """A fresh worker's answer to one request (in a thread: this blocks), or None when it did
    not answer within :data:`TIME_LIMIT_S` of being ready; it is killed either way."""
    process = subprocess.Popen(
        _worker_argv(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, WORKER_VARIABLE: "1"},
    )
    assert process.stdin is not None and process.stdout is not None
    # A reader thread, not select(): pipes cannot be selected on Windows.
    lines: queue.Queue[bytes] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True)
    reader.start()
    try:
        if _next(lines, START_LIMIT_S) != "ready":
            return None
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.close()
        answer = _next(lines, TIME_LIMIT_S)
        if answer is None:
            return None
        kind, names, why, suggestion = answer
        return kind, names, why, suggestion
    except (OSError, ValueError):
        return None
    finally:
        process.kill()
        process.wait()
        reader.join()  # the pipe ends with the process
        for stream in (process.stdin, process.stdout):
            stream.close()


def _pump(stream: IO[bytes], lines: queue.Queue[bytes]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(b"")


def _next(lines: queue.Queue[bytes], limit_s: float) -> Any:
    """The next JSON line the worker wrote within ``limit_s``, or None (also at its end)."""
    try:
        line = lines.get(timeout=limit_s)
    except queue.Empty:
        return None
    return json.loads(line) if line else None
