"""Screenshots of approvals and rules for the README: the approval dialog offering "always
allow <rule> here" for a command a rule asked about, and Settings ▸ Rules.

Runs in temporary config and data folders (nothing of yours is read or changed). Run it under
Xvfb so real fonts are used::

    xvfb-run -a .venv/bin/python docs/make_approval_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

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
        return _shoot(output, Path("/home/ana/code/todo-app"))  # shown, never touched


def _shoot(output: Path, project: Path) -> int:

    from core.safety.approvals import ApprovalRequest
    from core.safety.rule_store import RuleStore
    from gui.app import create_application
    from gui.approvals.approval_dialog import ApprovalDialog
    from gui.settings.settings_dialog import SettingsDialog

    _app = create_application([])  # alive as long as this function runs

    store = RuleStore()
    store.set_project(
        project,
        {
            "deny": ["Bash(curl:*)", "Read(./.env)"],
            "ask": ["Bash(git push:*)"],
            "allow": ["Bash(git diff:*)", "Bash(npm test)", "Edit(src/**)"],
        },
    )
    ApprovalDialog.ENABLE_DELAY_MS = 0
    dialog = ApprovalDialog()
    dialog.show_request(
        ApprovalRequest(
            request_id="r-a1",
            run_id="r",
            step=2,
            agent="worker",
            tool="bash",
            call_id="c1",
            arguments={"command": "git log --oneline -5 src/"},
            cwd=str(project),
            suggested_rule="Bash(git log:*)",
            project=str(project),
        )
    )
    settle()
    dialog.grab().save(str(output / "approval-rule.png"))
    dialog.clear_request()

    settings = SettingsDialog()
    settings.show()
    settings.tabs.setCurrentWidget(settings.rules)
    settings.rules.tree.setCurrentItem(settings.rules.tree.topLevelItem(0).child(3))  # type: ignore[union-attr]
    settle()
    settings.grab().save(str(output / "settings-rules.png"))
    settings.providers.shutdown()
    settings.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
