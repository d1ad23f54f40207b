"""The Runs view: the run history and every run open in the window, as tabs.

The first tab, **History**, is the table of saved runs (:mod:`gui.history.runs_history`); it cannot
be
closed. Every other tab is one run in a :class:`gui.run.run_view.RunView` — a live run launched
from the window (its tab shows a status dot that changes as the run goes), or a saved run or
transcript opened for reading (replayed through the same view model, all at once).

From the history a person can open, re-run (a new run with the same mode, agents, planned
tasks and folder — through the launcher, so trust and agent checks apply as for any launch),
export as Markdown, or delete a run; "Open file…" shows any run file or pi / Claude Code
transcript without adding it to the history, and "Import…" adds one. A transcript opened for
reading offers the import in a banner above it.

Closing the tab of a live run asks whether to cancel it; the tab stays until the run has ended,
so nothing that was received disappears without being seen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QMessageBox,
    QTabBar,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.config.atomic import atomic_write_text
from core.history.run_export import run_to_markdown
from core.history.run_import import import_run
from core.history.run_reading import FoldedRun, fold_run, read_folded
from core.model.errors import RunError
from core.model.events import Event, RunStarted
from core.record.run_files import RunIndex, RunRecord, load_run, read_events, run_file, runs_dir
from core.run.continuation import continue_request
from core.run.rerun import request_from_run, resume_request
from core.run.run_request import RunRequest
from gui.history.runs_history import HistoryPage
from gui.history.runs_table import status_icon, what_ran
from gui.run.markdown_stream import warm_up
from gui.run.rerun_dialog import ask_rerun_from
from gui.run.review_actions import ReviewActions
from gui.run.run_controller import RunController, RunSession
from gui.run.run_header import display_status, run_title
from gui.run.run_loader import RunLoader
from gui.run.run_page import RunPage
from gui.run.spare_run_view import SpareRunView

TAB_TITLE_CHARS = 30
FILE_FILTER = "Runs and transcripts (*.jsonl *.json *.ndjson);;All files (*)"


class RunsView(QWidget):
    """History plus open runs. GUI thread only."""

    runOpened = Signal(object)
    """A :class:`RunPage` was added and made current (the window switches to this view)."""
    runLoaded = Signal(object)
    """A saved run's :class:`RunPage` has been read and is shown."""

    def __init__(self, controller: RunController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RunsView")
        self.controller = controller
        self._tasks: set[asyncio.Future[None]] = set()
        self.history = HistoryPage()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("RunTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.addTab(self.history, "History")
        bar = self.tabs.tabBar()
        bar.setTabButton(0, QTabBar.ButtonPosition.RightSide, None)
        bar.setTabButton(0, QTabBar.ButtonPosition.LeftSide, None)
        bar.setUsesScrollButtons(True)
        bar.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # Tab goes to the content; Ctrl+PgUp/PgDn
        # Always one click away, however many run tabs push the History tab out of sight.
        self.history_button = QToolButton()
        self.history_button.setObjectName("HistoryButton")
        self.history_button.setText("History")
        self.history_button.setAutoRaise(True)
        self.history_button.setToolTip("Show the runs history")
        self.history_button.clicked.connect(self.show_history)
        self.tabs.setCornerWidget(self.history_button, Qt.Corner.TopLeftCorner)
        self.history_button.hide()  # shown only while the tabs overflow (see resizeEvent)
        self.tabs.tabCloseRequested.connect(self._close_tab)
        # The tab bar scrolls when the current tab changes or a tab moves: look again after.
        self.tabs.currentChanged.connect(
            lambda _index: QTimer.singleShot(0, self, self._update_history_button)
        )
        bar.tabMoved.connect(lambda *_: QTimer.singleShot(0, self, self._update_history_button))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        self.history.openRequested.connect(self.open_record)
        self.history.rerunRequested.connect(self.rerun)
        self.history.resumeRequested.connect(self.resume)
        self.history.exportRequested.connect(self.export_record)
        self.history.deleteRequested.connect(self.delete_record)
        self.history.openFileRequested.connect(self.open_file_dialog)
        self.history.importRequested.connect(self.import_file_dialog)
        self.review = ReviewActions(self, self.history, self)
        """Search results, comparisons and review comments (:mod:`gui.run.review_actions`)."""
        controller.sessionStarted.connect(self.add_session)
        controller.sessionFinished.connect(self._session_finished)
        self.history.refresh()
        # The one-time cost of the first run view (~80 ms of PySide6 building types), paid
        # while the person reads the history rather than when they open a run.
        QTimer.singleShot(0, self, warm_up)
        self.spare_view = SpareRunView(self, idle=lambda: not self._reading())
        """The view the next opened run is shown in, built while the window is idle."""

    # -- public API ----------------------------------------------------------------------

    def pages(self) -> list[RunPage]:
        found = (self.tabs.widget(i) for i in range(self.tabs.count()))
        return [page for page in found if isinstance(page, RunPage)]

    def _reading(self) -> bool:
        """A run is being read or its panes built: the window is not idle."""
        return any(page.is_reading() for page in self.pages())

    def current_page(self) -> RunPage | None:
        page = self.tabs.currentWidget()
        return page if isinstance(page, RunPage) else None

    def page_for(self, run_id: str) -> RunPage | None:
        return next((p for p in self.pages() if p.run_id == run_id), None)

    def show_history(self) -> None:
        self.tabs.setCurrentWidget(self.history)

    def add_session(self, session: RunSession) -> RunPage:
        """A live run: its own tab, made current."""
        existing = self.page_for(session.run_id)
        if existing is not None:
            return existing
        page = RunPage(session.view, session=session)
        # The run's index row is written as it starts: show it in the history then.
        session.view.model.runStarted.connect(self.history.refresh)
        self._add_page(page, session.title())
        self.history.set_active_runs({s.run_id for s in self.controller.active()})
        self.history.refresh()
        return page

    def open_events(self, events: list[Event], path: Path | None = None) -> RunPage:
        """Show a saved run or transcript whose events are already read (``baton open``);
        folded off the GUI thread like any other."""
        started = events[0] if events and isinstance(events[0], RunStarted) else None
        existing = self.page_for(started.run_id) if started is not None else None
        if existing is not None:
            self.tabs.setCurrentWidget(existing)
            return existing
        return self._open_reading(path, lambda: fold_run(events))

    def open_path(self, path: Path) -> RunPage:
        """Open a run file or transcript in a tab at once; it is read and folded on a worker
        thread and shown when ready. A problem closes the tab and is shown on the history."""
        return self._open_reading(path, lambda: read_folded(path))

    def open_record(self, record: RunRecord) -> RunPage:
        existing = self.page_for(record.id)
        if existing is not None:
            self.tabs.setCurrentWidget(existing)
            return existing
        path = Path(record.path)
        return self._open_reading(
            path, lambda: read_folded(path), run_id=record.id, title=what_ran(record)
        )

    def rerun(self, record: RunRecord) -> asyncio.Future[None] | None:
        """Start a new run with this run's inputs (the task is returned for tests)."""
        return self._rerun_file(Path(record.path))

    def resume(self, record: RunRecord) -> asyncio.Future[None] | None:
        """Resume a failed, cancelled or interrupted run from its first unfinished step, the
        same way as its banner does (the task is returned for tests)."""
        return self._resume_file(Path(record.path))

    def export_record(self, record: RunRecord) -> Path | None:
        target, _filter = QFileDialog.getSaveFileName(
            self, "Export run as Markdown", f"{record.id}.md", "Markdown (*.md)"
        )
        if not target:
            return None
        try:
            atomic_write_text(Path(target), run_to_markdown(load_run(Path(record.path))))
        except OSError as error:
            self._problem(f"Could not export to {target}: {error.strerror or error}")
            return None
        self.history.banner.show_message("info", f"Exported to {target}.")
        return Path(target)

    def delete_record(self, record: RunRecord) -> bool:
        if record.id in {s.run_id for s in self.controller.active()}:
            return False
        box = QMessageBox(self)
        box.setObjectName("DeleteRunPrompt")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Delete run")
        box.setText(f"Delete the run “{run_label(record)}”?")
        box.setInformativeText("Its run file is deleted too. This cannot be undone.")
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        if box.clickedButton() is not delete:
            return False
        try:
            RunIndex().delete(record.id)
        except OSError as error:
            self._problem(f"Could not delete the run: {error.strerror or error}")
            return False
        page = self.page_for(record.id)
        if page is not None and not page.is_live():
            self._remove_page(page)
        self.history.banner.hide()
        self.history.refresh()
        return True

    def open_file_dialog(self) -> RunPage | None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Open run or transcript", str(runs_dir()), FILE_FILTER
        )
        return self.open_path(Path(path)) if path else None

    def import_file_dialog(self) -> RunRecord | None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Import a run or transcript into the history", "", FILE_FILTER
        )
        return self.import_path(Path(path)) if path else None

    def import_path(self, path: Path) -> RunRecord | None:
        try:
            record = import_run(path)
        except (ValueError, OSError) as error:
            self._problem(f"Could not import {path.name}: {error}")
            return None
        self.history.refresh()
        self.history.select_run(record.id)
        self.history.banner.show_message("info", f"Imported {path.name} into the history.")
        return record

    # -- private -------------------------------------------------------------------------

    def _rerun_file(self, path: Path) -> asyncio.Future[None] | None:
        """Re-run the run saved at ``path``: its first line, ``run_started``, holds the inputs,
        so a long run file is not read to the end."""
        try:
            first = next(read_events(path), None)
        except OSError as error:
            self._problem(f"Could not read the run file {path}: {error.strerror or error}")
            return None
        if not isinstance(first, RunStarted):
            self._problem("This run file does not say how the run was started.")
            return None
        return self._start(request_from_run(first))

    def _resume_file(self, path: Path) -> asyncio.Future[None] | None:
        """Resume the run saved at ``path`` from its first unfinished step."""
        try:
            request = resume_request(load_run(path))
        except OSError as error:
            self._problem(f"Could not read the run file {path}: {error.strerror or error}")
            return None
        except RunError as error:
            self._problem(str(error)[:1].upper() + str(error)[1:])
            return None
        return self._start(request)

    def _continue(self, page: RunPage, step: int, text: str) -> asyncio.Future[None] | None:
        """Go on with step ``step``'s conversation, saying ``text``, as a new linked run."""
        path = page.path or run_file(page.run_id)
        try:
            request = continue_request(load_run(path), step, text)
        except OSError as error:
            self._problem(f"Could not read the run file {path}: {error.strerror or error}")
            return None
        except RunError as error:
            page.view.show_message_problem(step, f"Not continued: {error}.")
            return None
        return self._start(request)

    def _start(self, request: RunRequest) -> asyncio.Future[None]:
        task = asyncio.ensure_future(self._launch(request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _launch(self, request: RunRequest) -> None:
        try:
            await self.controller.launch(request, "ask", self.window())
        except RunError as error:
            message = str(error)
            self._problem("Could not start the run: " + message[:1].upper() + message[1:])

    def _open_reading(
        self, path: Path | None, read: Callable[[], FoldedRun], run_id: str = "", title: str = ""
    ) -> RunPage:
        """A tab at once (so the window answers the click), its run read on a worker thread."""
        name = path.name if path is not None else "the run"
        view = self.spare_view.take()
        view.show_reading(name)
        page = RunPage(view, path=path)
        page.expected_run_id = run_id
        loader = RunLoader(self)  # not the page's: a tab closed meanwhile drops the result
        page.loader = loader
        loader.loaded.connect(lambda folded: self._show_folded(page, loader, folded))
        loader.failed.connect(lambda reason: self._reading_failed(page, loader, name, reason))
        self._add_page(page, title or name)
        loader.start(read)
        return page

    def _show_folded(self, page: RunPage, loader: RunLoader, folded: FoldedRun) -> None:
        loader.deleteLater()
        page.loader = None
        if self.tabs.indexOf(page) < 0:
            return  # closed while it was read
        started = folded.started
        existing = self.page_for(started.run_id) if started is not None else None
        if existing is not None and existing is not page:
            self._remove_page(page)
            self.tabs.setCurrentWidget(existing)
            return
        page.view.load_state(folded.state)
        if started is not None and page.path is not None and RunIndex().get(started.run_id) is None:
            page.banner.show_message(
                "info",
                "This run is not in your history.",
                [("Import into history", lambda: self._import_from_page(page))],
            )
        self._update_tab(page)
        self.runLoaded.emit(page)

    def _reading_failed(self, page: RunPage, loader: RunLoader, name: str, reason: str) -> None:
        loader.deleteLater()
        page.loader = None
        if self.tabs.indexOf(page) >= 0:
            self._remove_page(page)
        self._problem(f"Could not open {name}: {reason}")

    def _add_page(self, page: RunPage, title: str) -> None:
        index = self.tabs.addTab(page, short(title))
        self.tabs.setTabToolTip(index, title)
        close = QToolButton()
        close.setObjectName("TabCloseButton")
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip("Close this run")
        close.setFixedSize(18, 18)
        close.clicked.connect(lambda: self._close_tab(self.tabs.indexOf(page)))
        self.tabs.tabBar().setTabButton(index, QTabBar.ButtonPosition.RightSide, close)
        page.view.model.runChanged.connect(lambda: self._update_tab(page))
        page.view.rerunRequested.connect(
            lambda: self._rerun_file(page.path or run_file(page.run_id))
        )
        page.view.resumeRequested.connect(
            lambda: self._resume_file(page.path or run_file(page.run_id))
        )
        page.view.rerunFromRequested.connect(
            lambda step: ask_rerun_from(
                self, page.path or run_file(page.run_id), step, self._start, self._problem
            )
        )
        page.view.continueRequested.connect(lambda step, text: self._continue(page, step, text))
        page.view.commentRequested.connect(lambda step: self.review.review_step(page, step))
        page.view.diffCommentsSent.connect(
            lambda step, comments: self.review.follow_up(page, step, comments, "")
        )
        self._update_tab(page)
        self.tabs.setCurrentIndex(index)
        self.runOpened.emit(page)
        QTimer.singleShot(0, self, self._update_history_button)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._update_history_button()

    def _update_history_button(self) -> None:
        """The History button stands in for the History tab only while that tab has scrolled
        out of sight: never both at once, and never a button over tabs that are in view."""
        bar = self.tabs.tabBar()
        history = self.tabs.indexOf(self.history)
        shown = history >= 0 and bar.rect().contains(bar.tabRect(history).center())
        if self.history_button.isVisible() == shown:
            self.history_button.setVisible(not shown)

    def _update_tab(self, page: RunPage) -> None:
        index = self.tabs.indexOf(page)
        if index < 0:
            return
        state = page.view.state()
        status = display_status(state, page.view.model.is_live())
        key = {"incomplete": "aborted"}.get(status, status)
        self.tabs.setTabIcon(index, status_icon(key))
        if state.steps:
            title = run_title(state)
            self.tabs.setTabText(index, tab_text(title, state.run_id))
            self.tabs.setTabToolTip(index, f"{title}\n{state.run_id}")

    def _close_tab(self, index: int) -> None:
        page = self.tabs.widget(index)
        if not isinstance(page, RunPage):
            return
        if page.is_live() and page.session is not None:
            box = QMessageBox(self)
            box.setObjectName("CancelRunPrompt")
            box.setIcon(QMessageBox.Icon.Question)
            box.setWindowTitle("Run still running")
            box.setText("This run is still running. Cancel it?")
            box.setInformativeText("The tab closes once the run has stopped.")
            stop = box.addButton("Cancel run", QMessageBox.ButtonRole.DestructiveRole)
            keep = box.addButton("Keep running", QMessageBox.ButtonRole.RejectRole)
            box.setDefaultButton(keep)
            box.exec()
            if box.clickedButton() is stop:
                page.session.runner.cancel()
                page.setProperty("closeWhenDone", True)
            return
        self._remove_page(page)

    def _remove_page(self, page: RunPage) -> None:
        self.tabs.removeTab(self.tabs.indexOf(page))
        if page.session is not None:
            self.controller.forget(page.session)
        page.deleteLater()
        self._update_history_button()

    def _session_finished(self, session: RunSession) -> None:
        self.history.set_active_runs({s.run_id for s in self.controller.active()})
        self.history.refresh()
        self.history.search_panel.catch_up()  # index the run now, off the GUI thread
        page = self.page_for(session.run_id)
        if page is not None and page.property("closeWhenDone"):
            self._remove_page(page)

    def _import_from_page(self, page: RunPage) -> None:
        if page.path is None:
            return
        record = self.import_path(page.path)
        if record is not None:
            page.banner.show_message("info", "Imported into the history.")

    def start(self, request: RunRequest) -> asyncio.Future[None]:
        """Launch ``request`` through the window's launcher (trust and agent checks apply)."""
        return self._start(request)

    def problem(self, message: str) -> None:
        """Say what went wrong in the history's banner."""
        self._problem(message)

    def _problem(self, message: str) -> None:
        self.show_history()
        self.history.banner.show_message("error", message)


def tab_text(title: str, run_id: str) -> str:
    """A tab's text: the run's name, shortened, and the end of its id — two runs of the same
    preset differ by more than the colour of their dot."""
    tail = run_id.rsplit("-", 1)[-1][:6] if run_id else ""
    return f"{short(title)} · {tail}" if tail else short(title)


def short(title: str) -> str:
    return title if len(title) <= TAB_TITLE_CHARS else title[: TAB_TITLE_CHARS - 1] + "…"


def run_label(record: RunRecord) -> str:
    return short(what_ran(record))
