"""Persistent rules in Claude Code's syntax: shell-aware matching, paths, order, storage."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from core.safety.rule_store import RuleStore, project_of
from core.safety.rules import Rule, RuleError, RuleSet, suggest_rule
from core.safety.shell_programs import LAUNCHERS, OPTIONS
from tests.rule_table import LINES, RULES

COMMANDS = [(line.command, line.expected) for line in LINES]


@pytest.mark.parametrize(("command", "expected"), COMMANDS)
def test_shell_commands_against_rules(tmp_path: Path, command: str, expected: str | None) -> None:
    rules = RuleSet.from_texts(tmp_path, RULES)
    verdict = rules.evaluate("bash", None, {"command": command}, tmp_path)
    assert (verdict.kind if verdict else None) == expected, verdict


def test_the_table_is_big_enough() -> None:
    assert len(COMMANDS) >= 150
    assert sum(line.attack for line in LINES) >= 40


def test_deny_beats_ask_beats_allow(tmp_path: Path) -> None:
    rules = RuleSet.from_texts(
        tmp_path, {"allow": ["Bash"], "ask": ["Bash(git:*)"], "deny": ["Bash(git push:*)"]}
    )
    kinds = [
        rules.evaluate("bash", None, {"command": c}, tmp_path).kind  # type: ignore[union-attr]
        for c in ("ls; rm x", "git status", "git push")
    ]
    assert kinds == ["allow", "ask", "deny"]


@pytest.mark.parametrize(
    ("rule", "tool", "path", "matches"),
    [
        ("Edit(src/**)", "edit", "src/a/b.py", True),
        ("Edit(src/**)", "write", "src/new.py", True),
        ("Edit(src/**)", "edit", "docs/a.md", False),
        ("Edit(src/**)", "edit", "src/../docs/a.md", False),
        ("Edit(src/**)", "read", "src/a.py", False),
        ("Read", "grep", "anything", True),
        ("Read(*.md)", "read", "deep/down/x.md", True),
        ("Read(/README.md)", "read", "sub/README.md", False),
        ("Read(//etc/hosts)", "read", "/etc/hosts", True),
        ("Read(src/**)", "ls", "src", False),
        ("Read(src/**)", "find", "src/x", True),
    ],
)
def test_path_rules(tmp_path: Path, rule: str, tool: str, path: str, matches: bool) -> None:
    arguments = {"path": path}
    assert Rule.parse(rule).matches(tool, None, arguments, tmp_path, tmp_path) is matches


def test_path_rules_follow_symlinks_to_where_they_lead(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "secret").mkdir()
    (tmp_path / "src" / "link").symlink_to(tmp_path / "secret")
    rule = Rule.parse("Edit(src/**)")
    assert not rule.matches("edit", None, {"path": "src/link/key"}, tmp_path, tmp_path)


def test_document_rules_name_the_action(tmp_path: Path) -> None:
    rule = Rule.parse("Document(update)")
    assert rule.matches("document", "update", {}, tmp_path, tmp_path)
    assert not rule.matches("document", "delete", {}, tmp_path, tmp_path)


@pytest.mark.parametrize("text", ["Bash(", "rm -rf /", "Bash(git 'x:*)", ""])
def test_bad_rules_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(RuleError):
        Rule.parse(text)


@pytest.mark.parametrize(
    ("tool", "arguments", "suggested"),
    [
        ("bash", {"command": "git diff HEAD~1"}, "Bash(git diff 'HEAD~1')"),
        ("bash", {"command": "git log --output=x"}, "Bash(git log --output=x)"),
        ("bash", {"command": "test -v 'a[$(id)]'"}, "Bash(test -v 'a[$(id)]')"),
        ("bash", {"command": "env FOO=1 make"}, "Bash(env FOO=1 make)"),
        ("bash", {"command": "tar -tf x.tar"}, "Bash(tar -tf x.tar)"),
        ("bash", {"command": "git diff *"}, None),
        ("bash", {"command": "wc -l a.txt"}, "Bash(wc:*)"),
        ("bash", {"command": "ls -la"}, "Bash(ls:*)"),
        ("bash", {"command": "rm -rf build"}, "Bash(rm -rf build)"),
        ("bash", {"command": "find . -name x -delete"}, "Bash(find . -name x -delete)"),
        ("bash", {"command": "git diff; rm x"}, None),
        ("bash", {"command": "git show > out"}, None),
        ("edit", {"path": "src/app.py"}, "Edit(src/app.py)"),
        ("write", {"path": "notes.md"}, "Edit(/notes.md)"),
        ("edit", {"path": "/etc/passwd"}, None),
        ("document", {"action": "delete", "id": 3}, "Document(delete)"),
    ],
)
def test_suggested_rules_are_narrow_and_cover_the_call(
    tmp_path: Path, tool: str, arguments: dict[str, object], suggested: str | None
) -> None:
    action = arguments.get("action") if tool == "document" else None
    rule = suggest_rule(tool, action, arguments, tmp_path, tmp_path)  # type: ignore[arg-type]
    assert rule == suggested
    if rule is not None:
        assert Rule.parse(rule).matches(tool, action, arguments, tmp_path, tmp_path)  # type: ignore[arg-type]


def test_store_adds_edits_removes_and_keeps_projects_apart(tmp_path: Path) -> None:
    store = RuleStore(tmp_path / "config" / "rules.json")
    one, two = tmp_path / "one", tmp_path / "two"
    store.add(one, "allow", "Bash( git diff:* )")
    store.add(one, "allow", "Bash(git diff:*)")
    store.add(two, "deny", "Bash(curl:*)")
    assert store.for_project(one).texts()["allow"] == ["Bash(git diff:*)"]
    assert store.for_project(two).texts() == {"deny": ["Bash(curl:*)"], "ask": [], "allow": []}
    store.set_project(one, {"allow": ["Bash(git log:*)"], "ask": ["Edit"]})
    assert store.for_project(one).texts()["allow"] == ["Bash(git log:*)"]
    with pytest.raises(RuleError):
        store.set_project(one, {"allow": ["Bash("]})
    assert store.for_project(one).texts()["ask"] == ["Edit"]
    store.set_project(one, {})
    assert set(store.projects()) == {two}


def test_rules_of_a_project_apply_in_its_subfolders(tmp_path: Path) -> None:
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    (tmp_path / "proj" / "src").mkdir()
    assert project_of(tmp_path / "proj" / "src") == (tmp_path / "proj").resolve()


def test_import_from_claude_settings(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    settings = {
        "permissions": {
            "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
            "deny": ["Bash(curl:*)", "Read(./.env)"],
        }
    }
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    store = RuleStore(tmp_path / "rules.json")
    added = store.import_claude(tmp_path)
    assert added["allow"] == ["Bash(npm run lint)", "Read(~/.zshrc)"]
    rules = store.for_project(tmp_path)
    env = rules.evaluate("read", None, {"path": ".env"}, tmp_path)
    assert env is not None and env.label() == "deny Read(./.env)"
    assert store.import_claude(tmp_path) == {"deny": [], "ask": [], "allow": []}


def test_import_refuses_a_bad_rule_and_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    bad = {"permissions": {"allow": ["Bash(ls:*)", "Bash("]}}
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(bad))
    store = RuleStore(tmp_path / "rules.json")
    with pytest.raises(RuleError, match=r"settings\.json"):
        store.import_claude(tmp_path)
    assert store.projects() == {}


def test_the_rules_command_adds_lists_checks_and_removes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.cli import main

    where = ["--cwd", str(tmp_path)]
    assert main(["rules", *where, "add", "allow", "Bash(git diff:*)"]) == 0
    assert main(["rules", *where, "add", "allow", "Bash("]) == 2
    assert main(["rules", *where, "check", "git diff HEAD; rm -rf ."]) == 0
    assert main(["rules", *where, "check", "git diff HEAD"]) == 0
    assert main(["rules", *where, "list", "--json"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [
        "added: allow Bash(git diff:*)",
        "no rule: the bash policy decides (ask by default)",
        "allow Bash(git diff:*)",
    ]
    assert json.loads(out[3])["allow"] == ["Bash(git diff:*)"]
    assert main(["rules", *where, "remove", "allow", "Bash(git diff:*)"]) == 0
    assert RuleStore().for_folder(tmp_path).texts()["allow"] == []


def test_a_suggested_rule_is_never_a_prefix_for_risky_programs(tmp_path: Path) -> None:
    """Baton's own suggestion, kept by a person, allows exactly what a sound rule may: a prefix
    only for programs with no risky options, never for a line the table calls an attack, and
    always the line it was suggested for."""
    for line in LINES:
        suggested = suggest_rule("bash", None, {"command": line.command}, tmp_path, tmp_path)
        if suggested is None:
            continue
        spec = Rule.parse(suggested).specifier or ""
        if spec.endswith(":*"):
            program = shlex.split(spec[:-2])[0]
            assert program not in OPTIONS and program not in LAUNCHERS, suggested
            assert not line.attack, suggested
        rules = RuleSet.from_texts(tmp_path, {"allow": [suggested]})
        verdict = rules.evaluate("bash", None, {"command": line.command}, tmp_path)
        assert verdict is not None and verdict.kind == "allow", suggested
