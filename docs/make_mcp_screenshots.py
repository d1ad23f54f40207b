"""Screenshots of MCP for the guide: Settings ▸ MCP with the user's and a trusted project's
servers and a Test connection that listed a real server's tools, and the approval of an MCP
tool call showing the server's hints.

Runs in temporary config and data folders (nothing of yours is read or changed); the server
tested is the suite's own FastMCP server (``tests/mcp_test_server.py``). Run it under Xvfb so
real fonts are used::

    xvfb-run -a .venv/bin/python docs/make_mcp_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import settle  # noqa: E402


def main() -> int:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        os.environ["BATON_CONFIG_DIR"] = str(Path(home) / "config")
        os.environ["BATON_DATA_DIR"] = str(Path(home) / "data")
        project = Path(home) / "todo-app"
        project.mkdir()
        return _shoot(output, project)


def _shoot(output: Path, project: Path) -> int:
    from core.config.mcp_servers import McpServer, set_enabled, user_file, write_server
    from core.safety.approvals import ApprovalRequest
    from core.safety.trust import TrustStore
    from gui.app import create_application
    from gui.approvals.approval_dialog import ApprovalDialog
    from gui.settings.settings_dialog import SettingsDialog

    _app = create_application([])  # alive as long as this function runs

    write_server(
        user_file(),
        "notes",
        McpServer(
            command=sys.executable,
            args=["-m", "tests.mcp_test_server"],
            env={"PYTHONPATH": str(ROOT)},
        ),
    )
    write_server(
        user_file(),
        "github",
        McpServer(
            type="http",
            url="https://api.githubcopilot.com/mcp/",
            headers={"Authorization": "Bearer ${GITHUB_TOKEN}"},
        ),
    )
    write_server(
        user_file(),
        "browser",
        McpServer(command="npx", args=["-y", "@playwright/mcp@latest"]),
    )
    servers = {
        "files": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
        },
        "postgres": {"command": "uvx", "args": ["postgres-mcp", "--access-mode=restricted"]},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    TrustStore().trust(project)
    set_enabled(project, "browser", False)

    settings = SettingsDialog()
    settings.resize(900, 640)
    settings.mcp.select_project(project)
    settings.show()
    settings.tabs.setCurrentWidget(settings.mcp)
    page = settings.mcp
    top = page.tree.topLevelItem(0)
    assert top is not None
    for index in range(top.childCount()):
        item = top.child(index)
        if item is not None and item.text(0) == "notes":
            page.tree.setCurrentItem(item)
    page.test_selected()
    settle(until=lambda: "tools" in page.test_result.text())
    settings.grab().save(str(output / "settings-mcp.png"))
    page.shutdown()
    settings.providers.shutdown()
    settings.close()

    ApprovalDialog.ENABLE_DELAY_MS = 0
    dialog = ApprovalDialog()
    dialog.show_request(
        ApprovalRequest(
            request_id="r-a1",
            run_id="r",
            step=0,
            agent="db-helper",
            tool="mcp__postgres__execute_sql",
            call_id="c1",
            arguments={"sql": "DELETE FROM sessions WHERE expires_at < now()"},
            cwd=str(project),
            suggested_rule="mcp__postgres__execute_sql",
            project=str(project),
            note=(
                "MCP server postgres — Postgres MCP Pro; tool execute_sql "
                "(destructive, as the server says)"
            ),
        )
    )
    settle()
    dialog.grab().save(str(output / "approval-mcp.png"))
    dialog.clear_request()
    return 0


if __name__ == "__main__":
    sys.exit(main())
