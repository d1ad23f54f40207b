"""The rules, checked against bash itself: every line of the rule table runs in a throwaway
bubblewrap sandbox (the bash tool's own :func:`core.safety.sandbox.bwrap_argv`) under
``strace -f -e execve``, each in a fresh copy of a small git project.

Whenever the rules said *allow*, every program that actually started must be one the deciding
rules name (git's own helpers and tar's compressors count as theirs), and a line allowed by
rules for read-only programs must leave every file as it was. Whenever a program a deny rule
names started, the rules must have denied the line or asked about it — never allowed it, nor
left it to the policy. Every line marked as an attack
must really start ``id`` or ``rm`` — so the table keeps its teeth — and then must not have been
allowed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from core.safety.rules import RuleSet, Verdict
from core.safety.sandbox import bwrap_argv, sandbox_status
from core.safety.shell_programs import program_name
from tests.rule_table import LINES, RULES

pytestmark = pytest.mark.skipif(
    not (shutil.which("strace") and sandbox_status().kind == "bubblewrap")
    and not os.environ.get("CI"),
    reason="needs strace and bubblewrap (CI installs both)",
)

#: Programs a rule's program starts by design, beside itself.
HELPERS = {
    "tar": {"gzip", "bzip2", "xz", "lzma", "zstd", "lzip", "lzop", "compress"},
    "npm": {"node", "sh"},  # npm is a node program; ``npm test`` runs the project's script
}
#: Programs whose allowed lines must leave the project's files untouched.
READ_ONLY = {
    "git", "ls", "cat", "head", "wc", "grep", "echo", "printf", "test", "[", "read", "declare",
    "unset", "find", "sed", "awk", "sort", "less", "true",
}  # fmt: skip
PAYLOADS = {"id", "rm"}
DENIED = {"rm", "curl"}
"""The table's deny rules' programs: a line that started one must have been denied or asked."""
CHUNKS = 2
"""Sandboxes run side by side (the CI machine has two cores)."""

DRIVER = r"""
set -u
lines=$1 template=$2 out=$3
i=0
while IFS= read -r -d '' line; do
    work="$out/w$i"
    cp -a "$template" "$work"
    (cd "$work" && timeout 20 strace -f -qq -z -e trace=execve -e signal=none \
        -o "$out/t$i" bash -c "$line" </dev/null >/dev/null 2>&1)
    i=$((i + 1))
done < "$lines"
"""
_EXECVE = re.compile(r'execve\("((?:[^"\\]|\\.)*)"')


def _project(folder: Path) -> None:
    """A small git project with the files the table's lines name."""
    folder.mkdir()
    files = {
        "a.txt": "hello\nworld\n",
        "README": "read me\n",
        "victim.txt": "protected by deny Bash(rm:*)\n",
        "src/x.py": "print('x')\n",
        "list.txt": "victim.txt\n",
        "script.sh": "id\nrm -f victim.txt\n",
        "script.sed": "1e id\n",
        "prog.awk": 'BEGIN { system("id") }\n',
        "build/keep": "",
        "--output=pwned.txt": "a file whose name is an option\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(folder)]
    subprocess.run(["git", "init", "-q", "--template=", str(folder)], check=True)
    subprocess.run(["tar", "-cf", str(folder / "archive.tar"), "-C", str(folder), "a.txt"])
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (folder / "a.txt").write_text("hello\nworld\nagain\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    (folder / "a.txt").write_text("hello\nchanged\n")


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file but git's own bookkeeping (``.git/config`` included: it can name programs)."""
    found: dict[str, bytes] = {}
    for path in folder.rglob("*"):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and (not relative.startswith(".git/") or relative == ".git/config"):
            found[relative] = path.read_bytes()
    return found


def _run_all(tmp_path: Path, commands: list[str]) -> list[list[str]]:
    """Run every command traced in sandboxes; the programs each one started, in order."""
    template, out = tmp_path / "template", tmp_path / "out"
    _project(template)
    out.mkdir()
    driver = tmp_path / "driver.sh"
    driver.write_text(DRIVER)
    env = ["env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"]
    processes = []
    for chunk in range(CHUNKS):
        part = out / f"part{chunk}"
        part.mkdir()
        lines = tmp_path / f"lines{chunk}"
        lines.write_bytes(b"".join(c.encode() + b"\0" for c in commands[chunk::CHUNKS]))
        argv = [*env, "bash", str(driver), str(lines), str(template), str(part)]
        sandboxed = bwrap_argv(argv, cwd=tmp_path, protected=[], network=False)
        processes.append(subprocess.Popen(sandboxed, stdout=subprocess.DEVNULL))
    for process in processes:
        assert process.wait(timeout=600) == 0
    started: list[list[str]] = [[] for _ in commands]
    for index in range(len(commands)):
        trace = out / f"part{index % CHUNKS}" / f"t{index // CHUNKS}"
        paths = _EXECVE.findall(trace.read_text(errors="replace")) if trace.exists() else []
        started[index] = paths[1:]  # the first is the traced bash itself
    return started


def _allowed_programs(verdict: Verdict) -> set[str]:
    names: set[str] = set()
    for rule in verdict.rules:
        text = (rule.specifier or "").removesuffix(":*").removesuffix(" *")
        program = shlex.split(text)[0]
        names |= {program_name(program), *HELPERS.get(program, set())}
    return names


def _own(path: str, allowed: set[str]) -> bool:
    if "git" in allowed and path.startswith("/usr/lib/git-core/"):
        return True
    return program_name(path) in allowed


def test_what_the_rules_allow_runs_nothing_else(tmp_path: Path) -> None:
    rules = RuleSet.from_texts(tmp_path, RULES)
    commands = [line.command for line in LINES]
    started = _run_all(tmp_path, commands)
    template = _snapshot(tmp_path / "template")
    failures: list[str] = []
    for index, line in enumerate(LINES):
        verdict = rules.evaluate("bash", None, {"command": line.command}, tmp_path)
        ran = started[index]
        names = {program_name(path) for path in ran}
        if line.attack and not PAYLOADS & names:
            failures.append(f"{line.command!r}: marked an attack but started only {ran}")
        if names & DENIED and (verdict is None or verdict.kind not in ("deny", "ask")):
            label = verdict.label() if verdict else "no rule"
            failures.append(f"{line.command!r}: started {sorted(names & DENIED)} under {label}")
        if verdict is None or verdict.kind != "allow":
            continue
        allowed = _allowed_programs(verdict)
        foreign = [path for path in ran if not _own(path, allowed)]
        if foreign:
            failures.append(f"{line.command!r}: {verdict.label()} yet started {foreign}")
        if allowed <= READ_ONLY:
            after = _snapshot(tmp_path / "out" / f"part{index % CHUNKS}" / f"w{index // CHUNKS}")
            changed = sorted(
                k for k in set(after) | set(template) if after.get(k) != template.get(k)
            )
            if changed:
                failures.append(f"{line.command!r}: {verdict.label()} yet changed {changed}")
    assert not failures, "\n".join(failures)
    assert len(LINES) >= 150
