"""Screenshots of the run view for the README: a finished chain, a failed chain, and a
parallel run still going.

Each scene is a :class:`~gui.run.run_view.RunView` alone in a 1280x860 window, fed the same event
sequences the tests use (``tests/gui/run_events.py``), saved with ``QWidget.grab()``. Run it
under Xvfb so real fonts are used (the offscreen platform works too)::

    Xvfb :97 -screen 0 1400x900x24 &
    DISPLAY=:97 .venv/bin/python docs/make_screenshots.py [OUTPUT_FOLDER]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import settle  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "gui"))

SIZE = (1280, 860)


def main() -> int:
    from run_events import failed_chain, finished_chain, running_parallel

    from gui.app import create_application
    from gui.run.run_view import RunView
    from gui.run.tool_call_row import ToolCallRow

    output = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    output.mkdir(parents=True, exist_ok=True)
    _app = create_application([])  # alive as long as this function runs

    def shoot(name: str, build: Callable[[RunView], None]) -> None:
        view = RunView()
        view.setWindowTitle("Baton — run")
        view.resize(*SIZE)
        view.show()
        build(view)
        settle(150)
        path = output / name
        view.grab().save(str(path))
        print(f"{path} ({path.stat().st_size // 1024} KB)")
        view.close()
        view.deleteLater()

    def finished(view: RunView) -> None:
        view.load_events(finished_chain())
        open_bash_rows(view, 2)  # the test run's output
        settle(150)
        # the worker, from its top
        view.scroll_area.verticalScrollBar().setValue(view.pane(2).y() - 10)

    def open_bash_rows(view: RunView, step: int) -> None:
        settle(100, until=lambda: not view.is_building())  # panes come a turn at a time
        for row in view.pane(step).item_widgets():
            if isinstance(row, ToolCallRow) and row.tool_name() == "bash":
                row.set_expanded(True)

    def failed(view: RunView) -> None:
        view.load_events(failed_chain())
        open_bash_rows(view, 0)

    def parallel(view: RunView) -> None:
        view.add_events(running_parallel(done=2, running=1, waiting=1))
        view.model.flush()
        open_bash_rows(view, 2)  # the output streaming in

    shoot("run-chain.png", finished)
    shoot("run-failed.png", failed)
    shoot("run-parallel.png", parallel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
