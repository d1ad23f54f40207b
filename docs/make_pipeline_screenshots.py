"""Screenshots of graph pipelines for docs/guide/pipelines.md: a review loop in the Presets view,
a run waiting at a gate, and a best-of-3 run whose judge is picking.

The preset is a real file in a temporary user folder, opened in the real window. The runs are
real: Baton's graph runner against the scripted model server of the tests
(``tests/llm_server.py``; the reviewer answers with structured reviews), its events live into a
run view, pictured while the run waits at its gate (then cancelled). Best-of-3 works in a git
repository made for it. Everything happens in temporary folders; run it under Xvfb so real
fonts are used::

    xvfb-run -a .venv/bin/python docs/make_pipeline_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import open_window, scratch_home, settle  # noqa: E402

HOME = scratch_home("baton-pipelines")
GOAL = "add a --json flag"
SONNET = "claude-sonnet-4-5"

REVIEW_LOOP = """\
name: review-and-ship
description: The worker does it; a reviewer checks until nothing serious is left
argument-hint: "<what to do>"
mode: graph
steps:
  - name: work
    agent: worker
    task: "Implement: $@"
  # review → fix, at most three times, until no critical or major finding is left
  - loop:
      name: review
      max_iterations: 3
      until: "check.count(critical) == 0 and check.count(major) == 0"
      steps:
        - name: check
          agent: reviewer
          task: "Review this work: {previous}"
        - name: fix
          agent: worker
          task: "Fix these: {step.check}"
          when: "check.max_severity >= major"
  - name: ship
    agent: worker
    task: "Commit the change: {previous}"
    gate: {question: "Ship it?", timeout: 600, default: stop}
"""

BEST_OF = """\
name: best-of-3
description: Three attempts in three worktrees; a reviewer picks the one to keep
mode: graph
steps:
  - name: attempt
    agent: worker
    task: "Try: $@"
    best_of: {n: 3, judge: pick}
  - name: pick
    agent: reviewer
    task: "Three attempts follow; start your answer with the best one's name.\n\n{outputs}"
  - name: keep
    agent: worker
    task: "Tidy up the kept change: {previous}"
    gate: {question: "Keep the winner's changes?"}
"""


def answers(server: Any) -> None:
    """What each agent says, by the task it was given (the reviewer: a structured review)."""
    from tests.graph_runs import by_agent, review

    reviews = iter(
        [
            "`--json` ignores `--done`, and `cmd_list` lacks a docstring.\n\n"
            + review("major", "minor"),
            "No critical or major findings left. One minor: `cmd_list` still lacks a docstring "
            "for the new flag.\n\n" + review("minor"),
        ]
    )
    attempts = iter(
        [
            "Added `--json` with `json.dumps(items)`; 2 tests.",
            "Added `--json` and `--pretty`; one printer for both; 5 tests.",
            "Added `--json`; items with dates fail (not serialisable).",
        ]
    )

    def worker(task: str) -> str:
        if task.startswith("Try"):
            return next(attempts)
        if task.startswith("Implement"):
            return "Added `--json` to `todo list`: the items as a JSON array."
        if task.startswith("Fix"):
            return "`--json` now honours `--done`; added a test."
        return "Checked: complete."

    def reviewer(task: str) -> str:
        if task.startswith("Three attempts"):
            return "attempt#2 — the most complete, and its tests pass.\n\n" + review()
        return next(reviews, review())

    server.responder = by_agent({"worker": worker, "reviewer": reviewer})


async def shoot_run(output: Path, name: str, server: Any, text: str, folder: Path) -> None:
    """Run ``text`` for real into a run view; picture it at its gate, then cancel."""
    import asyncio

    from gui.run.run_view import RunView
    from tests.graph_runs import graph_runner

    runner, _events = graph_runner(server, text, folder, args=(GOAL,))
    view = RunView()
    view.resize(1200, 820)
    view.show()
    runner.listeners.append(view.add_event)
    task = asyncio.ensure_future(runner.run())
    for _ in range(600):
        if view.gate_panel.isVisible() or task.done():
            break
        await asyncio.sleep(0.05)
    assert view.gate_panel.isVisible(), "the run did not reach its gate"
    await asyncio.sleep(0.5)
    view.scroll_area.verticalScrollBar().setValue(0)
    await asyncio.sleep(0.2)
    view.grab().save(str(output / name))
    print(output / name)
    runner.cancel()
    await task
    view.close()


def git_project(folder: Path) -> Path:
    """A small git repository: best-of attempts each work in a worktree of it."""
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "todo.py").write_text("def items():\n    return []\n", encoding="utf-8")
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "."],
        ["git", "-c", "user.name=Demo", "-c", "user.email=demo@example.com", "commit", "-qm",
         "start"],
    ):  # fmt: skip
        subprocess.run(command, cwd=folder, check=True)
    return folder


def shoot_preset(output: Path) -> None:
    presets = HOME / "home/.config/baton/presets"
    presets.mkdir(parents=True, exist_ok=True)
    path = presets / "review-and-ship.yaml"
    path.write_text(REVIEW_LOOP, encoding="utf-8")
    window = open_window(HOME, "presets", 1300, 840)
    view = window.presets_view
    view.splitter.setSizes([250, 1050])  # room for the whole graph above the text
    settle(300, lambda: view.preset_list.item_for_path(str(path)) is not None)
    view.preset_list.select_path(str(path))
    settle(400, lambda: view.editor.path() == path)
    view.step_form.select_step(2)
    settle(200)
    window.grab().save(str(output / "pipeline-loop.png"))
    print(output / "pipeline-loop.png")
    window.close()


def main() -> int:
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    import asyncio

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from gui.app import create_application
    from gui.qt_asyncio import run_event_loop
    from tests.llm_server import LLMServer

    app = create_application(sys.argv[:1])
    assert isinstance(app, QApplication)
    shoot_preset(output)
    failures: list[BaseException] = []
    with LLMServer() as server:
        answers(server)

        async def runs() -> None:
            try:
                plain = HOME / "todo-app"
                plain.mkdir(exist_ok=True)
                await shoot_run(output, "pipeline-gate.png", server, REVIEW_LOOP, plain)
                repo = git_project(HOME / "todo-repo")
                await shoot_run(output, "pipeline-best-of.png", server, BEST_OF, repo)
            except BaseException as error:
                failures.append(error)
            finally:
                app.quit()

        QTimer.singleShot(0, lambda: asyncio.ensure_future(runs()))
        run_event_loop(app)
    if failures:
        raise failures[0]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
