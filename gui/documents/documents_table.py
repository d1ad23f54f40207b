"""One page of documents as a table model (its richer cells are painted by
:mod:`gui.documents.document_delegate`).

Columns: title, type, tags (painted as pills), summary — or, while searching, the snippet
around the matches with each match marked — updated (relative: "3 min ago"; the tooltip has the
exact time) and the run that wrote the document (agent · short run id).

The model holds exactly one page (:class:`core.documents.store.SearchHit` rows, at most the store's
page size), so it never grows with the store; paging and ordering are the store's job, which is
why the view has no column sorting.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
)

from core.documents.store import DocumentProvenance, SearchHit
from gui.theme import foreground, secondary_text
from gui.widgets.plain_text import markdown_line, plain_markdown
from gui.widgets.table_model import FlatTableModel, Index

COLUMNS = ("Title", "Type", "Tags", "Summary", "Updated", "Run")
COL_TITLE, COL_TYPE, COL_TAGS, COL_SUMMARY, COL_UPDATED, COL_RUN = range(len(COLUMNS))
TYPE_LABELS = {"memory": "Memory", "document": "Document"}
TYPE_HUES = {"memory": 28, "document": 205}
"""Memory amber, document blue: the colours of their badges in the detail pane."""

ROLE_HIT = Qt.ItemDataRole.UserRole + 1
"""The row's :class:`SearchHit`."""
ROLE_SEGMENTS = Qt.ItemDataRole.UserRole + 2
"""Summary column: ``[(text, is_match), ...]`` for the delegate."""
ROLE_TAGS = Qt.ItemDataRole.UserRole + 3
"""Tags column: the list of tags for the delegate."""

MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"
"""Snippet markers asked of the store: private-use characters, which no real text contains,
so a ``[`` in a document is never mistaken for a match."""

_LEFT_CENTRE = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)


# -- text helpers ------------------------------------------------------------------------


def relative_time(moment: datetime, now: datetime | None = None) -> str:
    """``just now``, ``5 min ago``, ``3 h ago``, ``yesterday``, ``4 days ago``, then a date."""
    now = now or datetime.now(UTC)
    seconds = (now - moment).total_seconds()
    if seconds < 45:
        return "just now"
    if seconds < 3600:
        return f"{max(1, round(seconds / 60))} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    local, today = moment.astimezone(), now.astimezone()
    days = (today.date() - local.date()).days
    if days <= 1:
        return "yesterday"
    if days < 7:
        return f"{days} days ago"
    if local.year == today.year:
        return f"{local.day} {local:%b}"
    return f"{local.day} {local:%b %Y}"


def absolute_time(moment: datetime) -> str:
    """Local time to the second, for tooltips and the detail pane."""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


_RUN_ID = re.compile(r"\d{8}-\d{6}-([0-9a-f]{4,})")


def short_run_id(run_id: str) -> str:
    """Baton's run ids (``20250114-093012-a1b2c3``) all start with the day, so their random
    tail is what tells them apart; other ids are cut to 10 characters."""
    match = _RUN_ID.fullmatch(run_id)
    if match:
        return match.group(1)
    return run_id if len(run_id) <= 10 else run_id[:9] + "…"


def run_text(provenance: DocumentProvenance) -> str:
    """``scout · 3f2a9c1b…``; ``by hand`` for a document a person wrote."""
    if provenance.by_person:
        return "by hand"
    parts = [provenance.agent] if provenance.agent else []
    if provenance.run_id:
        parts.append(short_run_id(provenance.run_id))
    return " · ".join(parts) or "agent"


def run_tooltip(provenance: DocumentProvenance) -> str:
    if provenance.by_person:
        return "Written by a person in Baton or with 'baton docs'"
    lines = [f"Agent: {provenance.agent or 'unknown'}"]
    if provenance.run_id:
        lines.append(f"Run: {provenance.run_id}")
    if provenance.step is not None:
        lines.append(f"Step: {provenance.step + 1}")
    if provenance.call_id:
        lines.append(f"Tool call: {provenance.call_id}")
    return "\n".join(lines)


def snippet_segments(snippet: str) -> list[tuple[str, bool]]:
    """Split a snippet with :data:`MARK_OPEN`/:data:`MARK_CLOSE` markers into runs (the
    unmarked ones without inline Markdown marks)."""
    segments: list[tuple[str, bool]] = []
    rest = snippet
    while rest:
        start = rest.find(MARK_OPEN)
        if start < 0:
            segments.append((rest, False))
            break
        end = rest.find(MARK_CLOSE, start)
        if end < 0:
            end = len(rest)
        if start:
            segments.append((rest[:start], False))
        segments.append((rest[start + 1 : end], True))
        rest = rest[end + 1 :]
    cleaned = [(text if match else plain_markdown(text), match) for text, match in segments]
    return [(text, match) for text, match in cleaned if text]


