"""A tidy stand-in for a view that a later release fills in."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from gui.widgets import EmptyState


class ComingSoonView(EmptyState):
    """Says what the view will do, so the sidebar never leads to a blank page."""

    def __init__(self, title: str, promise: str, parent: QWidget | None = None) -> None:
        super().__init__("soon", f"{title} — coming soon", promise, parent)
        self.setObjectName("Placeholder")
        self.title.setObjectName("PlaceholderTitle")
