"""Search over the Settings dialog's sections: type a word, see the settings that mention it.

Settings has eleven sections; a person looking for "timeout" should not have to open each. The
search reads what the pages show — row labels, check boxes, buttons, notes and tooltips — so
it never goes stale when a page gains a field. While a query is typed, sections without a match
are hidden from the list, the first one with a match is shown (scrolled to its first marked
setting), and each matching setting is marked (its label and the field it names); clearing the
box shows every section again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QScrollArea, QWidget

from gui.settings.settings_sections import SettingsSections
from gui.theme import repolish

HIT_PROPERTY = "settingsMatch"
"""A dynamic property on marked widgets; the application style sheet paints them (in the
palette's colours, so a mark made before a light ↔ dark switch follows it)."""


@dataclass(frozen=True)
class Hit:
    tab: int
    widget: QWidget
    text: str


def _plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text).replace("&amp;", "&").replace("&", "")


def _words(widget: QWidget) -> str:
    """What a person reads on ``widget`` (and in its tooltip), in lower case."""
    parts = [widget.toolTip()]
    if isinstance(widget, QLabel):
        parts.append(widget.text())
        buddy = widget.buddy()
        if buddy is not None:  # the field it names, or the box holding the field
            parts.append(buddy.toolTip())
            parts += [child.toolTip() for child in buddy.findChildren(QWidget)]
    elif isinstance(widget, QAbstractButton):
        parts.append(widget.text())
    elif isinstance(widget, QGroupBox):
        parts.append(widget.title())
    return _plain(" ".join(parts)).lower()


def _scroll_to(widget: QWidget) -> None:
    """Bring ``widget`` into view in the scroll area around it (a long page's last rows)."""
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    if isinstance(parent, QScrollArea):
        parent.ensureWidgetVisible(widget)


class SettingsSearch:
    """Filters ``tabs`` by ``query``; :meth:`hits` says what the last query matched."""

    def __init__(self, tabs: SettingsSections, ignore: tuple[QWidget, ...] = ()) -> None:
        self._tabs = tabs
        self._ignore = ignore
        self._marked: list[QWidget] = []
        self._hits: list[Hit] = []

    def hits(self) -> list[Hit]:
        return list(self._hits)

    def matching_tabs(self) -> list[str]:
        return sorted({self._tabs.tabText(hit.tab) for hit in self._hits}, key=self._order)

    def apply(self, query: str) -> None:
        """Show only the tabs that match every word of ``query`` ("" shows everything)."""
        for widget in self._marked:
            self._mark(widget, False)
        self._marked = []
        words = query.lower().split()
        self._hits = self._search(words) if words else []
        tabs_hit = {hit.tab for hit in self._hits}
        for index in range(self._tabs.count()):
            title_hit = bool(words) and all(w in self._tabs.tabText(index).lower() for w in words)
            if title_hit:
                tabs_hit.add(index)
            self._tabs.setTabVisible(index, not words or index in tabs_hit)
        if words and tabs_hit and self._tabs.currentIndex() not in tabs_hit:
            self._tabs.setCurrentIndex(min(tabs_hit))
        shown = [hit for hit in self._hits if hit.tab == self._tabs.currentIndex()]
        if shown:
            _scroll_to(shown[0].widget)
        for hit in self._hits:
            self._mark(hit.widget, True)
            self._marked.append(hit.widget)
            buddy = hit.widget.buddy() if isinstance(hit.widget, QLabel) else None
            if buddy is not None:
                self._mark(buddy, True)
                self._marked.append(buddy)

    def _search(self, words: list[str]) -> list[Hit]:
        hits: list[Hit] = []
        for index in range(self._tabs.count()):
            page = self._tabs.widget(index)
            if page is None:
                continue
            kinds = (QLabel, QAbstractButton, QGroupBox)
            for widget in page.findChildren(QWidget):
                if not isinstance(widget, kinds) or self._ignored(widget):
                    continue
                text = _words(widget)
                if text and all(word in text for word in words):
                    hits.append(Hit(index, widget, text))
        return hits

    def _ignored(self, widget: QWidget) -> bool:
        return any(widget is ignored or ignored.isAncestorOf(widget) for ignored in self._ignore)

    def _order(self, title: str) -> int:
        return next(i for i in range(self._tabs.count()) if self._tabs.tabText(i) == title)

    @staticmethod
    def _mark(widget: QWidget, on: bool) -> None:
        widget.setProperty(HIT_PROPERTY, "true" if on else None)
        repolish(widget)
