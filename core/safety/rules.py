"""Per-project permission rules in Claude Code's syntax.

A rule names a tool and, optionally, what it applies to:

* ``Bash`` / ``Bash(*)`` — every command; ``Bash(npm test)`` — exactly that command;
  ``Bash(git diff:*)`` (or ``Bash(git diff *)``) — ``git diff`` with any inert arguments.
* ``Read(src/**)``, ``Edit(/docs/*.md)``, ``Read(~/.zshrc)``, ``Read(//etc/hosts)`` —
  gitignore-style paths: relative to the project folder (a leading ``/`` too), ``~/`` from
  home, ``//`` from the filesystem root. ``Edit`` rules cover ``write``; ``Read`` rules cover
  ``grep``, ``find`` (Glob) and ``ls``, as in Claude Code.
* ``Document(delete)`` — Baton's document tool, by action.
* ``mcp__github__create_issue`` — one MCP tool; ``mcp__github`` or ``mcp__github__*`` — every
  tool of that server (Claude Code's names).
* Any other name (``WebFetch``) matches that tool by name.

Rules come in three lists evaluated **deny → ask → allow**: the first list with a match
decides. Commands are read the way bash reads them (:mod:`core.safety.bash_line`), and a rule is a
promise about the *programs* a line runs:

* An allow rule matches only when *every* simple command of a plain line fits it, so
  ``Bash(git show:*)`` never allows ``git show > ~/.ssh/x``, ``git show; rm -rf .``, ``$(…)``,
  backticks or ``git log | sh``; a line bashlex cannot read never matches. A *prefix* rule
  also never allows a program that runs others (``env``, ``xargs``, ``bash``, ``timeout``…),
  an option that writes files or runs programs (``git log --output=x``, ``find -exec``,
  ``sed -i``), a word bash would still expand into such an option (``git diff *`` beside a
  file named ``--output=x``), or a builtin that evaluates a subscript (``test -v 'a[$(…)]'``):
  see :mod:`core.safety.shell_programs`. ``eval`` is never allowed by a rule.
* Deny and ask rules match when *any* command the line may start fits, however it is invoked
  (``/bin/rm``, ``command rm``, ``env rm``, ``xargs rm``, ``find -exec rm``, ``bash -c 'rm'``,
  ``eval rm``). A line whose programs cannot all be named (``$CMD x``, ``sh < script``, a
  subscript holding code) is asked about whenever the project has a deny or ask rule for bash.

Suggested "always allow" rules are exact lines for the programs above, prefixes otherwise.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pathspec

from core.safety.bash_line import BashLine, read_line
from core.safety.shell_programs import LAUNCHERS, OPTIONS, expands, prefix_risk, program_name

RuleKind = Literal["allow", "ask", "deny"]
RULE_KINDS: tuple[RuleKind, ...] = ("deny", "ask", "allow")
"""Evaluation order: the first list with a matching rule decides."""

#: Baton's tool → the rule names that govern it (Claude Code's names).
_RULE_NAMES: dict[str, tuple[str, ...]] = {
    "bash": ("bash",),
    "edit": ("edit",),
    "write": ("write", "edit"),
    "read": ("read",),
    "grep": ("grep", "read"),
    "find": ("glob", "read"),
    "ls": ("ls", "read"),
    "document": ("document",),
}
_DISPLAY_NAMES = {
    "bash": "Bash",
    "edit": "Edit",
    "write": "Edit",
    "read": "Read",
    "grep": "Read",
    "find": "Read",
    "ls": "Read",
    "document": "Document",
}
_PATH_RULES = frozenset({"edit", "write", "read", "grep", "glob", "ls"})
_RULE_SYNTAX = re.compile(r"^\s*([A-Za-z_][\w.-]*\*?)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_PATH_ARGUMENTS = ("file_path", "path", "notebook_path")


MCP_PREFIX = "mcp__"


def _mcp_rule_covers(rule: str, tool: str) -> bool:
    """Whether the rule name ``rule`` covers the MCP tool ``tool`` (``mcp__server__name``)."""
    if rule == tool:
        return True
    server = rule.removesuffix("*").removesuffix("__")
    if not server.startswith(MCP_PREFIX) or "__" in server[len(MCP_PREFIX) :]:
        return False
    if rule != server and rule != f"{server}__*":
        return False  # mcp__github__create_* is not Claude Code's syntax: never a match
    return tool.startswith(f"{server}__")


class RuleError(ValueError):
    """A rule that does not follow the syntax; the message says what is wrong."""


@dataclass(frozen=True)
class Rule:
    """One parsed rule; ``str(rule)`` is its canonical text."""

    tool: str
    specifier: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE_SYNTAX.match(text)
        if match is None:
            raise RuleError(
                f"not a rule: {text!r} (write e.g. Bash(git diff:*), Edit(src/**) or Read)"
            )
        tool, spec = match.group(1), match.group(2)
        spec = spec.strip() if spec is not None else None
        if spec in ("", "*"):
            spec = None
        if tool.endswith("*") and not (tool.startswith(MCP_PREFIX) and tool.endswith("__*")):
            raise RuleError(f"{text!r}: only MCP rules end in a wildcard (mcp__server__*)")
        if spec is not None and tool.casefold() == "bash":
            try:
                shlex.split(_bash_prefix(spec)[0])
            except ValueError as error:
                raise RuleError(f"{text!r}: the command cannot be read ({error})") from None
        return cls(tool, spec)

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def governs(self, tool: str) -> bool:
        """Does this rule speak about Baton's (or Claude Code's) tool ``tool``?

        MCP tools follow Claude Code: ``mcp__github__create_issue`` names one tool,
        ``mcp__github`` and ``mcp__github__*`` every tool of the server."""
        if tool.startswith(MCP_PREFIX):
            return _mcp_rule_covers(self.tool, tool)
        return self.tool.casefold() in _RULE_NAMES.get(tool, (tool.casefold(),))

    def matches(
        self, tool: str, action: str | None, arguments: Mapping[str, Any], cwd: Path, root: Path
    ) -> bool:
        """Whether this rule applies to the call, read as an *allow* rule (strict)."""
        if tool == "bash" and self.governs(tool):
            return self.allows_line(read_line(str(arguments.get("command", ""))))
        return self._matches(tool, action, arguments, cwd, root)

    def touches(
        self, tool: str, action: str | None, arguments: Mapping[str, Any], cwd: Path, root: Path
    ) -> bool:
        """Whether this rule applies to any part of the call (how deny / ask rules read)."""
        if tool == "bash" and self.governs(tool):
            return self.touches_line(read_line(str(arguments.get("command", ""))))
        return self._matches(tool, action, arguments, cwd, root)

    def allows_line(self, line: BashLine) -> bool:
        """As an allow rule: every command the line runs is this rule's program, with inert
        arguments. ``eval`` is never allowed by a rule: what it runs is text made at run time."""
        if line.evaluates:
            return False
        if self.specifier is None:
            return True
        text, is_prefix = _bash_prefix(self.specifier)
        if not is_prefix and " ".join(line.text.split()) == " ".join(text.split()):
            return True  # exactly the command the rule names, whatever it contains
        analysis = line.analysis
        return analysis.plain and all(
            _fits(self.specifier, words, raw, strict=True)
            for words, raw in zip(analysis.commands, analysis.raw, strict=True)
        )

    def touches_line(self, line: BashLine) -> bool:
        """As a deny or ask rule: some command the line may run is this rule's program, however
        it is invoked (a path, ``env``, ``xargs``, ``find -exec``, ``bash -c``, ``eval``)."""
        if self.specifier is None:
            return True
        if any(_fits(self.specifier, words, None, strict=False) for words in line.reached):
            return True
        # Unreadable, or hiding commands bashlex does not look into (``${X:-$(curl …)}``):
        # a deny or ask rule errs on the side of matching.
        wanted = " ".join(_spec_words(self.specifier)[0])
        return not line.analysis.plain and wanted in " ".join(line.text.split())

    def _matches(
        self, tool: str, action: str | None, arguments: Mapping[str, Any], cwd: Path, root: Path
    ) -> bool:
        if not self.governs(tool):
            return False
        if self.specifier is None:
            return True
        name = self.tool.casefold()
        if name in _PATH_RULES:
            return _path_matches(self.specifier, _call_path(arguments, cwd), root)
        if name == "document":
            return (action or str(arguments.get("action", ""))) == self.specifier
        return False  # a specifier Baton cannot interpret never matches


def _bash_prefix(spec: str) -> tuple[str, bool]:
    """``("git diff", True)`` for ``git diff:*`` / ``git diff *``; ``(spec, False)`` exact."""
    for suffix in (":*", " *"):
        if spec.endswith(suffix):
            return spec[: -len(suffix)].rstrip(), True
    return spec, False


@functools.lru_cache(maxsize=4096)
def _spec_words(spec: str) -> tuple[tuple[str, ...], bool]:
    """A ``Bash(...)`` specifier's words and whether it is a prefix (read once per rule text:
    every bash call weighs every rule)."""
    text, is_prefix = _bash_prefix(spec)
    return tuple(shlex.split(text)), is_prefix


def _fits(spec: str, words: list[str], raw: list[str] | None, *, strict: bool) -> bool:
    """Does one simple command fit a ``Bash(...)`` specifier?

    ``strict`` (allow rules): the program exactly as the rule writes it, and for a prefix rule
    nothing :func:`core.safety.shell_programs.prefix_risk` objects to; for an exact rule no word
    bash
    would still expand. Otherwise (deny / ask rules) the program however it is named
    (``/bin/rm`` is ``rm``).
    """
    wanted, is_prefix = _spec_words(spec)
    if not wanted:
        return False
    if not strict and "/" not in wanted[0]:
        words = [program_name(words[0]), *words[1:]]
    if not is_prefix:
        if tuple(words) != wanted:
            return False
        return not strict or raw is None or not any(expands(word) for word in raw)
    if tuple(words[: len(wanted)]) != wanted:
        return False
    return not strict or prefix_risk(words, raw) is None


def _call_path(arguments: Mapping[str, Any], cwd: Path) -> Path:
    """The file or folder a call works on, resolved (symlinks followed) against ``cwd``."""
    raw = next((arguments[k] for k in _PATH_ARGUMENTS if isinstance(arguments.get(k), str)), ".")
    path = Path(str(raw))
    try:
        path = path.expanduser()
        return (path if path.is_absolute() else cwd / path).resolve()
    except (OSError, RuntimeError, ValueError):
        # No such file can exist (a NUL byte, a lone surrogate, a name too long): the tool
        # refuses it with a message; the rules judge the path as written.
        return Path(os.path.normpath(path if path.is_absolute() else cwd / path))


def _path_matches(spec: str, path: Path, root: Path) -> bool:
    if spec.startswith("//"):
        anchor, pattern = Path("/"), spec[1:]
    elif spec.startswith("~/"):
        anchor, pattern = Path.home(), "/" + spec[2:]
    elif spec.startswith("./"):
        anchor, pattern = root, "/" + spec[2:]
    else:
        anchor, pattern = root, spec
    try:
        relative = path.relative_to(anchor.resolve())
    except ValueError:
        return False
    return pathspec.GitIgnoreSpec.from_lines([pattern]).match_file(relative.as_posix())


@dataclass(frozen=True)
class Verdict:
    """What the rules say about one call: ``kind`` and the rule that decided."""

    kind: RuleKind
    rules: tuple[Rule, ...]
    """Usually one; an allowed command line of several commands names each rule it needed.
    Empty when no single rule decided (then :attr:`reason` says why)."""
    reason: str | None = None
    """Why Baton asks without a rule deciding (a line no rule can see into, one too long to
    judge); shown in the approval."""

    def label(self) -> str:
        """``allow Bash(git diff:*)`` — how the dialog and the run file name it."""
        if not self.rules:
            return f"{self.kind}: {self.reason or 'no rule could decide'}"
        return f"{self.kind} {', '.join(str(rule) for rule in self.rules)}"


@dataclass
class RuleSet:
    """The rules of one project (see the module docstring for the semantics)."""

    root: Path
    rules: dict[RuleKind, list[Rule]] = field(
        default_factory=lambda: {kind: [] for kind in RULE_KINDS}
    )

    @classmethod
    def from_texts(cls, root: Path, texts: Mapping[str, Iterable[str]]) -> RuleSet:
        """Parse ``{"allow": [...], ...}``; raises :class:`RuleError` for a bad rule."""
        rules = cls(root)
        for kind in RULE_KINDS:
            rules.rules[kind] = [Rule.parse(text) for text in texts.get(kind, ())]
        return rules

    def texts(self) -> dict[str, list[str]]:
        return {kind: [str(rule) for rule in self.rules[kind]] for kind in RULE_KINDS}

    def evaluate(
        self, tool: str, action: str | None, arguments: Mapping[str, Any], cwd: Path
    ) -> Verdict | None:
        """The deciding rule for a call, or None when no rule speaks about it."""
        if tool == "bash":
            return self.evaluate_line(read_line(str(arguments.get("command", ""))))
        for kind in ("deny", "ask"):
            for rule in self.rules[kind]:
                if rule.touches(tool, action, arguments, cwd, self.root):
                    return Verdict(kind, (rule,))
        for rule in self.rules["allow"]:
            if rule.matches(tool, action, arguments, cwd, self.root):
                return Verdict("allow", (rule,))
        return None

    def evaluate_line(self, line: BashLine) -> Verdict | None:
        """:meth:`evaluate` for a bash line already read (parsed once for every rule)."""
        guarding = False
        for kind in ("deny", "ask"):
            for rule in self.rules[kind]:
                if rule.governs("bash"):
                    guarding = True
                    if rule.touches_line(line):
                        return Verdict(kind, (rule,))
        if guarding and line.opaque is not None:
            reason = f"the deny and ask rules cannot see what this line runs ({line.opaque})"
            return Verdict("ask", (), reason)
        for rule in self.rules["allow"]:
            if rule.governs("bash") and rule.allows_line(line):
                return Verdict("allow", (rule,))
        return self._allow_each_command(line)

    def _allow_each_command(self, line: BashLine) -> Verdict | None:
        """``git diff && git log``: allowed when each simple command fits *some* allow rule."""
        analysis = line.analysis
        if not analysis.plain or line.evaluates:
            return None
        bash_rules = [r for r in self.rules["allow"] if r.governs("bash") and r.specifier]
        used: list[Rule] = []
        for words, raw in zip(analysis.commands, analysis.raw, strict=True):
            rule = next(
                (r for r in bash_rules if _fits(r.specifier or "", words, raw, strict=True)),
                None,
            )
            if rule is None:
                return None
            if rule not in used:
                used.append(rule)
        return Verdict("allow", tuple(used))


# -- suggestions ------------------------------------------------------------------------------

#: Programs whose arguments destroy data or reach the network: suggest the exact line. (Those
#: that run programs or have options that do are in :mod:`core.safety.shell_programs`.)
# fmt: off
_EXACT_ONLY = LAUNCHERS | frozenset(OPTIONS) | frozenset({
    "rm", "mv", "cp", "dd", "chmod", "chown", "chgrp", "ln", "kill", "pkill", "killall",
    "truncate", "shred", "rsync", "scp", "curl", "wget", "tee",
})
#: Programs whose second word is a subcommand: ``git diff`` → ``Bash(git diff:*)``, not ``git:*``.
_WITH_SUBCOMMANDS = frozenset({
    "git", "npm", "pnpm", "yarn", "cargo", "go", "pip", "pip3", "uv", "poetry", "docker",
    "podman", "kubectl", "gh", "dotnet", "mvn", "gradle", "brew", "apt", "systemctl", "bun",
    "deno", "conda", "hatch", "tox", "nox", "rustup", "helm", "terraform",
})
# fmt: on
_SUBCOMMAND = re.compile(r"^[A-Za-z][\w.-]*$")


def suggest_rule(
    tool: str, action: str | None, arguments: Mapping[str, Any], cwd: Path, root: Path
) -> str | None:
    """A narrow "always allow" rule covering this call, or None when none would be safe.

    ``ls -la`` → ``Bash(ls:*)``; ``git diff HEAD~1`` → ``Bash(git diff HEAD~1)`` and
    ``rm -rf build`` → ``Bash(rm -rf build)`` (programs that can run others, have options
    that write files or run programs, or destroy data get the exact line); an edit of
    ``src/app.py`` → ``Edit(src/app.py)``; a compound command line → None.
    """
    name = _DISPLAY_NAMES.get(tool, tool)
    if tool == "bash":
        return suggest_bash(read_line(str(arguments.get("command", "")).strip()))
    if name in ("Edit", "Read"):
        path = _call_path(arguments, cwd)
        try:
            relative = path.relative_to(root.resolve()).as_posix()
        except ValueError:
            return None
        try:
            is_dir = path.is_dir()
        except (OSError, ValueError):  # no file can have this name: the tool will refuse it
            return None
        if tool in ("grep", "find", "ls") or is_dir:
            pattern = "/**" if relative == "." else f"{relative}/**"
        else:
            pattern = relative if "/" in relative else f"/{relative}"
        return f"{name}({_glob_escape(pattern)})"
    if tool == "document":
        chosen = action or str(arguments.get("action", ""))
        return f"Document({chosen})" if chosen else "Document"
    return name


def suggest_bash(line: BashLine) -> str | None:
    """:func:`suggest_rule` for a bash line already read."""
    analysis = line.analysis
    if not analysis.plain or len(analysis.commands) != 1 or line.evaluates:
        return None
    words = analysis.commands[0]
    if any(expands(word) for word in analysis.raw[0]):
        return None  # no rule can name the words bash will make of it
    program = program_name(words[0])
    if program in _EXACT_ONLY or prefix_risk(words, analysis.raw[0]) is not None:
        return f"Bash({shlex.join(words)})"
    subcommand = len(words) > 1 and program in _WITH_SUBCOMMANDS and _SUBCOMMAND.match(words[1])
    prefix = words[:2] if subcommand else words[:1]
    return f"Bash({shlex.join(prefix)}:*)"


def _glob_escape(pattern: str) -> str:
    """Escape glob characters that came from a real file name (keep our own ``/**``)."""
    tail = "/**" if pattern.endswith("/**") else ""
    body = pattern[: len(pattern) - len(tail)]
    return re.sub(r"([*?\[\]])", r"\\\1", body) + tail