def plain_snippet(snippet: str) -> str:
    return "".join(text for text, _match in snippet_segments(snippet))


# -- the model -----------------------------------------------------------------------------


class DocumentsTableModel(FlatTableModel):
    """One page of documents. GUI thread only."""

    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._hits: list[SearchHit] = []
        self._previews: dict[int, str] = {}
        self._searching = False
        self._now = datetime.now(UTC)

    # -- public API ----------------------------------------------------------------------

    def set_page(
        self,
        hits: Sequence[SearchHit],
        *,
        searching: bool,
        previews: Mapping[int, str] | None = None,
    ) -> None:
        """Show ``hits``; ``searching`` switches the summary column to match snippets.

        ``previews`` (id → text) stand in for the summary of short documents: the store keeps
        a summary only for documents longer than one, and listings carry no content."""
        self.beginResetModel()
        self._hits = list(hits)
        self._previews = dict(previews or {})
        self._now = datetime.now(UTC)
        self.endResetModel()
        if searching != self._searching:
            self._searching = searching
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, COL_SUMMARY, COL_SUMMARY)

    def hits(self) -> list[SearchHit]:
        return list(self._hits)

    def hit(self, row: int) -> SearchHit:
        return self._hits[row]

    def row_of(self, doc_id: int) -> int | None:
        for row, hit in enumerate(self._hits):
            if hit.id == doc_id:
                return row
        return None

    def searching(self) -> bool:
        return self._searching

    def refresh_times(self) -> None:
        """Let "3 min ago" become "4 min ago" without asking the store again."""
        self._now = datetime.now(UTC)
        if self._hits:
            top = self.index(0, COL_UPDATED)
            bottom = self.index(len(self._hits) - 1, COL_UPDATED)
            self.dataChanged.emit(top, bottom, [Qt.ItemDataRole.DisplayRole])

    # -- Qt model API --------------------------------------------------------------------

    def row_count(self) -> int:
        return len(self._hits)

    def column_title(self, section: int) -> str:
        return "Match" if section == COL_SUMMARY and self._searching else COLUMNS[section]

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._hits):
            return None
        hit = self._hits[index.row()]
        column = index.column()
        if role == ROLE_HIT:
            return hit
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(hit, column)
        if role == ROLE_SEGMENTS and column == COL_SUMMARY:
            if self._searching and hit.snippet:
                return snippet_segments(hit.snippet)
            return [(self._summary(hit), False)]
        if role == ROLE_TAGS and column == COL_TAGS:
            return list(hit.tags)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(hit, column)
        if role == Qt.ItemDataRole.ForegroundRole:
            palette = QApplication.palette()
            if column == COL_TYPE:
                return foreground(palette, TYPE_HUES.get(hit.type, 210), 0.55)
            if column in (COL_UPDATED, COL_RUN):
                return secondary_text(palette)
        if role == Qt.ItemDataRole.FontRole and column == COL_TITLE:
            font = QFont(QApplication.font())
            font.setWeight(QFont.Weight.DemiBold)
            return font
        return None

    # -- private -------------------------------------------------------------------------

    def _text(self, hit: SearchHit, column: int) -> str:
        if column == COL_TITLE:
            return hit.title
        if column == COL_TYPE:
            return TYPE_LABELS.get(hit.type, hit.type)
        if column == COL_TAGS:
            return ", ".join(hit.tags)
        if column == COL_SUMMARY:
            if self._searching and hit.snippet:
                return plain_snippet(hit.snippet)
            return self._summary(hit)
        if column == COL_UPDATED:
            return relative_time(hit.updated, self._now)
        return run_text(hit.provenance)

    def _summary(self, hit: SearchHit) -> str:
        return markdown_line(hit.summary or self._previews.get(hit.id, ""))

    def _tooltip(self, hit: SearchHit, column: int) -> str:
        if column == COL_UPDATED:
            return (
                f"Updated {absolute_time(hit.updated)}\nCreated {absolute_time(hit.created)}"
                f"\nVersion {hit.version}"
            )
        if column == COL_RUN:
            return run_tooltip(hit.provenance)
        if column == COL_TITLE:
            return f"#{hit.id} {hit.title} ({hit.chars:,} characters)"
        if column == COL_SUMMARY:
            text = self._text(hit, column)
            return text if len(text) > 60 else ""
        if column == COL_TAGS:
            return ", ".join(hit.tags)
        return ""
