"""One bash command line, read once for every rule: what it runs, and what no rule can see.

:func:`read_line` parses the line (:mod:`core.safety.shell_commands`) and then follows what the
commands themselves start (:mod:`core.safety.shell_programs`): ``env rm`` and ``xargs rm`` reach
``rm``; ``bash -c 'rm x'`` and ``eval 'rm x'`` are parsed in turn; ``find -exec rm`` reaches
``rm``. A deny rule looks at all of :attr:`BashLine.reached`. What cannot be followed — a
program named by ``$CMD``, ``sh`` reading a script from a file or a pipe, ``source``, a
here-document — makes the line *opaque*, and an opaque line is never allowed past a deny or ask
rule: a deny rule that could be dodged that way would be a promise not kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.safety.shell_commands import ShellAnalysis, analyse
from core.safety.shell_programs import (
    ARITHMETIC,
    STATE_CHANGERS,
    expands,
    inner_commands,
    program_name,
    shell_strings,
)

MAX_DEPTH = 8
"""Shell strings inside shell strings followed at most this deep; deeper is opaque."""
MAX_REACHED = 512
"""Commands followed at most; more is opaque."""
MAX_WRAPPED = 64
"""Wrappers inside wrappers (``env nice timeout 5 rm``) followed at most; deeper is opaque."""

#: Problems of :func:`core.safety.shell_commands.analyse` that hide a program from any rule.
_HIDING = (
    "parameter expansion",
    "here-document",
    "in a word",
    "in a command",
    "unknown",
    # ``BASH_ENV=x bash``, ``GIT_EXTERNAL_DIFF=id git diff``, ``PATH=. ls``: what runs changes.
    "variable assignment",
)


@dataclass
class BashLine:
    """What :func:`read_line` found."""

    text: str
    analysis: ShellAnalysis
    reached: list[list[str]] = field(default_factory=list)
    """Every command the line may start: its own, wrapped ones, and those in shell strings."""
    opaque: str | None = None
    """Why some program the line may run cannot be named (None: every one can)."""
    evaluates: bool = False
    """The line uses ``eval``, which no rule allows."""
    seen: set[tuple[str, ...]] = field(default_factory=set, repr=False)


def read_line(command: str) -> BashLine:
    """Read ``command`` for the rules (pure, and bounded only by the parser: see
    :mod:`core.safety.rule_judge` for running it off the event loop)."""
    analysis = analyse(command)
    line = BashLine(command, analysis)
    _follow(analysis, line, 0)
    return line


def _follow(analysis: ShellAnalysis, line: BashLine, depth: int) -> None:
    if not analysis.parsed:
        _hide(line, "bash syntax Baton cannot read")
        return
    for problem in analysis.problems:
        if any(marker in problem for marker in _HIDING):
            _hide(line, problem)
    for words, raw in zip(analysis.commands, analysis.raw, strict=True):
        _command(words, raw[0], line, depth)


def _command(words: list[str], program: str, line: BashLine, depth: int, wrapped: int = 0) -> None:
    key = tuple(words)
    if key in line.seen:  # ``env env rm``: the same tail is reached through every wrapper
        return
    if len(line.reached) >= MAX_REACHED or wrapped > MAX_WRAPPED:
        _hide(line, "more commands than Baton follows")
        return
    line.seen.add(key)
    line.reached.append(words)
    if expands(program):
        _hide(line, f"a program named by an expansion ({program})")
    name = program_name(words[0])
    if name == "eval":
        line.evaluates = True
    if name in STATE_CHANGERS:
        _hide(line, f"{name} changes what later commands run")
    if name in ARITHMETIC and any("$(" in word or "`" in word for word in words[1:]):
        # ``test -v 'a[$(rm x)]'``: bash runs what the subscript holds, quotes or not.
        _hide(line, f"{name} evaluates array subscripts, which can run commands")
    strings = shell_strings(words)
    if strings is None:
        _hide(line, f"{name} runs code Baton cannot read")
    else:
        for code in strings:
            if depth >= MAX_DEPTH:
                _hide(line, "shell strings nested too deep")
                break
            _follow(analyse(code), line, depth + 1)
    for inner in inner_commands(words):
        # Wrapped programs were read with quotes removed, so any ``$``, ``*`` or ``{`` left
        # in one counts as an expansion (erring towards opaque).
        _command(inner, inner[0], line, depth, wrapped + 1)


def _hide(line: BashLine, reason: str) -> None:
    if line.opaque is None:
        line.opaque = reason
