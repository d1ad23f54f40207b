"""Screenshots of the whole window for the README: the launch dialog, the Presets view, the run
history, and runs shown in the window — a finished chain, a failed chain, a parallel run still
going.

Every run is real: Baton's runner and its own agent loop against the scripted model server of
the tests (``tests/llm_server.py``), with real tool calls (ls, grep, read, edit, bash) in a
small demo project, so what the pictures show is what a person would see. The finished and
failed chains are taken with ``baton open RUN --screenshot``; the running parallel run is
captured live from the window. Everything happens in temporary folders::

    Xvfb :95 -screen 0 1400x900x24 &
    DISPLAY=:95 .venv/bin/python docs/make_window_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
SCRATCH = Path(tempfile.gettempdir()) / "baton-demo"  # short: it shows in the run headers
shutil.rmtree(SCRATCH, ignore_errors=True)
for variable, sub in (("HOME", "home"), ("BATON_CONFIG_DIR", "home/.config/baton"),
                      ("BATON_DATA_DIR", "home/.local/share/baton")):  # fmt: skip
    os.environ[variable] = str(SCRATCH / sub)
    (SCRATCH / sub).mkdir(parents=True, exist_ok=True)
for variable in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
    os.environ.pop(variable, None)

MODEL = "claude-sonnet-4-5"
PROJECT = SCRATCH / "todo-app"

CLI = '''"""Command line of the todo app."""
import argparse

from todo.store import load_items, save_items


def cmd_list(args: argparse.Namespace) -> int:
    for number, item in enumerate(load_items(args.file), start=1):
        mark = "x" if item["done"] else " "
        print(f"{number:>3} [{mark}] {item['title']}")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    items = load_items(args.file)
    items.append({"title": args.title, "done": False})
    save_items(args.file, items)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="todo")
    parser.add_argument("--file", default="todo.json")
    commands = parser.add_subparsers(dest="command", required=True)
    list_parser = commands.add_parser("list", help="show the list")
    list_parser.set_defaults(handler=cmd_list)
    add_parser = commands.add_parser("add", help="add an item")
    add_parser.add_argument("title")
    add_parser.set_defaults(handler=cmd_add)
    return parser
'''
STORE = '''"""Items live in one JSON file."""
import json
from pathlib import Path


def load_items(path: str) -> list[dict]:
    file = Path(path)
    return json.loads(file.read_text()) if file.exists() else []


def save_items(path: str, items: list[dict]) -> None:
    Path(path).write_text(json.dumps(items, indent=2))
'''
TESTS = """import io
import json
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

from todo.cli import build_parser


class ListTest(unittest.TestCase):
    def run_cli(self, *argv: str) -> str:
        out = io.StringIO()
        args = build_parser().parse_args(["--file", self.file, *argv])
        with redirect_stdout(out):
            args.handler(args)
        return out.getvalue()

    def setUp(self) -> None:
        self.file = str(Path(tempfile.mkdtemp()) / "todo.json")
        Path(self.file).write_text(json.dumps([{"title": "milk", "done": False}]))

    def test_list(self) -> None:
        self.assertIn("[ ] milk", self.run_cli("list"))
