"""The settings dialog: ``config.yaml`` as a form (architecture: "File formats"), validated as you
type.

Sections (a list on the left, :mod:`gui.settings.settings_sections`): Providers, Models,
Permissions, Rules, MCP, Tools, ACP agents, Limits, Trusted projects, Telemetry
(:mod:`gui.settings.settings_telemetry`: its headers are a secret like a key), and Appearance (the
colour scheme: a window preference in QSettings, not part of the file). A search box above them
shows only the sections with a matching setting and marks it; Enter or ↓ there goes on to the
list (Enter never saves from the search box). On every
edit the pages' values are put together and validated as one :class:`core.config.settings.Settings`
(plus the few checks pydantic cannot make); each error is shown on its field — a red border and a
sentence under it — and **Save** stays disabled while anything is wrong.

Saving is all-or-nothing: new API keys go to the system keyring first (a keyring failure stops
the save before anything is written), then :func:`core.config.settings.save_settings` validates and
writes the file atomically; only then are keys of removed providers forgotten and revoked
projects untrusted. Keys are never part of the file.

A ``config.yaml`` that cannot be read opens the dialog on the defaults with the reason on top:
the person can fix the file by hand or overwrite it from here.

Open it with ``open()`` (window-modal, no nested event loop) so Test connection's coroutine and
running steps keep going; ``exec()`` is safe only from a plain slot.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QEvent, QObject, QSettings, Qt, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QIcon, QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.config.settings import Settings, SettingsError, config_path, load_settings, save_settings
from core.safety.rule_store import RuleStore
from core.safety.secrets import (
    SecretsError,
    delete_api_key,
    delete_telemetry_headers,
    store_api_key,
    store_telemetry_headers,
)
from core.safety.trust import TrustStore
from gui import theme
from gui.settings.settings_acp import AcpAgentsPage
from gui.settings.settings_appearance import AppearancePage
from gui.settings.settings_fields import ErrorList
from gui.settings.settings_machine import LimitsPage, ToolsPage, TrustPage
from gui.settings.settings_mcp import McpPage
from gui.settings.settings_pages import ModelsPage, Page, PermissionsPage, Which
from gui.settings.settings_providers import ProvidersPage
from gui.settings.settings_rules import RulesPage
from gui.settings.settings_search import SettingsSearch
from gui.settings.settings_sections import SettingsSections
from gui.settings.settings_telemetry import TelemetryPage
from gui.theme import icons
from gui.widgets import Banner


class SettingsDialog(QDialog):
    """Edit and save ``config.yaml``; :attr:`saved` fires after a successful save."""

    # -- signals (GUI thread) ------------------------------------------------------------

    saved = Signal()
    """config.yaml was written (the window refreshes its status line)."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        path: Path | None = None,
        which: Which = shutil.which,
        trust_store: TrustStore | None = None,
        rule_store: RuleStore | None = None,
        window_settings: QSettings | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("SettingsDialog")
        self.setWindowTitle("Settings")
        self.path = path or config_path()
        self.load_error: str | None = None
        self.last_errors: ErrorList = []

        self.banner = Banner()
        self.providers = ProvidersPage()
        self.models = ModelsPage()
        self.permissions = PermissionsPage()
        self.rules = RulesPage(rule_store)
        self.mcp = McpPage(trust_store)
        self.tools = ToolsPage(which)
        self.acp_agents = AcpAgentsPage(which)
        self.limits = LimitsPage()
        self.trust = TrustPage(trust_store)
        self.telemetry = TelemetryPage()
        self.appearance = AppearancePage(
            window_settings if window_settings is not None else QSettings()
        )
        self.tabs = SettingsSections()
        """The sections: a list and the page it opens (named as the tabs it replaced)."""
        self._pages: list[tuple[Page | ProvidersPage, str]] = [
            (self.providers, "Providers"),
            (self.models, "Models"),
            (self.permissions, "Permissions"),
            (self.rules, "Rules"),
            (self.mcp, "MCP"),
            (self.tools, "Tools"),
            (self.acp_agents, "ACP agents"),
            (self.limits, "Limits"),
            (self.trust, "Trusted projects"),
            (self.telemetry, "Telemetry"),
            (self.appearance, "Appearance"),
        ]
        for page, title in self._pages:
            self.tabs.addTab(page, title)
        self.search = QLineEdit()
        self.search.setObjectName("SettingsSearch")
        self.search.setPlaceholderText("Search settings (timeout, sandbox, theme…)")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Shows only the sections with a matching setting, and marks it; Enter goes to them"
        )
        self.search.installEventFilter(self)
        self._search = SettingsSearch(self.tabs)
        self.search.textChanged.connect(self._filter)
        self.search_result = QLabel("")
        self.search_result.setObjectName("Secondary")

        self.summary = QLabel()
        self.summary.setObjectName("SettingsSummary")
        self.summary.setWordWrap(True)
        # Room for two lines whether or not there is a message: the tabs above never move.
        self.summary.setFixedHeight(2 * self.summary.fontMetrics().lineSpacing() + 2)
        self.save_button = QPushButton("Save")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 12)
        layout.addWidget(self.banner)
        search_row = QHBoxLayout()
        search_row.setContentsMargins(14, 10, 14, 2)
        search_row.addWidget(self.search, 1)
        search_row.addWidget(self.search_result)
        layout.addLayout(search_row)
        layout.addWidget(self.tabs, 1)
        bottom = QWidget()
        bottom.setLayout(buttons)
        buttons.setContentsMargins(14, 4, 14, 0)
        layout.addWidget(bottom)

        self.providers.changed.connect(self._providers_changed)
        self.providers.modelsFound.connect(self.models.add_models)
        self.providers.modelsListed.connect(
            lambda models: self.models.add_models(models, choose_first=False)
        )
        pages = (
            self.models,
            self.permissions,
            self.rules,
            self.mcp,
            self.tools,
            self.limits,
            self.trust,
            self.telemetry,
        )
        for page in pages:
            page.changed.connect(self.validate)
        self.resize(820, 560)
        self.reload()

    # -- public API ----------------------------------------------------------------------

    def reload(self) -> None:
        """Fill the pages from ``config.yaml`` (or the defaults if it cannot be read)."""
        try:
            settings = load_settings(self.path)
            self.load_error = None
            self.banner.hide()
        except SettingsError as error:
            settings = Settings()
            self.load_error = str(error)
            self.banner.show_message(
                "error",
                f"config.yaml could not be read — {error}. The form shows the defaults: fix "
                "the file by hand, or save here to replace it.",
                [("Open config.yaml", self._open_file)],
            )
        for page, _title in self._pages:
            page.load(settings)
        self.models.set_provider_names(self.providers.names())
        self.validate()

    def collect(self) -> dict[str, Any]:
        """The pages' values as the dict that is validated as :class:`Settings`."""
        data: dict[str, Any] = {}
        for page, _title in self._pages:
            page.contribute(data)
        return data

    def validate(self) -> Settings | None:
        """Check everything, mark what is wrong, enable Save only when nothing is."""
        errors: ErrorList = []
        for page, _title in self._pages:
            errors += page.extra_errors()
        settings: Settings | None = None
        try:
            settings = Settings.model_validate(self.collect())
        except ValidationError as error:
            errors += [(tuple(e["loc"]), str(e["msg"])) for e in error.errors()]
        unplaced: list[str] = []
        for index, (page, _title) in enumerate(self._pages):
            left = page.show_errors(errors)
            unplaced += left
            bad = bool(left) or page.errors.any()
            self.tabs.setTabIcon(index, icons.icon("error") if bad else QIcon())
        self.last_errors = errors
        self.save_button.setEnabled(not errors)
        if errors:
            marked = sum(page.errors.count() for page, _title in self._pages)
            parts = [f"Fix the marked field{'s' if marked != 1 else ''} to save."] if marked else []
            self._set_summary(" ".join(parts + unplaced), error=bool(marked))
        else:
            self._set_summary("", error=False)
        return None if errors else settings

    def save(self) -> bool:
        """Store new keys, write config.yaml, then forget old keys and revoked projects."""
        settings = self.validate()
        if settings is None:
            return False
        store, forget = self.providers.key_changes()
        try:
            for name, key in store:
                store_api_key(name, key)
        except SecretsError as error:
            self._set_summary(str(error), error=True)
            self.providers.errors.mark(self.providers.key_edit, str(error))
            return False
        headers, forget_headers = self.telemetry.header_changes()
        if headers is not None:
            try:
                store_telemetry_headers(headers)
            except SecretsError as error:
                self._set_summary(str(error), error=True)
                self.telemetry.errors.mark(self.telemetry.headers, str(error))
                return False
        try:
            save_settings(settings, self.path)
        except (OSError, ValueError) as error:
            self._set_summary(f"config.yaml could not be saved: {error}", error=True)
            return False
        for name in forget:
            # Nothing stored there, or the keyring went away: either way nothing is left.
            with contextlib.suppress(SecretsError):
                delete_api_key(name)
        self.providers.keys_stored()
        if forget_headers:
            with contextlib.suppress(SecretsError):
                delete_telemetry_headers()
        self.telemetry.headers_saved()
        self.trust.apply()
        self.rules.apply()
        try:
            self.mcp.apply()
        except (OSError, ValueError) as error:
            self._set_summary(f"MCP servers could not be saved: {error}", error=True)
            return False
        self.appearance.keep()
        self.load_error = None
        self.banner.hide()
        self.saved.emit()
        self.accept()
        return True

    # -- Qt overrides --------------------------------------------------------------------

    def done(self, result: int) -> None:
        self.providers.shutdown()
        self.telemetry.shutdown()
        if result != QDialog.DialogCode.Accepted:
            self.appearance.revert()
        self.mcp.shutdown()
        super().done(result)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter or ↓ in the search box goes on to the sections it left shown (Enter would
        otherwise press Save, the default button, in the middle of a search)."""
        if watched is self.search and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Down):
                self.tabs.list.setFocus(Qt.FocusReason.TabFocusReason)
                return True
        return super().eventFilter(watched, event)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.providers.shutdown()
        self.mcp.shutdown()
        super().closeEvent(event)

    # -- private -------------------------------------------------------------------------

    def _filter(self, query: str) -> None:
        self._search.apply(query)
        if not query.strip():
            self.search_result.setText("")
        elif self._search.matching_tabs():
            count = len(self._search.hits())
            where = ", ".join(self._search.matching_tabs())
            self.search_result.setText(f"{count} match{'es' if count != 1 else ''} in {where}")
        else:
            self.search_result.setText("No setting matches")

    def _providers_changed(self) -> None:
        self.models.set_provider_names(self.providers.names())
        self.validate()

    def _set_summary(self, text: str, *, error: bool) -> None:
        theme.set_tone(self.summary, "error" if error else None)
        self.summary.setText(text)

    def _open_file(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path)))
