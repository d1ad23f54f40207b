"""``baton mcp``: list, add, remove, test (a real server), switch per project, import from
Claude Code and Cursor — through the real command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.config.mcp_servers import disabled_in, read_server_file, user_file
from tests.mcp_support import REPO, wait_no_server_left


def baton(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["mcp", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_list_test_and_remove_a_stdio_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = baton(
        capsys,
        "add",
        "t",
        "--env",
        f"PYTHONPATH={REPO}",
        "--no-network",
        "--",
        sys.executable,
        "-m",
        "tests.mcp_test_server",
    )
    assert code == 0 and "added t" in out
    server = read_server_file(user_file()).servers["t"]
    assert server.args == ["-m", "tests.mcp_test_server"] and server.network is False

    code, out, _ = baton(capsys, "--cwd", str(tmp_path), "list", "--json")
    (row,) = json.loads(out)
    assert (
        row["name"] == "t" and row["enabled"] is True and "tests.mcp_test_server" in row["target"]
    )

    code, out, err = baton(capsys, "--cwd", str(tmp_path), "test", "t")
    assert code == 0, err
    assert "t: 10 tools" in out and "echo" in out and "Say the text back." in out
    wait_no_server_left()

    assert baton(capsys, "remove", "t")[0] == 0
    assert read_server_file(user_file()).servers == {}
    assert baton(capsys, "remove", "t")[0] == 1


def test_a_failing_server_says_why(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    baton(capsys, "add", "bad", "--", sys.executable, "-c", "import sys; sys.exit('no way')")
    code, _, err = baton(capsys, "--cwd", str(tmp_path), "test", "bad")
    assert code == 1 and "MCP server bad failed: the server exited" in err and "no way" in err


def test_an_http_servers_header_is_never_printed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    secret = "Bearer tok-0123456789abcdef"
    baton(
        capsys, "add", "web", "--url", "https://mcp.example.com/mcp", "--header", f"X-Key: {secret}"
    )
    server = read_server_file(user_file()).servers["web"]
    assert server.transport == "http" and server.headers == {"X-Key": secret}
    _, out, _ = baton(capsys, "--cwd", str(tmp_path), "list")
    assert "https://mcp.example.com/mcp" in out and "tok-0123456789abcdef" not in out


def test_an_untrusted_project_server_is_not_started_by_test(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    payload = f"open({str(marker)!r}, 'w')"
    servers = {"evil": {"command": sys.executable, "args": ["-c", payload]}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    _, out, _ = baton(capsys, "--cwd", str(tmp_path), "list")
    assert "evil" in out and "not trusted" in out
    code, _, err = baton(capsys, "--cwd", str(tmp_path), "test", "evil")
    assert code == 1 and "not trusted" in err
    assert not marker.exists()


def test_disable_and_enable_for_one_project(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    baton(capsys, "add", "t", "--", "server")
    assert baton(capsys, "--cwd", str(tmp_path), "disable", "t")[0] == 0
    assert disabled_in(tmp_path) == {"t"}
    _, out, _ = baton(capsys, "--cwd", str(tmp_path), "list", "--json")
    assert json.loads(out)[0]["enabled"] is False
    baton(capsys, "--cwd", str(tmp_path), "enable", "t")
    assert disabled_in(tmp_path) == set()


def test_import_from_claude_code_and_cursor(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, isolated_home: Path
) -> None:
    claude = {
        "mcpServers": {"github": {"type": "http", "url": "https://api.example.com/mcp"}},
        "projects": {str(tmp_path.resolve()): {"mcpServers": {"local-db": {"command": "db-mcp"}}}},
    }
    (isolated_home / ".claude.json").write_text(json.dumps(claude), encoding="utf-8")
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"shared": {"command": "npx", "args": ["-y", "srv"]}}}),
        encoding="utf-8",
    )
    (isolated_home / ".cursor").mkdir()
    (isolated_home / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"browser": {"url": "http://localhost:3000/mcp"}}}),
        encoding="utf-8",
    )
    code, out, _ = baton(capsys, "--cwd", str(tmp_path), "import", "claude")
    assert code == 0 and "3 servers imported" in out
    assert baton(capsys, "import", "cursor")[0] == 0
    servers = read_server_file(user_file()).servers
    assert set(servers) == {"github", "local-db", "shared", "browser"}
    assert servers["browser"].transport == "http"
    assert servers["shared"].describe() == "npx -y srv"
    _, out, _ = baton(capsys, "import", "cursor")
    assert "kept browser" in out