"""


def make_project() -> None:
    (PROJECT / "todo").mkdir(parents=True)
    (PROJECT / "tests").mkdir()
    (PROJECT / "todo" / "__init__.py").write_text("")
    (PROJECT / "todo" / "cli.py").write_text(CLI)
    (PROJECT / "todo" / "store.py").write_text(STORE)
    (PROJECT / "tests" / "__init__.py").write_text("")
    (PROJECT / "tests" / "test_cli.py").write_text(TESTS)
    (PROJECT / "README.md").write_text("# todo\n\nA tiny to-do list for the terminal.\n")


# ------------------------------------------------------------------------------------------
# Scripted model answers


def scout_replies() -> list[Any]:
    from llm_server import Reply, Tokens, ToolCall

    return [
        Reply.tool("ls", {"path": "."}, tokens=Tokens(2_150, 38)),
        Reply.tools(
            ToolCall("grep", {"pattern": "def cmd_list|add_parser\\(", "path": "todo"}),
            ToolCall("read", {"path": "todo/cli.py"}),
            tokens=Tokens(2_480, 96, cached=2_048),
        ),
        Reply.answer(
            "## Files Retrieved\n"
            "1. `todo/cli.py` (lines 7-11) - `cmd_list` prints each item\n"
            "2. `todo/cli.py` (lines 21-31) - `build_parser` defines the sub-commands\n"
            "3. `tests/test_cli.py` - one test of `list`\n\n"
            "## Key Code\n"
            "```python\ndef cmd_list(args: argparse.Namespace) -> int:\n"
            "    for number, item in enumerate(load_items(args.file), start=1):\n"
            '        mark = "x" if item["done"] else " "\n```\n\n'
            "## Architecture\nItems are dicts with `title` and `done`, loaded from one JSON "
            "file by `todo/store.py`.\n\n"
            "## Start Here\n`cmd_list` in `todo/cli.py`: add the flag next to it.",
            tokens=Tokens(3_900, 410, cached=2_048),
        ),
    ]


def planner_replies() -> list[Any]:
    from llm_server import Reply, Tokens

    return [
        Reply.tool("read", {"path": "tests/test_cli.py"}, tokens=Tokens(3_100, 41)),
        Reply.answer(
            "## Goal\n`todo list --json` prints the items as a JSON array.\n\n"
            "## Plan\n1. Add a `--json` flag to the `list` parser.\n"
            "2. In `cmd_list`, print `json.dumps(items, indent=2)` when it is set.\n"
            "3. Add a test that parses the output.\n\n"
            "## Files to Modify\n- `todo/cli.py`\n- `tests/test_cli.py`\n\n"
            "## New Files\nNone.\n\n## Risks\nNone worth noting: plain output is unchanged.",
            reasoning="The flag belongs to the list sub-parser only; json is in the stdlib.",
            tokens=Tokens(4_600, 380, cached=3_072),
        ),
    ]


def worker_replies() -> list[Any]:
    from llm_server import Reply, Tokens, ToolCall

    return [
        Reply.tools(
            ToolCall(
                "edit",
                {
                    "path": "todo/cli.py",
                    "old_string": "def cmd_list(args: argparse.Namespace) -> int:\n",
                    "new_string": "def cmd_list(args: argparse.Namespace) -> int:\n"
                    "    if args.json:\n"
                    "        print(json.dumps(load_items(args.file), indent=2))\n"
                    "        return 0\n",
                },
            ),
            ToolCall(
                "edit",
                {
                    "path": "todo/cli.py",
                    "old_string": "    list_parser.set_defaults(handler=cmd_list)\n",
                    "new_string": '    list_parser.add_argument("--json", action="store_true")\n'
                    "    list_parser.set_defaults(handler=cmd_list)\n",
                },
            ),
            ToolCall(
                "edit",
                {
                    "path": "todo/cli.py",
                    "old_string": "import argparse\n",
                    "new_string": "import argparse\nimport json\n",
                },
            ),
            tokens=Tokens(5_200, 310, cached=4_096),
        ),
        Reply.tool(
            "bash",
            {"command": 'python3 -m unittest -v 2>&1 && python3 -c "import todo.cli"'},
            tokens=Tokens(5_900, 45, cached=5_120),
        ),
        Reply.answer(
            "## Completed\n`todo list --json` prints the list as JSON; the plain output is "
            "unchanged and the tests pass.\n\n"
            "## Files Changed\n- `todo/cli.py` - `--json` flag on `list`, JSON branch in "
            "`cmd_list`\n\n## Notes\nA test for the JSON output is still to write.",
            tokens=Tokens(6_400, 160, cached=5_120),
        ),
    ]


# ------------------------------------------------------------------------------------------
# Headless runs (the history, and the two chains shown with `baton open`)


def headless_runs(server: Any) -> dict[str, Path]:
    from llm_server import Reply, Tokens

    from core.config.settings import load_settings
    from core.run.run_request import RunRequest, StepSpec, preset_request
    from core.run.runner import Runner
    from core.safety.approvals import approve_all

    settings = load_settings()
    made: dict[str, Path] = {}

    def run(name: str, request: RunRequest, cancel_after: float | None = None) -> None:
        runner = Runner(request, settings=settings, responder=approve_all)

        async def go() -> None:
            task = asyncio.ensure_future(runner.run())
            if cancel_after is not None:
                await asyncio.sleep(cancel_after)
                runner.cancel()
            await task

        asyncio.run(go())
        made[name] = Path(os.environ["BATON_DATA_DIR"]) / "runs" / f"{runner.run_id}.jsonl"
        print(f"run {name}: {runner.result.status if runner.result else '?'}")

    server.queue(Reply.answer("`todo/store.py` reads and writes the whole JSON file.",
                              tokens=Tokens(1_900, 120)))  # fmt: skip
    run("single", RunRequest(mode="single", cwd=PROJECT,
                             steps=[StepSpec("scout", "Where are items stored?")]))  # fmt: skip

    server.queue(*[Reply.answer(f"Looks fine: {n}.", tokens=Tokens(2_300, 140)) for n in "abc"])
    run("review", RunRequest(mode="parallel", cwd=PROJECT, steps=[
        StepSpec("reviewer", "Review todo/cli.py"),
        StepSpec("reviewer", "Review todo/store.py"),
        StepSpec("reviewer", "Review tests/test_cli.py"),
    ]))  # fmt: skip

    release = threading.Event()
    server.queue(Reply.tool("grep", {"pattern": "TODO", "path": "."}), Reply.hang(release=release))
    run("cancelled", RunRequest(mode="single", cwd=PROJECT,
                                steps=[StepSpec("scout", "Find every TODO comment")]),
        cancel_after=1.0)  # fmt: skip
    release.set()

    server.queue(*scout_replies(), *planner_replies(), *worker_replies())  # fmt: skip
    request, _agents, _presets = preset_request(
        "implement", ["add a --json flag to 'todo list'"], PROJECT
    )
    run("finished", request)

    server.queue(
        Reply.tool("grep", {"pattern": "json", "path": "todo"}, tokens=Tokens(2_050, 40)),
        Reply.answer("## Files Retrieved\n1. `todo/store.py` - `load_items`, `save_items`\n\n"
                     "## Start Here\n`todo/store.py`: both functions touch the file.",
                     tokens=Tokens(2_900, 180)),
        Reply.error(500, "upstream overloaded"),
        Reply.error(502, "bad gateway"),
        Reply.error(500, "upstream overloaded"),
    )  # fmt: skip
    request, _agents, _presets = preset_request("implement", ["store the items in SQLite"], PROJECT)
    run("failed", request)
    return made


# ------------------------------------------------------------------------------------------
# The window


async def window_scenes(output: Path, server: Any) -> None:
    from llm_server import Reply, Tokens, last_user_text
    from PySide6.QtWidgets import QApplication

    from core.run.run_request import RunRequest, StepSpec
    from gui.window.main_window import MainWindow

    def save(widget: Any, name: str) -> None:
        path = output / name
        widget.grab().save(str(path))
        print(f"{path} ({path.stat().st_size // 1024} KB)")

    async def until(condition: Any, limit_s: float = 20.0) -> None:
        deadline = asyncio.get_running_loop().time() + limit_s
        while not condition():
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("a screenshot scene did not get ready")
            await asyncio.sleep(0.05)

    window = MainWindow(PROJECT)
    window.resize(1200, 760)
    window.show()
    await until(window.agents_view.is_read)  # listed after the first paint
    await asyncio.sleep(0.4)

    window.show_view("presets")
    presets = window.presets_view
    implement = presets.catalog.get("implement")
    assert implement is not None and implement.path is not None
    presets.open_path(Path(implement.path))
    await asyncio.sleep(0.3)
    save(window, "presets.png")

    dialog = window.open_launch_dialog("implement")
    dialog.args_edit.setText("add a --json flag to 'todo list'")
    await asyncio.sleep(0.3)
    save(dialog, "launch-dialog.png")
    dialog.set_ad_hoc("chain", [])
    editor = dialog.steps_editor
    editor.rows()[0].agent.setCurrentText("writer")
    editor.rows()[0].task.setPlainText("Write release notes for {version} in a {tone} tone.")
    editor.add_step()
    editor.rows()[1].agent.setCurrentText("reviewer")
    editor.rows()[1].task.setPlainText("Check these notes against the changes:\n\n{previous}")
    dialog.params_form.widget("version").setText("1.4.0")  # type: ignore[attr-defined]
    await asyncio.sleep(0.3)
    save(dialog, "launch-dialog-adhoc.png")
    dialog.close()

    hold = threading.Event()

    def reply(body: dict[str, Any]) -> Any:
        text = last_user_text(body)
        if "store.py" in text:
            if len(body["messages"]) <= 2:
                return Reply.tool("bash", {"command": "python3 -m unittest -v 2>&1"},
                                  tokens=Tokens(2_200, 60))  # fmt: skip
            return Reply.answer("Error handling is missing: ", hold=hold, pieces=1)
        verdict = "No issues found." if "cli.py" in text else "One nit: name the temp file."
        return Reply.answer(f"## Review\n{verdict}", tokens=Tokens(2_600, 190))

    server.responder = reply
    steps = [StepSpec("reviewer", f"Review {file} for bugs and unclear code")
             for file in ("todo/cli.py", "todo/store.py", "tests/test_cli.py")]  # fmt: skip
    request = RunRequest(mode="parallel", steps=steps, cwd=PROJECT)
    session = await window.run_controller.launch(request, "all", window)
    assert session is not None
    await until(lambda: session.view.state().progress_line() == "2/3 done, 1 running")
    await until(lambda: any(r.closed.is_set() is False and r.reply is not None
                            and r.reply.hold is hold for r in server.requests))  # fmt: skip
    await asyncio.sleep(0.6)
    save(window, "window-run-parallel.png")

    window.runs_view.show_history()
    await asyncio.sleep(0.3)
    save(window, "runs-history.png")

    hold.set()
    await until(lambda: not session.is_active())
    window.close()
    QApplication.quit()


def main() -> int:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    make_project()
    from llm_server import LLMServer

    from core.config.settings import Limits, Provider, Settings, save_settings

    agents = Path(os.environ["BATON_CONFIG_DIR"]) / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "writer.md").write_text(
        "---\nname: writer\ndescription: Writes release notes and changelogs\ntools: read, grep\n"
        'params:\n  version: {type: string, description: "the release, e.g. 1.4.0"}\n'
        "  tone: {type: enum, values: [plain, friendly, formal], default: friendly}\n"
        "  max-words: {type: integer, default: 250}\n"
        "  include-contributors: {type: boolean, default: true}\n---\nYou write notes.\n"
    )
    with LLMServer() as server:
        save_settings(Settings(
            providers=[Provider(name="litellm", base_url=server.base_url)],
            default_model=MODEL,
            limits=Limits(max_retries=2),
        ))  # fmt: skip
        runs = headless_runs(server)
        for name, run_file in (("finished", "window-run-finished.png"),
                               ("failed", "window-run-failed.png")):  # fmt: skip
            subprocess.run(
                [sys.executable, "-m", "gui.launcher", "open", str(runs[name]), "--screenshot",
                 str(output / run_file)],
                cwd=ROOT, check=True,
            )  # fmt: skip
        from PySide6.QtCore import QTimer

        from gui.app import create_application
        from gui.qt_asyncio import run_event_loop

        app = create_application([])
        failures: list[BaseException] = []

        def start() -> None:
            task = asyncio.ensure_future(window_scenes(output, server))
            task.add_done_callback(lambda t: t.exception() and failures.append(t.exception()))

        QTimer.singleShot(0, start)
        run_event_loop(app)
        if failures:
            raise failures[0]
    return 0


if __name__ == "__main__":
    sys.exit(main())
