"""Parsing and discovery of agent files, with real files in temporary folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.cli import main
from core.config import paths
from core.definitions.agents import (
    MAX_AGENT_FILE_BYTES,
    AgentFileError,
    discover_agents,
    find_project_root,
    parse_agent_text,
)

PLAIN = "---\nname: helper\ndescription: Helps\n---\nYou help.\n"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def agent_text(
    name: str, description: str = "Does things", extra: str = "", body: str = "Body"
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


@pytest.fixture
def user_dir() -> Path:
    return paths.config_dir() / "agents"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "deep").mkdir(parents=True)
    return root


# --- parsing ------------------------------------------------------------------------------


def test_body_is_the_system_prompt_and_fields_are_read() -> None:
    agent = parse_agent_text(
        agent_text(
            "planner",
            "Plans work",
            "tools: read, grep\nmodel: gpt-4o\n",
            body="You plan.\n\nCarefully.",
        )
    )
    assert agent.name == "planner"
    assert agent.description == "Plans work"
    assert agent.tools == ("read", "grep")
    assert agent.model == "gpt-4o"
    assert agent.system_prompt == "You plan.\n\nCarefully."


def test_bom_and_crlf_are_tolerated() -> None:
    text = "\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nline one\r\nline two\r\n"
    agent = parse_agent_text(text)
    assert (agent.name, agent.description) == ("a", "b")
    assert agent.system_prompt == "line one\nline two"


def test_tools_as_yaml_list_and_claude_names_are_mapped() -> None:
    agent = parse_agent_text(
        agent_text("x", extra="tools:\n  - Read\n  - Glob\n  - Bash\n  - MultiEdit\n  - Edit\n")
    )
    assert agent.tools == ("read", "find", "bash", "edit")
    assert agent.declared_tools == ("Read", "Glob", "Bash", "MultiEdit", "Edit")
    assert agent.problems == ()


def test_unknown_tools_are_kept_with_a_warning() -> None:
    agent = parse_agent_text(agent_text("x", extra="tools: Read, WebFetch\n"))
    assert agent.tools == ("read", "WebFetch")
    assert agent.allowed_tools == ("read",)
    (problem,) = agent.problems
    assert "WebFetch" in problem.message and problem.severity == "warning"
    assert problem.line == 4  # the 'tools:' line of the file


def test_absent_tools_means_every_default_tool() -> None:
    agent = parse_agent_text(PLAIN)
    assert agent.tools is None
    assert "bash" in agent.allowed_tools and "document" in agent.allowed_tools


@pytest.mark.parametrize("model", ["inherit", "''"])
def test_inherit_or_empty_model_means_the_run_default(model: str) -> None:
    assert parse_agent_text(agent_text("x", extra=f"model: {model}\n")).model is None


def test_params_schema_is_parsed() -> None:
    agent = parse_agent_text(
        agent_text(
            "editor",
            extra="params:\n  mode: {type: enum, values: [spot-fix, polish], default: polish}\n"
            "  rounds: {type: integer, default: 2, description: how many}\n",
        )
    )
    assert agent.params["mode"].values == ["spot-fix", "polish"]
    assert agent.params["mode"].default == "polish"
    assert agent.params["rounds"].type == "integer"


def test_enum_param_default_must_be_one_of_its_values() -> None:
    with pytest.raises(AgentFileError, match="not one of"):
        parse_agent_text(
            agent_text("x", extra="params:\n  m: {type: enum, values: [a, b], default: c}\n")
        )


def test_no_frontmatter_is_an_info_not_an_error() -> None:
    with pytest.raises(AgentFileError) as caught:
        parse_agent_text("# Notes\n\nJust a readme.\n")
    assert caught.value.severity == "info"


def test_unclosed_frontmatter_is_an_error() -> None:
    with pytest.raises(AgentFileError, match="not closed") as caught:
        parse_agent_text("---\nname: x\ndescription: y\nbody\n")
    assert caught.value.severity == "error"


@pytest.mark.parametrize("missing", ["name", "description"])
def test_missing_required_field(missing: str) -> None:
    text = PLAIN.replace(f"{missing}:", "other:")
    with pytest.raises(AgentFileError, match=f"missing required field '{missing}'"):
        parse_agent_text(text)


def test_broken_yaml_with_name_and_description_loads_leniently_with_warning() -> None:
    text = (
        "---\nname: reviewer\ndescription: Reviews code: finds bugs, suggests fixes\n"
        "tools: read, grep\n---\nReview.\n"
    )
    agent = parse_agent_text(text)
    assert agent.description == "Reviews code: finds bugs, suggests fixes"
    assert agent.tools == ("read", "grep")
    (problem,) = agent.problems
    assert "not valid YAML at line 3" in problem.message
    assert (problem.line, problem.severity) == (3, "warning")
    assert agent.error is None


def test_description_starting_with_stars_loads_leniently() -> None:
    agent = parse_agent_text("---\nname: x\ndescription: **Bold** claim\n---\nbody\n")
    assert agent.description == "**Bold** claim"
    assert [p.severity for p in agent.problems] == ["warning"]


def test_broken_yaml_without_name_is_an_error_with_line() -> None:
    with pytest.raises(AgentFileError, match="not valid YAML") as caught:
        parse_agent_text("---\ndescription: a: b: [\nfoo: ]\n---\nbody\n")
    assert caught.value.line is not None and caught.value.line >= 2


def test_names_are_kept_as_written() -> None:
    assert parse_agent_text(agent_text("Code Reviewer")).name == "Code Reviewer"


# --- discovery ----------------------------------------------------------------------------


def test_builtin_agents_are_always_there(tmp_path: Path) -> None:
    catalog = discover_agents(tmp_path, "both")
    assert {"scout", "planner", "worker", "reviewer"} <= {a.name for a in catalog.agents}
    assert all(a.source == "builtin" for a in catalog.agents)
    assert catalog.diagnostics == []


def test_project_overrides_user_overrides_builtin(
    tmp_path: Path, user_dir: Path, project: Path
) -> None:
    user_file = write(user_dir / "scout.md", agent_text("scout", "user scout"))
    project_file = write(project / ".claude/agents/Scout.md", agent_text("Scout", "project scout"))
    catalog = discover_agents(project / "src" / "deep", "both")
    scout = catalog.get("SCOUT")
    assert scout is not None
    assert scout.description == "project scout"
    assert scout.source == "project"
    assert scout.overrides == str(user_file)
    assert scout.path == str(project_file)
    assert catalog.project_root == project.resolve()
    shadowed = [a for a in catalog.shadowed if a.key == "scout"]
    assert [a.source for a in shadowed] == ["builtin", "user"]
    assert shadowed[1].description == "user scout"


def test_scopes_select_folders(user_dir: Path, project: Path) -> None:
    write(user_dir / "u.md", agent_text("only-user"))
    write(project / ".pi/agents/p.md", agent_text("only-project"))
    names = {
        scope: {a.name for a in discover_agents(project, scope).agents}
        for scope in ("user", "project", "both")
    }
    assert "only-user" in names["user"] and "only-project" not in names["user"]
    assert "only-project" in names["project"] and "only-user" not in names["project"]
    assert {"only-user", "only-project"} <= names["both"]


def test_pi_user_folder_is_read(isolated_home: Path) -> None:
    write(isolated_home / ".pi/agent/agents/pi-agent.md", agent_text("pi-agent"))
    agent = discover_agents(isolated_home, "user").get("pi-agent")
    assert agent is not None and agent.source == "user"


def test_nearest_project_folder_wins(project: Path) -> None:
    write(project / ".pi/agents/outer.md", agent_text("outer"))
    inner = project / "src"
    write(inner / ".baton/agents/inner.md", agent_text("inner"))
    assert find_project_root(inner / "deep") == inner.resolve()
    names = {a.name for a in discover_agents(inner / "deep", "project").agents}
    assert "inner" in names and "outer" not in names


def test_home_folder_is_not_a_project(isolated_home: Path) -> None:
    write(isolated_home / ".claude/agents/mine.md", agent_text("mine"))
    (isolated_home / "code").mkdir()
    assert find_project_root(isolated_home / "code") is None


def test_a_bad_file_becomes_a_diagnostic_and_others_load(user_dir: Path) -> None:
    write(user_dir / "good.md", agent_text("good"))
    write(user_dir / "bad.md", "---\nname: bad\n---\nno description\n")
    write(user_dir / "latin1.md", "---\nname: é\ndescription: x\n---\n".encode("latin-1"))
    write(user_dir / "README.md", "# About these agents\n")
    catalog = discover_agents(user_dir, "user")
    assert catalog.get("good") is not None
    by_file = {Path(d.path).name: d for d in catalog.diagnostics}
    assert by_file["bad.md"].severity == "error"
    assert "description" in by_file["bad.md"].message
    assert by_file["latin1.md"].message == "not UTF-8 text"
    assert by_file["latin1.md"].line == 2
    assert by_file["README.md"].severity == "info"


def test_files_over_one_megabyte_are_refused(user_dir: Path) -> None:
    write(user_dir / "huge.md", agent_text("huge", body="x" * MAX_AGENT_FILE_BYTES))
    catalog = discover_agents(user_dir, "user")
    assert catalog.get("huge") is None
    assert "over 1 MB" in catalog.diagnostics[0].message


def test_only_markdown_directly_in_the_folder_counts(user_dir: Path) -> None:
    write(user_dir / "nested/deep.md", agent_text("deep"))
    write(user_dir / "notes.txt", agent_text("txt"))
    catalog = discover_agents(user_dir, "user")
    assert catalog.get("deep") is None and catalog.get("txt") is None


@pytest.mark.skipif(os.name != "posix", reason="symlinks need POSIX here")
def test_symlinks_are_followed_and_broken_ones_reported(tmp_path: Path, user_dir: Path) -> None:
    target = write(tmp_path / "elsewhere/real.md", agent_text("linked"))
    user_dir.mkdir(parents=True)
    (user_dir / "linked.md").symlink_to(target)
    (user_dir / "dangling.md").symlink_to(tmp_path / "missing.md")
    (user_dir / "loop.md").symlink_to(user_dir / "loop.md")
    catalog = discover_agents(user_dir, "user")
    assert catalog.get("linked") is not None
    messages = {Path(d.path).name: d.message for d in catalog.diagnostics}
    assert "dangling" in messages["dangling.md"]
    assert "loop" in messages["loop.md"]


def test_duplicate_name_in_one_folder_keeps_the_first(user_dir: Path) -> None:
    write(user_dir / "a.md", agent_text("twin", "first"))
    write(user_dir / "b.md", agent_text("TWIN", "second"))
    catalog = discover_agents(user_dir, "user")
    twin = catalog.get("twin")
    assert twin is not None and twin.description == "first"
    assert any("already defines" in d.message for d in catalog.diagnostics)


# --- baton agents -------------------------------------------------------------------------


def test_agents_json_lists_agents_and_diagnostics(
    user_dir: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(user_dir / "worker.md", agent_text("worker", "my worker", "tools: Read, Bash\n"))
    write(project / ".claude/agents/broken.md", "---\nname: [\n---\n")
    assert main(["agents", "--cwd", str(project), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    worker = next(a for a in data["agents"] if a["name"] == "worker")
    assert worker == {
        "name": "worker",
        "description": "my worker",
        "tools": ["read", "bash"],
        "model": None,
        "source": "user",
        "path": str(user_dir / "worker.md"),
        "overrides": str(Path(worker["overrides"])),
        "runnable": True,
    }
    assert worker["overrides"].endswith(os.path.join("agents", "worker.md"))
    assert [Path(d["path"]).name for d in data["diagnostics"]] == ["broken.md"]


def test_agents_table_marks_overrides_and_lists_diagnostics(
    user_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(user_dir / "scout.md", agent_text("scout", "mine"))
    write(user_dir / "bad.md", "---\nname: bad\n---\n")
    assert main(["agents", "--scope", "user", "--cwd", str(user_dir)]) == 0
    out = capsys.readouterr().out
    assert "scout *" in out
    assert "overrides an agent" in out
    assert "bad.md" in out and "description" in out


def test_agents_rejects_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["agents", "--cwd", str(tmp_path / "nope")]) == 2
