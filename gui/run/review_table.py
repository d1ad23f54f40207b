"""A review result (``output: review``) as a table in its step's pane: severity badges, where,
what — worst first — with a filter by severity and the counts above it."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.definitions.structured import SEVERITIES, issue_counts
from gui.theme import SEMIBOLD, SEVERITY_HUES, foreground, set_font, tint

BADGE_HUES = {
    "critical": SEVERITY_HUES["error"],
    "major": SEVERITY_HUES["warning"],
    "minor": SEVERITY_HUES["info"],
    "info": SEVERITY_HUES["ok"],
}
ALL = "All severities"


def counts_text(structured: dict[str, Any]) -> str:
    """``2 major · 1 minor`` (or ``no issues``), for the step's header."""
    counts = issue_counts(structured)
    return " · ".join(f"{n} {severity}" for severity, n in counts.items() if n) or "no issues"


class ReviewTable(QWidget):
    """The verdict, a severity filter and the issues. GUI thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ReviewTable")
        self._issues: list[dict[str, Any]] = []
        self.verdict = QLabel()
        set_font(self.verdict, weight=SEMIBOLD)
        self.filter = QComboBox()
        self.filter.setObjectName("SeverityFilter")
        self.filter.addItem(ALL)
        self.filter.addItems(list(SEVERITIES))
        self.filter.currentTextChanged.connect(lambda _text: self._fill())
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Severity", "Where", "Issue"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        self.table.setShowGrid(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        top = QHBoxLayout()
        top.addWidget(self.verdict, 1)
        top.addWidget(self.filter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.addLayout(top)
        layout.addWidget(self.table)

    def set_result(self, structured: dict[str, Any]) -> None:
        verdict = "Passed" if structured.get("passed") else "Changes requested"
        self.verdict.setText(f"{verdict} — {counts_text(structured)}")
        order: dict[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}
        issues = [i for i in structured.get("issues") or [] if isinstance(i, dict)]
        self._issues = sorted(issues, key=lambda i: order.get(str(i.get("severity")), 99))
        self._fill()

    def shown_rows(self) -> list[list[str]]:
        """The table's text as shown (for tests)."""
        return [
            [self._cell(row, column) for column in range(3)] for row in range(self.table.rowCount())
        ]

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and getattr(self, "_issues", None):
            self._fill()  # the severity badges in the new theme's tints

    def _fill(self) -> None:
        wanted = self.filter.currentText()
        shown = [i for i in self._issues if wanted == ALL or i.get("severity") == wanted]
        self.table.setRowCount(len(shown))
        palette = self.palette()
        for row, issue in enumerate(shown):
            severity = str(issue.get("severity", ""))
            badge = QTableWidgetItem(severity)
            hue = BADGE_HUES.get(severity)
            if hue is not None:
                badge.setBackground(tint(palette, hue, 0.25))
                badge.setForeground(foreground(palette, hue, 0.75))
            badge.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            where = str(issue.get("file") or "")
            if where and issue.get("line"):
                where += f":{issue['line']}"
            self.table.setItem(row, 0, badge)
            self.table.setItem(row, 1, QTableWidgetItem(where or "—"))
            self.table.setItem(row, 2, QTableWidgetItem(str(issue.get("description", ""))))
        self.table.resizeRowsToContents()
        height = self.table.horizontalHeader().height() + 4
        height += sum(self.table.rowHeight(row) for row in range(self.table.rowCount()))
        self.table.setFixedHeight(min(max(height, 40), 360))

    def badge_color(self, row: int) -> QColor:
        item = self.table.item(row, 0)
        return item.background().color() if item is not None else QColor()
