"""Per-project permission rules in Claude Code's syntax (DESIGN §6, issue 14 item 7).

A rule names a tool and, optionally, what it applies to:

* ``Bash`` / ``Bash(*)`` — every command; ``Bash(npm test)`` — exactly that command;
  ``Bash(git diff:*)`` (or ``Bash(git diff *)``) — ``git diff`` with any arguments.
* ``Read(src/**)``, ``Edit(/docs/*.md)``, ``Read(~/.zshrc)``, ``Read(//etc/hosts)`` —
  gitignore-style paths: relative to the project folder (a leading ``/`` too), ``~/`` from
  home, ``//`` from the filesystem root. ``Edit`` rules cover ``write``; ``Read`` rules cover
  ``grep``, ``find`` (Glob) and ``ls``, as in Claude Code.
* ``Document(delete)`` — Baton's document tool, by action.
* Any other name (``WebFetch``, ``mcp__github``) matches that tool by name.

Rules come in three lists evaluated **deny → ask → allow**: the first list with a match
decides. Commands are read the way bash reads them (:mod:`core.shell_commands`): an allow rule
matches only when *every* simple command of a plain command line matches it, so
``Bash(git show:*)`` never allows ``git show > ~/.ssh/x``, ``git show; rm -rf .``,
``$(…)``, backticks or ``git log | sh``; a line bashlex cannot read never matches an allow
rule. Deny and ask rules match when *any* command in the line matches.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pathspec

from core.shell_commands import analyse

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
_RULE_SYNTAX = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_PATH_ARGUMENTS = ("file_path", "path", "notebook_path")


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
        if spec is not None and tool.casefold() == "bash":
            try:
                shlex.split(_bash_prefix(spec)[0])
            except ValueError as error:
                raise RuleError(f"{text!r}: the command cannot be read ({error})") from None
        return cls(tool, spec)

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def governs(self, tool: str) -> bool:
        """Does this rule speak about Baton's (or Claude Code's) tool ``tool``?"""
        return self.tool.casefold() in _RULE_NAMES.get(tool, (tool.casefold(),))

    def matches(
        self, tool: str, action: str | None, arguments: Mapping[str, Any], cwd: Path, root: Path
    ) -> bool:
        """Whether this rule applies to the call, read as an *allow* rule (strict)."""
        return self._matches(tool, action, arguments, cwd, root, strict=True)

    def touches(
        self, tool: str, action: str | None, arguments: Mapping[str, Any], cwd: Path, root: Path
    ) -> bool:
        """Whether this rule applies to any part of the call (how deny / ask rules read)."""
        return self._matches(tool, action, arguments, cwd, root, strict=False)

    def _matches(
        self,
        tool: str,
        action: str | None,
        arguments: Mapping[str, Any],
        cwd: Path,
        root: Path,
        *,
        strict: bool,
    ) -> bool:
        if not self.governs(tool):
            return False
        if self.specifier is None:
            return True
        name = self.tool.casefold()
        if name == "bash":
            return _bash_matches(self.specifier, str(arguments.get("command", "")), strict)
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


def _bash_matches(spec: str, command: str, strict: bool) -> bool:
    text, is_prefix = _bash_prefix(spec)
    if not is_prefix and " ".join(command.split()) == " ".join(text.split()):
        return True  # exactly the command the rule names, whatever it contains
    analysis = analyse(command)
    if strict:
        return analysis.plain and all(_fits(spec, words) for words in analysis.commands)
    if any(_fits(spec, words) for words in analysis.commands):
        return True
    # Unreadable, or hiding commands bashlex does not look into (``${X:-$(curl …)}``):
    # a deny or ask rule errs on the side of matching.
    return not analysis.plain and " ".join(shlex.split(text)) in " ".join(command.split())


def _fits(spec: str, words: list[str]) -> bool:
    """Does one simple command's word list fit a ``Bash(...)`` specifier?"""
    text, is_prefix = _bash_prefix(spec)
    wanted = shlex.split(text)
    return words[: len(wanted)] == wanted if is_prefix else words == wanted


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
    """Usually one; an allowed command line of several commands names each rule it needed."""

    def label(self) -> str:
        """``allow Bash(git diff:*)`` — how the dialog and the run file name it."""
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
        for kind in ("deny", "ask"):
            for rule in self.rules[kind]:
                if rule.touches(tool, action, arguments, cwd, self.root):
                    return Verdict(kind, (rule,))
        for rule in self.rules["allow"]:
            if rule.matches(tool, action, arguments, cwd, self.root):
                return Verdict("allow", (rule,))
        if tool == "bash":
            return self._allow_each_command(str(arguments.get("command", "")))
        return None

    def _allow_each_command(self, command: str) -> Verdict | None:
        """``git diff && git log``: allowed when each simple command fits *some* allow rule."""
        analysis = analyse(command)
        if not analysis.plain:
            return None
        bash_rules = [r for r in self.rules["allow"] if r.governs("bash") and r.specifier]
        used: list[Rule] = []
        for words in analysis.commands:
            rule = next((r for r in bash_rules if _fits(r.specifier or "", words)), None)
            if rule is None:
                return None
            if rule not in used:
                used.append(rule)
        return Verdict("allow", tuple(used))


# -- suggestions ------------------------------------------------------------------------------

#: Programs whose arguments can run other programs or destroy data: suggest the exact line.
# fmt: off
_EXACT_ONLY = frozenset({
    "sh", "bash", "zsh", "dash", "fish", "env", "xargs", "find", "sudo", "su", "doas", "eval",
    "exec", "nohup", "setsid", "timeout", "nice", "time", "watch", "ssh", "scp", "rsync",
    "python", "python3", "node", "perl", "ruby", "php", "npx", "uvx", "rm", "mv", "cp", "dd",
    "chmod", "chown", "chgrp", "ln", "curl", "wget", "kill", "pkill", "killall", "tee",
    "truncate", "shred", "install", "make", "awk", "sed",
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

    ``git diff HEAD~1`` → ``Bash(git diff:*)``; ``rm -rf build`` → ``Bash(rm -rf build)``
    (programs that can run others or destroy data get the exact line); an edit of
    ``src/app.py`` → ``Edit(src/app.py)``; a compound command line → None.
    """
    name = _DISPLAY_NAMES.get(tool, tool)
    if tool == "bash":
        command = str(arguments.get("command", "")).strip()
        analysis = analyse(command)
        if not analysis.plain or len(analysis.commands) != 1:
            return None
        words = analysis.commands[0]
        if Path(words[0]).name in _EXACT_ONLY:
            return f"Bash({shlex.join(words)})"
        program = Path(words[0]).name
        subcommand = len(words) > 1 and program in _WITH_SUBCOMMANDS and _SUBCOMMAND.match(words[1])
        prefix = words[:2] if subcommand else words[:1]
        return f"Bash({shlex.join(prefix)}:*)"
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


def _glob_escape(pattern: str) -> str:
    """Escape glob characters that came from a real file name (keep our own ``/**``)."""
    tail = "/**" if pattern.endswith("/**") else ""
    body = pattern[: len(pattern) - len(tail)]
    return re.sub(r"([*?\[\]])", r"\\\1", body) + tail
