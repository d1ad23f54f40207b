"""Screenshots of comparing, searching and commenting for the README: two runs side by side,
History's search inside runs, and review comments on a step's diff.

Real runs make the content: Baton's own agent loop on the small git repository of
``make_changes_screenshots.py`` (its repository and first script reused), answered by the
scripted test server; a second run of the same task takes another route. Temporary config and
data folders. Under Xvfb, for real fonts::

    xvfb-run -a .venv/bin/python docs/make_review_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import settle  # noqa: E402

sys.path.insert(0, str(ROOT / "docs"))

from make_changes_screenshots import _script  # noqa: E402
from make_changes_screenshots import main as changes_main  # noqa: E402

TASK = "Add a --verbose flag to the CLI"


def _second_script(server: object) -> None:
    """The same task, done another way: the flag only, through one edit, and a longer answer."""
    from tests.llm_server import Reply, Tokens, ToolCall

    server.queue(  # type: ignore[attr-defined]
        Reply.tools(
            ToolCall("read", {"path": "src/todo/cli.py"}),
            ToolCall("grep", {"pattern": "add_argument", "path": "src"}),
            tokens=Tokens(3100, 140),
        ),
        Reply.tools(
            ToolCall(
                "edit",
                {
                    "path": "src/todo/cli.py",
                    "old_string": "    args = parser.parse_args()\n",
                    "new_string": '    parser.add_argument("-v", "--verbose", action="count")\n'
                    "    args = parser.parse_args()\n",
                },
            ),
            tokens=Tokens(3900, 90),
        ),
        Reply.answer(
            "## Completed\nAdded `-v/--verbose` (repeatable).\n\n## Files Changed\n"
            "- `src/todo/cli.py`\n\n## Notes\nNo test yet.",
            tokens=Tokens(4200, 60),
        ),
    )


def main() -> int:
    return changes_main(_shoot)


def _run(server: object, project: Path) -> tuple[str, list[object]]:
    from core.model.events import Event
    from core.run.run_request import RunRequest, StepSpec
    from core.run.runner import Runner

    events: list[Event] = []
    request = RunRequest(mode="single", steps=[StepSpec(agent="worker", task=TASK)], cwd=project)
    policy = {"bash": "allow", "edit": "allow", "write": "allow"}
    runner = Runner(request, settings=server.settings(policy=policy), listeners=[events.append])  # type: ignore[attr-defined]
    asyncio.run(runner.run())
    return runner.run_id, list(events)


def _shoot(output: Path, project: Path) -> int:
    from PySide6.QtGui import QTextCursor

    from core.history.run_compare import compare_runs
    from core.record.run_state import fold
    from core.run.review_comments import ReviewText, diff_texts, output_path
    from core.terminal.commands.changes import run_patch
    from core.workspace.checkpoints import patch
    from core.workspace.patch_lines import parse_patch
    from core.workspace.restore import checkpoints_of
    from gui.app import create_application
    from gui.compare.compare_view import CompareDialog
    from gui.history.runs_history import HistoryPage
    from gui.review.review_dialog import ReviewDialog
    from tests.llm_server import LLMServer

    with LLMServer() as server:
        _script(server)
        _first_id, first = _run(server, project)
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=project, check=True)
        subprocess.run(["git", "clean", "-qfd"], cwd=project, check=True)
        _second_script(server)
        _second_id, second = _run(server, project)
    first_state, second_state = fold(first), fold(second)  # type: ignore[arg-type]
    workspace, before, after = run_patch(checkpoints_of(first), 0)  # type: ignore[arg-type]
    text = asyncio.run(patch(workspace, before, after))

    _app = create_application([])  # alive as long as this function runs

    compare = CompareDialog(compare_runs(first_state, second_state))
    compare.resize(1180, 720)
    compare.show()
    settle()
    compare.grab().save(str(output / "runs-compare.png"))

    history = HistoryPage()
    history.resize(1100, 420)
    history.show()
    history.search_panel.field.setText("verbose")
    history.search_panel.search_now()
    settle(until=lambda: history.search_panel.results.count() > 0)
    history.grab().save(str(output / "runs-search.png"))

    step = first_state.steps[0]
    sources = [ReviewText(output_path(0), step.output), *diff_texts(parse_patch(text))]
    review = ReviewDialog(0, "worker", sources, ["worker", "reviewer"])
    review.resize(1180, 560)
    review.show_source("src/todo/cli.py")
    for line, comment in (
        (4, "Put the flag on the subcommands too: `todo add --verbose` fails now."),
        (5, 'Help text: "print each step" says more than "say what happens".'),
    ):
        cursor = QTextCursor(review.text.document().findBlockByNumber(line - 1))
        review.text.setTextCursor(cursor)
        review.comment.setPlainText(comment)
        review.add_comment()
    cursor = QTextCursor(review.text.document().findBlockByNumber(4))
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
    review.text.setTextCursor(cursor)
    review.comment.setPlainText("Why not -v as well?")
    review.show()
    settle()
    review.grab().save(str(output / "review-comments.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
