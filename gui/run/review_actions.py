"""What the Runs view does for reviewing: open a search result where it matched, compare two
runs, comment on a step and start the follow-up.

Kept apart from :class:`gui.run.runs_view.RunsView` (which owns the tabs, launches runs and
imports this module: it hands itself in as a :class:`ReviewHost`) so each file has one job;
the reading and comparing happen on a worker thread (:class:`gui.widgets.background.LatestJob`),
the follow-up's request is the core's (:func:`core.run.review_comments.follow_up_request`).
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QWidget

from core.definitions.agents import discover_agents
from core.history.run_compare import RunComparison, compare_runs
from core.history.run_reading import read_folded
from core.history.run_search import SearchHit
from core.model.errors import RunError
from core.model.events import StepChanges
from core.record.run_files import RunIndex, RunRecord, load_run, run_file
from core.run.review_comments import (
    ReviewComment,
    ReviewText,
    diff_texts,
    follow_up_request,
    output_path,
)
from core.workspace.checkpoints import Workspace, patch
from core.workspace.git_command import GitError
from core.workspace.patch_lines import parse_patch
from gui.changes.actions import start
from gui.compare.compare_view import CompareDialog
from gui.review.review_dialog import ReviewDialog
from gui.run.markdown_stream import MarkdownStream
from gui.run.run_page import RunPage
from gui.widgets.background import LatestJob
from gui.widgets.match_highlight import highlight_matches, match_finder

if TYPE_CHECKING:
    from core.run.run_request import RunRequest
    from gui.history.runs_history import HistoryPage
    from gui.run.step_pane import StepPane


_MARK_RETRY_MS = 20
"""How soon a search looks again whether the pane it marks is built."""


class ReviewHost(Protocol):
    """What the review actions need of the Runs view that owns them (it imports this module,
    not the other way round)."""

    def problem(self, message: str) -> None: ...

    def open_record(self, record: RunRecord) -> RunPage: ...

    def start(self, request: RunRequest) -> asyncio.Future[None]: ...

    def window(self) -> QWidget: ...


class ReviewActions(QObject):
    """Owned by the Runs view; GUI thread only."""

    def __init__(self, runs: ReviewHost, history: HistoryPage, parent: QObject) -> None:
        super().__init__(parent)
        self._runs = runs
        self.compare_dialog: CompareDialog | None = None
        self.review_dialog: ReviewDialog | None = None
        self.reading_diffs: asyncio.Task[None] | None = None
        """The step's file diffs being read for the review dialog (git, off the GUI)."""
        self._comparing = LatestJob("baton-compare-runs", self)
        self._comparing.done.connect(lambda _tag, found: self._show_comparison(found))
        self._comparing.failed.connect(
            lambda _tag, why: runs.problem(f"Could not compare the runs: {why}")
        )
        history.compareRequested.connect(self.compare)
        history.search_panel.hitActivated.connect(self.open_hit)

    # -- public API ---------------------------------------------------------------------

    def open_hit(self, hit: SearchHit, patterns: tuple[str, ...]) -> RunPage | None:
        """Open a search result's run at its step (and tool call), the match highlighted."""
        record = RunIndex().get(hit.run_id)
        if record is None:
            self._runs.problem(f"Run {hit.run_id} is no longer in the history.")
            return None
        page = self._runs.open_record(record)

        def mark(pane: StepPane) -> None:
            streams = pane.findChildren(MarkdownStream)
            if not pane.is_filled() or not all(stream.is_laid_out() for stream in streams):
                # Its items are built and long answers laid out a few per turn: mark them whole.
                QTimer.singleShot(_MARK_RETRY_MS, pane, lambda: mark(pane))
                return
            if patterns:  # a long answer's segments out of sight are rendered again
                finder = match_finder(patterns)
                for stream in streams:
                    stream.unpark_matching(finder)
            highlight_matches(pane, patterns)

        def reveal() -> None:
            page.view.focus_step(hit.step, hit.call_id, then=mark)

        if page.loader is None:
            reveal()
        else:
            page.loader.loaded.connect(lambda _folded: QTimer.singleShot(0, page, reveal))
        return page

    def compare(self, first: RunRecord, second: RunRecord) -> None:
        """Read both runs on a worker thread, then show them side by side."""
        paths = (Path(first.path), Path(second.path))
        self._comparing.submit(
            "compare",
            lambda: compare_runs(read_folded(paths[0]).state, read_folded(paths[1]).state),
        )

    def review_step(self, page: RunPage, step: int) -> ReviewDialog | None:
        """Open the review dialog on step ``step`` of the run in ``page``."""
        state = page.view.state()
        if not 0 <= step < len(state.steps):
            return None
        shown = state.steps[step]
        sources = [ReviewText(output_path(step), shown.output)]
        try:  # any agent may get the comments; the run's own are always offered
            others = discover_agents(Path(state.cwd)).names() if state.cwd else []
        except OSError:
            others = []
        if self.review_dialog is not None:
            self.review_dialog.close()
        dialog = ReviewDialog(
            step, shown.agent, sources, [s.agent for s in state.steps] + others, self._runs.window()
        )
        dialog.sendRequested.connect(
            lambda comments, agent: self.follow_up(page, step, comments, agent)
        )
        self.review_dialog = dialog
        dialog.show()
        if shown.changes is not None and shown.changes.files:
            self.reading_diffs = start(_add_diffs(dialog, shown.changes))
        return dialog

    def follow_up(
        self, page: RunPage, step: int, comments: list[ReviewComment], agent: str
    ) -> asyncio.Future[None] | None:
        """Start the follow-up run for review comments on ``step`` (the task is returned)."""
        path = page.path or run_file(page.run_id)
        try:
            request = follow_up_request(load_run(path), step, comments, agent=agent)
        except OSError as error:
            self._runs.problem(f"Could not read the run file {path}: {error.strerror or error}")
            return None
        except RunError as error:
            self._runs.problem(str(error)[:1].upper() + str(error)[1:])
            return None
        return self._runs.start(request)

    # -- private ------------------------------------------------------------------------

    def _show_comparison(self, comparison: object) -> None:
        if not isinstance(comparison, RunComparison):
            return
        if self.compare_dialog is not None:
            self.compare_dialog.close()
            self.compare_dialog.deleteLater()
        self.compare_dialog = CompareDialog(comparison, self._runs.window())
        self.compare_dialog.show()


async def _add_diffs(dialog: ReviewDialog, changes: StepChanges) -> None:
    """Offer each changed file's diff in ``dialog`` once git has produced the patch; a
    checkpoint that cannot be read leaves the dialog with the answer only."""
    try:
        text = await patch(Workspace.of(changes), changes.before, changes.after)
    except (GitError, OSError):
        return
    with suppress(RuntimeError):  # the dialog was closed meanwhile
        dialog.add_sources(diff_texts(parse_patch(text)))
