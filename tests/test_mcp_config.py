"""MCP configuration, frontmatter and rule names: Claude Code's ``.mcp.json`` read as Claude
Code reads it (broken entries reported, never fatal), written back without losing what else
the file holds; ``mcp:`` and ``mcp__server__tool`` in an agent; the rule syntax."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config.mcp_servers import (
    McpServer,
    configured_secret_values,
    configured_servers,
    expand_env,
    read_server_file,
    remove_server,
    replace_servers,
    set_enabled,
    user_file,
    write_server,
)
from core.definitions.agents import AgentFileError, parse_agent_text
from core.safety.redaction import Redactor
from core.safety.rules import Rule, RuleError, RuleSet
from core.tools.mcp_tool import McpSelection


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_entries_are_read_and_bad_ones_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "fs"], "env": {"A": "1"}},
                "web": {"url": "https://x/mcp"},  # Cursor writes no type
                "sse": {"type": "sse", "url": "https://x/sse"},
                "bad name": {"command": "x"},
                "empty": {},
                "args": {"command": "x", "args": "not a list"},
            }
        },
    )
    found = read_server_file(path)
    assert set(found.servers) == {"files", "web", "sse"}
    assert found.servers["web"].transport == "http"
    assert found.servers["files"].describe() == "npx -y fs"
    assert len(found.problems) == 3
    assert any("'bad name'" in problem for problem in found.problems)


@pytest.mark.parametrize("text", ["not json", "[]", '{"mcpServers": 3}', "x" * 1_000_001])
def test_an_unreadable_file_is_a_problem_not_an_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(text, encoding="utf-8")
    found = read_server_file(path)
    assert found.servers == {} and found.problems


def test_writing_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "mcp.json", {"mcpServers": {"a": {"command": "a"}}, "other": 1})
    write_server(path, "b", McpServer(type="http", url="https://b/mcp", headers={"X": "1"}))
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["other"] == 1
    assert data["mcpServers"]["b"] == {
        "type": "http",
        "url": "https://b/mcp",
        "headers": {"X": "1"},
    }
    assert remove_server(path, "a") and not remove_server(path, "a")
    replace_servers(path, {})
    assert json.loads(path.read_text(encoding="utf-8")) == {"mcpServers": {}, "other": 1}


def test_a_file_that_cannot_be_read_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{broken", encoding="utf-8")
    with pytest.raises(ValueError):
        write_server(path, "a", McpServer(command="a"))
    assert path.read_text(encoding="utf-8") == "{broken"


def test_baton_keys_round_trip(tmp_path: Path) -> None:
    server = McpServer.model_validate(
        {"command": "x", "network": False, "sandbox": False, "startupTimeout": 5}
    )
    write_server(tmp_path / "m.json", "x", server)
    again = read_server_file(tmp_path / "m.json").servers["x"]
    assert (again.network, again.sandbox, again.startup_timeout_s) == (False, False, 5.0)


def test_environment_references_expand_like_claude_code() -> None:
    env = {"TOKEN": "abc"}
    assert expand_env("Bearer ${TOKEN}", env) == "Bearer abc"
    assert expand_env("${MISSING:-fallback}/${MISSING}", env) == "fallback/"


def test_project_servers_only_when_trusted_and_switches_per_project(tmp_path: Path) -> None:
    write_server(user_file(), "mine", McpServer(command="mine"))
    write_server(user_file(), "shared", McpServer(command="user-version"))
    _write(
        tmp_path / ".mcp.json",
        {"mcpServers": {"proj": {"command": "p"}, "shared": {"command": "project-version"}}},
    )
    untrusted = {e.name: e for e in configured_servers(tmp_path, project_trusted=False)}
    assert set(untrusted) == {"mine", "shared"}
    assert untrusted["shared"].server.command == "user-version"
    trusted = {e.name: e for e in configured_servers(tmp_path, project_trusted=True)}
    assert set(trusted) == {"mine", "shared", "proj"}
    assert trusted["shared"].origin == "project"
    set_enabled(tmp_path, "mine", False)
    assert {e.name for e in configured_servers(tmp_path, project_trusted=True)} == {
        "shared",
        "proj",
    }
    other = tmp_path / "other"
    other.mkdir()
    assert "mine" in {e.name for e in configured_servers(other, project_trusted=False)}


def test_configured_headers_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACKER_SECRET_VALUE", "z" * 3)  # too short to matter either way
    write_server(
        user_file(),
        "t",
        McpServer(
            type="http", url="https://t/mcp", headers={"Authorization": "Bearer tok-abcdef-123456"}
        ),
    )
    assert "tok-abcdef-123456" in configured_secret_values()
    scrubbed = Redactor.from_environment(configured_secret_values()).scrub("sent tok-abcdef-123456")
    assert "tok-abcdef-123456" not in scrubbed


# -- frontmatter ------------------------------------------------------------------------------


def _agent(front: str) -> str:
    return f"---\nname: a\ndescription: d\n{front}\n---\nbody\n"


def test_frontmatter_chooses_servers_and_tools() -> None:
    agent = parse_agent_text(_agent("mcp: [github, db]\ntools: [read, mcp__files__read_file]"))
    assert agent.mcp == ("github", "db")
    assert agent.mcp_tools == ("mcp__files__read_file",)
    assert agent.allowed_tools == ("read",)
    assert not [p for p in agent.problems if "unknown tools" in p.message]
    selection = McpSelection.of(agent.mcp, agent.mcp_tools)
    assert selection.servers == {"github", "db"}
    assert selection.tools == {"files": frozenset({"read_file"})}
    assert McpSelection.of([], ["mcp__files__*", "mcp__web"]).servers == {"files", "web"}
    assert not McpSelection.of([], ["read"])


def test_mcp_as_text_and_a_bad_value() -> None:
    assert parse_agent_text(_agent("mcp: github, db")).mcp == ("github", "db")
    assert not parse_agent_text(_agent("name2: x")).uses_mcp
    with pytest.raises(AgentFileError, match="'mcp' must be a list"):
        parse_agent_text(_agent("mcp: {a: 1}"))


# -- rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "tool", "covered"),
    [
        ("mcp__github__create_issue", "mcp__github__create_issue", True),
        ("mcp__github__create_issue", "mcp__github__delete_repo", False),
        ("mcp__github__*", "mcp__github__delete_repo", True),
        ("mcp__github", "mcp__github__delete_repo", True),
        ("mcp__github", "mcp__githubx__tool", False),
        ("mcp__github__*", "mcp__other__tool", False),
        ("mcp__github__create_issue", "bash", False),
    ],
)
def test_mcp_rule_names(rule: str, tool: str, covered: bool) -> None:
    rules = RuleSet.from_texts(Path("/p"), {"allow": [rule]})
    verdict = rules.evaluate(tool, None, {}, Path("/p"))
    assert (verdict is not None and verdict.kind == "allow") is covered


@pytest.mark.parametrize("text", ["mcp__github__create_*", "Bash*", "Read*"])
def test_wildcards_other_than_a_whole_server_are_refused(text: str) -> None:
    with pytest.raises(RuleError, match="wildcard"):
        Rule.parse(text)
