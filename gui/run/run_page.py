"""One tab of the Runs view: an optional banner above a run view, and what the tab shows.

Apart from :mod:`gui.run.runs_view` (which owns the tabs) so the modules that act on a tab —
the review actions — need not import the view that holds them.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QVBoxLayout, QWidget

from gui.run.run_controller import RunSession
from gui.run.run_loader import RunLoader
from gui.run.run_view import RunView
from gui.widgets import Banner


class RunPage(QWidget):
    """One tab: an optional banner ("not in your history — Import") above a run view."""

    def __init__(
        self,
        view: RunView,
        *,
        session: RunSession | None = None,
        path: Path | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.view = view
        self.session = session
        self.path = path
        self.expected_run_id = ""
        """The run being read into this page, when known before it is read (the history)."""
        self.loader: RunLoader | None = None
        """Set while the run is read off the GUI thread."""
        self.banner = Banner()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        layout.addWidget(view, 1)

    @property
    def run_id(self) -> str:
        if self.session:
            return self.session.run_id
        return self.view.state().run_id or self.expected_run_id

    def is_reading(self) -> bool:
        """True while the saved run is read and folded (the tab says "Reading …"), and
        while its panes are built, a few per turn."""
        return self.loader is not None or self.view.is_building()

    def is_live(self) -> bool:
        return self.session is not None and self.session.is_active()
