"""History's search box: every run's prompts, answers, tool arguments and results.

Typing searches after a short pause; the query runs on a worker thread
(:class:`gui.widgets.background.LatestJob`: the index catches up with newly ended runs first,
which can take a while after an upgrade), so the window never waits for SQLite. Each result is
one passage — run, step, what it is (task, output, tool call, tool result) and a snippet with
the match in bold (:mod:`gui.history.search_results`: escaped, never the run's own HTML);
clicking it (or Enter) asks the owner to open the run at that step with the match highlighted
(:attr:`RunSearchPanel.hitActivated`).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from core.history.run_search import DEFAULT_LIMIT, RunSearch, SearchHit
from core.record.run_files import RunIndex
from core.record.run_names import run_name
from gui.history.search_results import (
    ROLE_MARKED,
    MarkedResultDelegate,
    marked_html,
    plain_result,
)
from gui.theme import icons
from gui.widgets import PlainLabel
from gui.widgets.background import LatestJob

SEARCH_DELAY_MS = 200
"""The search starts this long after the last key press."""
ROLE_HIT = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True)
class Found:
    """What the worker hands back: the hits, their runs' names, the patterns to highlight."""

    query: str
    hits: list[SearchHit]
    titles: dict[str, str]
    patterns: tuple[str, ...]


def search_runs(query: str) -> Found:
    """The search a worker thread runs (no Qt inside)."""
    result = RunSearch().search(query)
    index = RunIndex()
    titles: dict[str, str] = {}
    for run_id in {hit.run_id for hit in result.hits}:
        record = index.get(run_id)
        titles[run_id] = (
            run_name(record.mode, record.preset, record.args, record.agents) or run_id
            if record is not None
            else run_id
        )
    return Found(query, result.hits, titles, result.patterns)


class RunSearchPanel(QWidget):
    """The search field and, while it holds a query, the results. GUI thread only."""

    # -- signals ------------------------------------------------------------------------
    hitActivated = Signal(object, object)
    """``(SearchHit, patterns)``: the person chose a result."""
    resultsShown = Signal(bool)
    """The results list appeared (a query was typed) or went away (the field was cleared)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RunSearchPanel")
        self.field = QLineEdit()
        self.field.setObjectName("RunSearchField")
        self.field.setPlaceholderText(
            'Search inside runs: tasks, answers, tool calls and results (登录, "exact text")'
        )
        self.field.setClearButtonEnabled(True)
        self.field.addAction(icons.icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.status = PlainLabel("")
        self.status.setObjectName("RunSearchStatus")
        self.results = QListWidget()
        self.results.setObjectName("RunSearchResults")
        self.results.setAlternatingRowColors(True)
        self.results.setWordWrap(True)
        self.results.setUniformItemSizes(False)
        self.results.setItemDelegate(MarkedResultDelegate(self.results))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 4)
        layout.addWidget(self.field)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)
        self.status.hide()
        self.results.hide()
        self._patterns: tuple[str, ...] = ()
        self._job = LatestJob("baton-run-search", self)
        self._job.done.connect(self._show)
        self._job.failed.connect(self._failed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DELAY_MS)
        self._timer.timeout.connect(self.search_now)
        self.field.textChanged.connect(self._typed)
        self.results.itemClicked.connect(self._activate)
        self.results.itemActivated.connect(self._activate)
        self.field.returnPressed.connect(self._first)

    # -- public API ---------------------------------------------------------------------

    def search_now(self) -> None:
        """Search for the field's text now rather than after the typing pause."""
        self._timer.stop()
        query = self.field.text().strip()
        if query:
            self.status.setText("Searching…")
            self._job.submit(query, lambda: search_runs(query))

    def hits(self) -> list[SearchHit]:
        """The results shown, in order."""
        return [self.results.item(i).data(ROLE_HIT) for i in range(self.results.count())]

    def is_searching(self) -> bool:
        return self._job.busy() or self._timer.isActive()

    def refresh(self) -> None:
        """Search again when a query is shown (a run ended or was deleted: results change)."""
        if self.field.text().strip():
            self.search_now()

    def catch_up(self) -> None:
        """Index runs that ended since the last search, now, on the worker (a run just
        ended in the window: the next search need not wait for it)."""
        if not self._job.busy():
            self._job.submit("", lambda: RunSearch().update())

    def wait(self) -> None:
        self._job.wait()

    # -- private ------------------------------------------------------------------------

    def _typed(self, text: str) -> None:
        shown = bool(text.strip())
        if shown == self.results.isHidden():  # isHidden: right even while the page is not shown
            self.results.setVisible(shown)
            self.status.setVisible(shown)
            self.resultsShown.emit(shown)
        if shown:
            self._timer.start()
        else:
            self._timer.stop()
            self.results.clear()

    def _show(self, query: object, found: object) -> None:
        if not isinstance(found, Found) or query != self.field.text().strip():
            return  # a catch-up, or an older query than the one typed now
        self._patterns = found.patterns
        self.results.clear()
        for hit in found.hits:
            title = found.titles.get(hit.run_id, hit.run_id)
            heading = f"{title} — {hit.where()}"
            item = QListWidgetItem(plain_result(heading, hit))
            item.setData(ROLE_HIT, hit)
            item.setData(ROLE_MARKED, marked_html(heading, hit))
            item.setToolTip(f"Run {hit.run_id}: open it at {hit.where()}")
            self.results.addItem(item)
        count = len(found.hits)
        self.status.setText(
            f"No run mentions “{found.query}”."
            if not count
            else f"{count} match{'es' if count != 1 else ''}, newest runs first"
            + (" (the first ones)" if count >= DEFAULT_LIMIT else "")
            + " — click one to open the run there"
        )

    def _failed(self, query: object, reason: str) -> None:
        if query:
            self.status.setText(f"Search failed: {reason}")

    def _first(self) -> None:
        if self.results.count():
            self._activate(self.results.item(0))
        else:
            self.search_now()

    def _activate(self, item: QListWidgetItem) -> None:
        hit = item.data(ROLE_HIT)
        if isinstance(hit, SearchHit):
            self.hitActivated.emit(hit, self._patterns)
