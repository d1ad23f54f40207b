"""The approval and trust dialogs say whether bash is sandboxed, and what an agent may see."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from core.config.settings import SandboxSettings, Settings, save_settings
from core.safety.approvals import ApprovalRequest
from core.safety.sandbox import sandbox_status
from gui.approvals.approval_dialog import ApprovalDialog
from gui.approvals.trust_dialog import TrustDialog


def bash_request(tool: str = "bash") -> ApprovalRequest:
    return ApprovalRequest(
        request_id=f"r-{tool}",
        run_id="r",
        step=0,
        agent="worker",
        tool=tool,
        call_id="c-1",
        arguments={"command": "make"} if tool == "bash" else {"path": "x"},
        cwd=str(Path.cwd()),
    )


def test_approving_bash_says_not_sandboxed_when_the_sandbox_is_off(qtbot: QtBot) -> None:
    save_settings(Settings(sandbox=SandboxSettings(enabled=False)))
    dialog = ApprovalDialog()
    qtbot.addWidget(dialog)
    dialog.show_request(bash_request())
    assert dialog.sandbox_note.isVisible()
    assert dialog.sandbox_note.text().startswith(
        "bash is not sandboxed (the sandbox is turned off in Settings)"
    )
    dialog.show_request(bash_request("read"))
    assert not dialog.sandbox_note.isVisible()


def test_approving_bash_says_sandboxed_where_it_is(qtbot: QtBot) -> None:
    dialog = ApprovalDialog()
    qtbot.addWidget(dialog)
    dialog.show_request(bash_request())
    status = sandbox_status()
    expected = "bash is sandboxed" if status.active else "bash is not sandboxed"
    assert dialog.sandbox_note.text().startswith(expected)


def test_trust_dialog_lists_secrets_an_agent_may_see_and_the_sandbox_state(
    qtbot: QtBot, tmp_path: Path
) -> None:
    save_settings(Settings(sandbox=SandboxSettings(enabled=False)))
    folder = tmp_path / "repo" / ".pi" / "agents"
    folder.mkdir(parents=True)
    (folder / "deployer.md").write_text(
        "---\nname: deployer\ndescription: d\ntools: bash\nenv: [GITHUB_TOKEN]\n"
        "sandbox: {network: false}\n---\nDeploy.\n"
    )
    dialog = TrustDialog(tmp_path / "repo")
    qtbot.addWidget(dialog)
    item = dialog.file_list.topLevelItem(0)
    assert item is not None
    assert item.text(2) == (
        "tools: bash\nmodel: the run's default model\nmay see secrets: GITHUB_TOKEN"
        "\nno network for bash"
    )
    assert dialog.sandbox_note.text().startswith("bash is not sandboxed")


def test_trust_dialog_shows_every_one_of_twenty_secret_names(qtbot: QtBot, tmp_path: Path) -> None:
    """A long list of secrets wraps onto lines of its own: no name is cut off."""
    names = [f"SERVICE_{n:02d}_API_TOKEN" for n in range(20)]
    folder = tmp_path / "repo" / ".pi" / "agents"
    folder.mkdir(parents=True)
    (folder / "deployer.md").write_text(
        f"---\nname: deployer\ndescription: d\ntools: bash\nenv: [{', '.join(names)}]\n"
        "---\nDeploy.\n"
    )
    dialog = TrustDialog(tmp_path / "repo")
    qtbot.addWidget(dialog)
    dialog.show()
    item = dialog.file_list.topLevelItem(0)
    assert item is not None
    lines = item.text(2).splitlines()
    assert all(len(line) <= 64 for line in lines)
    shown = " ".join(lines)
    assert all(name in shown for name in names)
    # the row is as tall as its lines, and its column as wide as its longest line
    metrics = dialog.file_list.fontMetrics()
    rect = dialog.file_list.visualItemRect(item)
    assert rect.height() >= len(lines) * metrics.lineSpacing()
