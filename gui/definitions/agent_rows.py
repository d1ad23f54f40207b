"""What one row of the agents list shows, and how it is painted.

:func:`entries_by_source` turns a catalog into rows (effective agents, then the definitions
they shadow, per source); :class:`AgentDelegate` paints group headers and two-line agent rows
with colours taken from the view's palette.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyledItemDelegate

from gui.theme import OVERRIDE_ACCENT, icons, is_dark, mix, secondary_text
from gui.widgets.row_state import row_state

if TYPE_CHECKING:  # neither the agent model (pydantic) nor QStyle is on the start-up path
    from PySide6.QtWidgets import QStyleOptionViewItem

    from core.definitions.agents import AgentCatalog, AgentDefinition, Diagnostic

ROLE_KIND = Qt.ItemDataRole.UserRole + 1
ROLE_PATH = Qt.ItemDataRole.UserRole + 2
ROLE_ENTRY = Qt.ItemDataRole.UserRole + 3

SOURCE_LABELS = {"project": "Project", "user": "User", "builtin": "Built-in"}
GROUP_ORDER = ("project", "user", "builtin")


@dataclass(frozen=True)
class AgentEntry:
    """What one row shows."""

    name: str
    description: str
    source: str
    path: str
    badge: str = ""
    shadowed: bool = False
    mark: str = ""
    """"warning" (loads despite a problem) or "error" (listed, but cannot run): an icon."""


def severity_mark(problems: Iterable[Diagnostic]) -> str:
    """The icon a row shows for these problems: the worst of error and warning, or none."""
    severities = {p.severity for p in problems}
    return next((s for s in ("error", "warning") if s in severities), "")


def _tooltip(agent: AgentDefinition, badge: str) -> str:
    from html import escape  # with the first agent read, not on the window's start-up path

    tools = ", ".join(agent.declared_tools or agent.tools or ()) or "all default tools"
    lines = [
        f"<b>{escape(agent.name)}</b> — {escape(SOURCE_LABELS[agent.source])}",
        escape(agent.description),
        f"<b>Model:</b> {escape(agent.model or 'inherit (run default)')}",
        f"<b>Tools:</b> {escape(tools)}",
    ]
    if badge:
        lines.append(f"<i>{escape(badge[:1].upper() + badge[1:])}</i>")
    if agent.error is not None:
        lines.append(f"<b>Cannot run:</b> {escape(agent.error.message)}")
    lines.append(f"<span style='color:gray'>{escape(agent.path or '')}</span>")
    return "<br>".join(lines)


def entries_by_source(catalog: AgentCatalog) -> dict[str, list[tuple[AgentEntry, str]]]:
    """Rows per source, each with its tooltip: effective agents first, then shadowed ones."""
    by_path = {a.path: a for a in [*catalog.agents, *catalog.shadowed]}
    effective = {a.key: a for a in catalog.agents}
    groups: dict[str, list[tuple[AgentEntry, str]]] = {source: [] for source in GROUP_ORDER}
    for agent in sorted(catalog.agents, key=lambda a: a.key):
        badge = ""
        if agent.overrides:
            below = by_path.get(agent.overrides)
            badge = f"overrides {SOURCE_LABELS[below.source].lower()}" if below else "overrides"
        entry = AgentEntry(
            agent.name,
            agent.description,
            agent.source,
            agent.path or "",
            badge,
            mark=severity_mark(agent.problems),
        )
        groups[agent.source].append((entry, _tooltip(agent, badge)))
    for agent in sorted(catalog.shadowed, key=lambda a: a.key):
        winner = effective.get(agent.key)
        badge = f"shadowed by {SOURCE_LABELS[winner.source].lower()}" if winner else "shadowed"
        entry = AgentEntry(
            agent.name, agent.description, agent.source, agent.path or "", badge, shadowed=True
        )
        groups[agent.source].append((entry, _tooltip(agent, badge)))
    return groups


class AgentDelegate(QStyledItemDelegate):
    """Paints group headers and two-line agent rows; colours come from the view's palette."""

    PAD_X = 10
    AVATAR = 30

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        metrics = QFontMetrics(option.font)
        if index.data(ROLE_KIND) == "group":
            return QSize(100, metrics.height() + 18)
        return QSize(100, max(2 * metrics.height() + 16, self.AVATAR + 14))

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        try:
            if index.data(ROLE_KIND) == "group":
                self._paint_group(painter, option, index)
            else:
                self._paint_agent(painter, option, index)
        finally:
            painter.restore()

    def _paint_group(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        rect: QRect = option.rect
        palette: QPalette = option.palette
        title, count = index.data(ROLE_ENTRY)
        font = QFont(option.font)
        font.setBold(True)
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        font.setCapitalization(QFont.Capitalization.AllUppercase)
        font.setLetterSpacing(QFont.SpacingType.PercentageSpacing, 106)
        painter.setFont(font)
        painter.setPen(secondary_text(palette))
        text_rect = rect.adjusted(self.PAD_X + 4, 8, -self.PAD_X, 0)
        painter.drawText(
            text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, title
        )
        width = QFontMetrics(font).horizontalAdvance(title)
        pill = QRect(text_rect.left() + width + 8, text_rect.center().y() - 8, 0, 16)
        label = str(count)
        pill.setWidth(max(20, QFontMetrics(font).horizontalAdvance(label) + 12))
        base = palette.color(QPalette.ColorRole.Base)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(mix(base, palette.color(QPalette.ColorRole.Text), 0.10))
        painter.drawRoundedRect(pill, 8, 8)
        painter.setPen(secondary_text(palette))
        painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, label)

    def _paint_agent(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        entry: AgentEntry = index.data(ROLE_ENTRY)
        rect: QRect = option.rect
        palette: QPalette = option.palette
        state = row_state(option)
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        highlight = palette.color(QPalette.ColorRole.Highlight)
        dark = is_dark(palette)

        card = rect.adjusted(6, 2, -6, -2)
        painter.setPen(Qt.PenStyle.NoPen)
        if state == "selected":
            painter.setBrush(mix(base, highlight, 0.30 if dark else 0.16))
            painter.drawRoundedRect(card, 7, 7)
            painter.setBrush(highlight)
            painter.drawRoundedRect(
                QRect(card.left(), card.top() + 8, 3, card.height() - 16), 1.5, 1.5
            )
        elif state == "hovered":
            painter.setBrush(mix(base, text, 0.05))
            painter.drawRoundedRect(card, 7, 7)

        if entry.shadowed:
            painter.setOpacity(0.5)

        avatar = QRect(
            card.left() + self.PAD_X,
            card.center().y() - self.AVATAR // 2 + 1,
            self.AVATAR,
            self.AVATAR,
        )
        hue = zlib.crc32(entry.name.casefold().encode()) % 360
        painter.setBrush(QColor.fromHslF(hue / 360, 0.45, 0.42 if dark else 0.55))
        painter.drawEllipse(avatar)
        initial_font = QFont(option.font)
        initial_font.setBold(True)
        painter.setFont(initial_font)
        painter.setPen(QColor("white"))
        painter.drawText(avatar, Qt.AlignmentFlag.AlignCenter, (entry.name[:1] or "?").upper())

        left = avatar.right() + 10
        right = card.right() - self.PAD_X
        metrics = QFontMetrics(option.font)
        line_height = metrics.height()
        top = card.center().y() - line_height

        name_font = QFont(option.font)
        name_font.setWeight(QFont.Weight.DemiBold)
        name_metrics = QFontMetrics(name_font)

        badge_width = 0
        if entry.badge:
            badge_font = QFont(option.font)
            badge_font.setPointSizeF(max(7.0, badge_font.pointSizeF() * 0.82))
            badge_font.setWeight(QFont.Weight.DemiBold)
            badge_metrics = QFontMetrics(badge_font)
            badge_width = badge_metrics.horizontalAdvance(entry.badge) + 14
            badge_rect = QRect(right - badge_width, top + 1, badge_width, line_height - 2)
            accent = OVERRIDE_ACCENT if not entry.shadowed else text
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(mix(base, accent, 0.25 if dark else 0.16))
            painter.drawRoundedRect(badge_rect, badge_rect.height() / 2, badge_rect.height() / 2)
            painter.setFont(badge_font)
            painter.setPen(accent.lighter(150) if dark else accent.darker(150))
            painter.drawText(badge_rect, Qt.AlignmentFlag.AlignCenter, entry.badge)
        if entry.mark:
            warn = icons.pixmap(entry.mark, 14)
            badge_width += 18
            painter.drawPixmap(right - badge_width + 2, top + (line_height - 14) // 2, warn)

        painter.setFont(name_font)
        painter.setPen(text)
        name_width = max(10, right - left - badge_width - 8)
        painter.drawText(
            QRect(left, top, name_width, line_height),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            name_metrics.elidedText(entry.name, Qt.TextElideMode.ElideRight, name_width),
        )
        painter.setFont(option.font)
        painter.setPen(secondary_text(palette))
        painter.drawText(
            QRect(left, top + line_height + 1, right - left, line_height),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            metrics.elidedText(entry.description, Qt.TextElideMode.ElideRight, right - left),
        )
