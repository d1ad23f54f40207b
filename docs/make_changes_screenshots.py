"""Screenshots of reviewing changes for the README: a step pane's Changes section, the diff
viewer side by side, and the whole run's Changes view (of a run in its own worktree).

A real run does the changes: Baton's own agent loop with its edit / write / bash tools, on a
small git repository in a temporary folder, answered by the scripted test server (no model is
called). Runs in temporary config and data folders. Run it under Xvfb so real fonts are used::

    xvfb-run -a .venv/bin/python docs/make_changes_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import settle  # noqa: E402

CLI = '''"""Command line of the to-do app."""

import argparse

from todo.store import Store


def main() -> None:
    parser = argparse.ArgumentParser(prog="todo")
    parser.add_argument("command", choices=["add", "list", "done"])
    parser.add_argument("text", nargs="?")
    args = parser.parse_args()
    store = Store.open()
    if args.command == "add":
        store.add(args.text)
    elif args.command == "list":
        for item in store.items():
            print(item)
'''


def _repo(folder: Path) -> None:
    (folder / "src" / "todo").mkdir(parents=True)
    (folder / "src" / "todo" / "cli.py").write_text(CLI, encoding="utf-8")
    (folder / "src" / "todo" / "store.py").write_text("class Store: ...\n", encoding="utf-8")
    (folder / "README.md").write_text("# todo\n\nUsage: todo add TEXT\n", encoding="utf-8")
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        ["-c", "user.name=Ana", "-c", "user.email=ana@example.com", "commit", "-qm", "start"],
    ):
        subprocess.run(["git", *args], cwd=folder, check=True)


def _script(server: object) -> None:
    from tests.llm_server import Reply, ToolCall

    server.queue(  # type: ignore[attr-defined]
        Reply.tools(
            ToolCall(
                "edit",
                {
                    "path": "src/todo/cli.py",
                    "old_string": '    parser.add_argument("text", nargs="?")\n',
                    "new_string": '    parser.add_argument("text", nargs="?")\n'
                    '    parser.add_argument("--verbose", action="store_true",'
                    ' help="say what happens")\n',
                },
            ),
            ToolCall(
                "write",
                {
                    "path": "tests/test_verbose.py",
                    "content": "from todo.cli import main\n\n\ndef test_verbose(capsys):\n"
                    "    ...\n",
                },
            ),
            ToolCall(
                "bash", {"command": "sed -i 's/todo add TEXT/todo [--verbose] add TEXT/' README.md"}
            ),
        ),
        Reply.answer(
            "## Completed\nAdded `--verbose`.\n\n## Files Changed\n- `src/todo/cli.py`\n"
            "- `tests/test_verbose.py`\n- `README.md`"
        ),
    )


def main(shoot: Callable[[Path, Path], int] | None = None) -> int:
    """Shoot (``shoot``: another script's pictures of the same project) in temporary folders."""
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        os.environ["BATON_CONFIG_DIR"] = str(Path(home) / "config")
        os.environ["BATON_DATA_DIR"] = str(Path(home) / "data")
        os.environ["BATON_WORKTREE_DIR"] = str(Path(home) / "worktrees")
        project = Path(home) / "todo-app"
        project.mkdir()
        _repo(project)
        return (shoot or _shoot)(output, project)


def _shoot(output: Path, project: Path) -> int:

    from core.model.events import Event
    from core.run.run_request import RunRequest, StepSpec
    from core.run.runner import Runner
    from core.terminal.commands.changes import run_patch
    from core.workspace.checkpoints import patch
    from core.workspace.restore import checkpoints_of
    from gui.app import create_application
    from gui.changes.diff_viewer import DiffViewer
    from gui.changes.run_changes import RunChangesDialog
    from gui.run.run_view import RunView
    from tests.llm_server import LLMServer

    events: list[Event] = []
    with LLMServer() as server:
        _script(server)
        request = RunRequest(
            mode="single",
            steps=[StepSpec(agent="worker", task="Add a --verbose flag to the CLI")],
            cwd=project,
            isolation="worktree",
        )
        policy = {"bash": "allow", "edit": "allow", "write": "allow"}
        runner = Runner(request, settings=server.settings(policy=policy), listeners=[events.append])
        asyncio.run(runner.run())
    checkpoints = checkpoints_of(events)
    workspace, before, after = run_patch(checkpoints, 0)
    text = asyncio.run(patch(workspace, before, after))

    _app = create_application([])  # alive as long as this function runs

    view = RunView()
    view.resize(1000, 640)
    view.load_events(events)
    view.show()
    settle()
    view.grab().save(str(output / "changes-step.png"))

    viewer = DiffViewer(f"Step 1 changes — run {runner.run_id}", text, "src/todo/cli.py")
    viewer.resize(1200, 460)
    viewer.split_button.click()
    viewer.show()
    settle()
    viewer.grab().save(str(output / "changes-diff.png"))

    dialog = RunChangesDialog(runner.run_id, events)
    dialog.resize(760, 320)
    dialog.show()
    settle()
    dialog.grab().save(str(output / "changes-run.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
