"""The Appearance page: light, dark or the system's colours (:mod:`gui.theme.scheme`).

Unlike the other pages it edits no part of ``config.yaml``: the choice is a window preference
kept in QSettings. It applies as soon as it is picked, so the person sees it before saving;
the dialog keeps it on Save and puts the previous one back on Cancel.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QComboBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from core.config.settings import Settings
from gui.settings.settings_pages import MARGINS, Page
from gui.theme.scheme import SCHEMES, Scheme, apply_scheme, save_scheme, saved_scheme


class AppearancePage(Page):
    """The colour scheme, applied live; :meth:`keep` saves it, :meth:`revert` undoes it."""

    def __init__(self, window_settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = window_settings
        self._saved: Scheme = saved_scheme(window_settings)
        self.theme = QComboBox()
        self.theme.setObjectName("ThemeChoice")
        for key, label in SCHEMES.items():
            self.theme.addItem(label, key)
        self.theme.setCurrentIndex(list(SCHEMES).index(self._saved))
        self.theme.setToolTip("The window's colours; the change shows at once")
        self.theme.currentIndexChanged.connect(self._picked)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Theme", self.theme)
        note = QLabel(
            "“Same as the system” follows your desktop's light or dark setting where it "
            "reports one."
        )
        note.setObjectName("Secondary")
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addStretch(1)

    def load(self, settings: Settings) -> None:
        """Nothing of ``config.yaml`` is shown here."""

    def contribute(self, data: dict[str, Any]) -> None:
        """Nothing of ``config.yaml`` is edited here."""

    def chosen(self) -> Scheme:
        key = self.theme.currentData()
        return next((scheme for scheme in SCHEMES if scheme == key), "system")

    def keep(self) -> None:
        """Save: the chosen scheme is the one the next start opens with."""
        self._saved = self.chosen()
        save_scheme(self._settings, self._saved)

    def revert(self) -> None:
        """Cancel: back to the scheme the dialog opened with."""
        if self.chosen() != self._saved:
            self.theme.setCurrentIndex(list(SCHEMES).index(self._saved))

    def _picked(self) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_scheme(app, self.chosen())
