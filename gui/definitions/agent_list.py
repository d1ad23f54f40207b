"""The agents list: definitions grouped by source, with override marks.

Groups (Project / User / Built-in, highest precedence first) are headers with counts; each
agent row shows an initial "avatar", its name, a badge when it overrides another definition,
and its description. Definitions shadowed by a higher-precedence one are listed greyed at the
end of their group: they are real files the user may still want to open.

Rows are identified by file path, so the selection survives a refresh from disk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QTreeWidgetItem, QWidget

from gui.definitions.agent_rows import (
    ROLE_ENTRY,
    ROLE_KIND,
    ROLE_PATH,
    SOURCE_LABELS,
    AgentDelegate,
    AgentEntry,
    entries_by_source,
)

if TYPE_CHECKING:  # the agent model (pydantic) is not on the start-up path
    from core.definitions.agents import AgentCatalog

__all__ = ["SOURCE_LABELS", "AgentEntry", "AgentList"]


class AgentList(QTreeWidget):
    """Grouped agent rows. Emits :attr:`currentPathChanged` when the user picks a row."""

    currentPathChanged = Signal(str)
    """The selected row's file path ("" when nothing is selected). GUI thread."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AgentList")
        self.setHeaderHidden(True)
        self.setRootIsDecorated(False)
        self.setIndentation(0)
        self.setItemsExpandable(False)
        self.setExpandsOnDoubleClick(False)
        self.setUniformRowHeights(False)
        self.setMouseTracking(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setItemDelegate(AgentDelegate(self))
        self._quiet = False
        self._filter = ""
        self.currentItemChanged.connect(self._on_current_changed)

    # -- public API ----------------------------------------------------------------------

    def set_catalog(self, catalog: AgentCatalog) -> None:
        """Show ``catalog``, keeping the selected path (and scroll position) if it still exists."""
        groups = {
            source: (sum(1 for entry, _ in rows if not entry.shadowed), rows)
            for source, rows in entries_by_source(catalog).items()
        }
        self._show_groups(groups, keep_scroll=True)

    def current_path(self) -> str | None:
        item = self.currentItem()
        if item is None or item.data(0, ROLE_KIND) != "agent":
            return None
        return str(item.data(0, ROLE_PATH))

    def current_entry(self) -> AgentEntry | None:
        item = self.currentItem()
        entry = item.data(0, ROLE_ENTRY) if item is not None else None
        return entry if isinstance(entry, AgentEntry) else None

    def select_path(self, path: str | None, quiet: bool = False) -> bool:
        """Select the row of ``path`` (None: clear). ``quiet`` suppresses the signal."""
        previous, self._quiet = self._quiet, quiet or self._quiet
        try:
            item = self.item_for_path(path) if path else None
            if item is None:
                self.setCurrentIndex(QModelIndex())
                self.clearSelection()
                return path is None
            self.setCurrentItem(item)
            self.scrollToItem(item)
            return True
        finally:
            self._quiet = previous

    def item_for_path(self, path: str) -> QTreeWidgetItem | None:
        for item in self._agent_items():
            if item.data(0, ROLE_PATH) == path:
                return item
        return None

    def visible_entries(self) -> list[AgentEntry]:
        return [item.data(0, ROLE_ENTRY) for item in self._agent_items() if not item.isHidden()]

    def group_titles(self) -> list[str]:
        return [group.text(0) for group in self._groups()]

    def set_filter(self, text: str) -> None:
        self._filter = text.strip().casefold()
        self._apply_filter()

    def moveCursor(
        self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier
    ) -> QModelIndex:
        """Keyboard moves skip group headers: they are labels, not rows to land on."""
        index = super().moveCursor(action, modifiers)
        upwards = action in (
            QAbstractItemView.CursorAction.MoveUp,
            QAbstractItemView.CursorAction.MovePageUp,
            QAbstractItemView.CursorAction.MovePrevious,
        )
        while index.isValid() and index.data(ROLE_KIND) == "group":
            following = self.indexAbove(index) if upwards else self.indexBelow(index)
            if not following.isValid():
                return self.currentIndex() if upwards else self.indexBelow(index)
            index = following
        return index

    # -- private -------------------------------------------------------------------------

    def _show_groups(
        self, groups: dict[str, tuple[int, list[tuple[AgentEntry, str]]]], keep_scroll: bool
    ) -> None:
        """Rebuild the rows: ``groups`` maps a source to (count for its header, rows, tooltips).

        Shared with :class:`gui.definitions.preset_list.PresetList`, which builds its rows from
        files. The
        selected path survives; ``keep_scroll`` also keeps the scroll position.
        """
        selected = self.current_path()
        scroll = self.verticalScrollBar().value()
        self._quiet = True
        try:
            self.clear()
            for source, (count, rows) in groups.items():
                if not rows:
                    continue
                group = QTreeWidgetItem(self)
                group.setData(0, ROLE_KIND, "group")
                group.setData(0, ROLE_ENTRY, (SOURCE_LABELS[source], count))
                group.setText(0, f"{SOURCE_LABELS[source]} ({count})")
                # Enabled (children of a disabled item are disabled too) but not selectable;
                # moveCursor() steps over headers.
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                for entry, tooltip in rows:
                    item = QTreeWidgetItem(group)
                    item.setData(0, ROLE_KIND, "agent")
                    item.setData(0, ROLE_PATH, entry.path)
                    item.setData(0, ROLE_ENTRY, entry)
                    item.setText(0, entry.name)
                    item.setToolTip(0, tooltip)
                group.setExpanded(True)
            self._apply_filter()
            if selected:
                self.select_path(selected, quiet=True)
            if keep_scroll:
                self.verticalScrollBar().setValue(scroll)
        finally:
            self._quiet = False

    def _groups(self) -> list[QTreeWidgetItem]:
        groups = (self.topLevelItem(i) for i in range(self.topLevelItemCount()))
        return [group for group in groups if group is not None]

    @staticmethod
    def _children(group: QTreeWidgetItem) -> list[QTreeWidgetItem]:
        children = (group.child(i) for i in range(group.childCount()))
        return [child for child in children if child is not None]

    def _agent_items(self) -> list[QTreeWidgetItem]:
        return [child for group in self._groups() for child in self._children(group)]

    def _apply_filter(self) -> None:
        for group in self._groups():
            visible = 0
            for child in self._children(group):
                entry: AgentEntry = child.data(0, ROLE_ENTRY)
                hit = not self._filter or self._filter in (
                    f"{entry.name}\n{entry.description}".casefold()
                )
                child.setHidden(not hit)
                visible += hit
            group.setHidden(visible == 0)

    def _on_current_changed(self, current: QTreeWidgetItem | None, _: object) -> None:
        if self._quiet:
            return
        path = ""
        if current is not None and current.data(0, ROLE_KIND) == "agent":
            path = str(current.data(0, ROLE_PATH))
        self.currentPathChanged.emit(path)
