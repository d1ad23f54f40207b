"""Settings page: OpenAI-compatible providers, their API keys, and **Test connection**.

A key is never part of ``config.yaml``: the provider only says where its key lives — the
system keyring (stored with :func:`core.safety.secrets.store_api_key` when the dialog saves) or an
environment variable the person names. On a machine without a keyring the keyring choice is
disabled and a sentence says why. A typed key stays in memory in :class:`ProviderDraft` until
the dialog saves it to the keyring; :meth:`ProvidersPage.key_changes` lists what to store and
what to forget.

Test connection runs :func:`core.config.provider_http.list_models` as an asyncio task on the GUI
loop, so
the window stays responsive; the models it finds fill the default-model box. The same list is
asked for quietly when the page loads, so the default-model box offers what the server has
without a click.

The provider that ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` define is listed last, read-only,
because it is in use whenever nothing else is configured: a person must see where runs go.
It is never written to ``config.yaml``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from core.config.provider_http import ProbeError, list_models
from core.config.settings import Provider, Settings
from core.safety.secrets import api_key_for, keyring_available
from gui import theme
from gui.settings.settings_fields import ErrorList, FieldErrors, sentence
from gui.theme import icons
from gui.widgets import PlainLabel

KeyMode = Literal["none", "keyring", "env"]
ENVIRONMENT_NAME = "environment"
ENVIRONMENT_NOTE = (
    "Set by OPENAI_BASE_URL and OPENAI_API_KEY in the environment Baton was started from, and "
    "used whenever no other provider is chosen. Change it there; it is not saved here."
)


@dataclass
class ProviderDraft:
    """One provider as edited: the config fields plus a typed, not yet stored, key."""

    name: str = ""
    base_url: str = ""
    key_mode: KeyMode = "none"
    key_env: str = ""
    new_key: str = ""
    """Typed in this dialog, to store in the keyring on save (never written to a file)."""
    stored_as: str | None = None
    """The name its key is stored under in the keyring now (None: no stored key)."""
    environment: bool = False
    """Defined by OPENAI_BASE_URL / OPENAI_API_KEY: shown, tested, never edited or saved."""
    fresh: bool = False
    """Just added and its address not typed yet: no red "Required" before the person typed."""

    @classmethod
    def from_provider(cls, provider: Provider) -> ProviderDraft:
        mode: KeyMode = (
            "keyring" if provider.api_key_in_keyring else "env" if provider.api_key_env else "none"
        )
        return cls(
            name=provider.name,
            base_url=provider.base_url,
            key_mode=mode,
            key_env=provider.api_key_env or "",
            stored_as=provider.name if provider.api_key_in_keyring else None,
        )

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name.strip(), "base_url": self.base_url.strip()}
        if self.key_mode == "env":
            data["api_key_env"] = self.key_env.strip() or None
        if self.key_mode == "keyring":
            data["api_key_in_keyring"] = True
        return data

    @classmethod
    def from_environment(cls) -> ProviderDraft | None:
        base_url = os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            return None
        return cls(
            name=ENVIRONMENT_NAME,
            base_url=base_url,
            key_mode="env",
            key_env="OPENAI_API_KEY",
            environment=True,
        )

    def key(self) -> str | None:
        """The key a connection test should use now."""
        if self.key_mode == "keyring" and self.new_key:
            return self.new_key
        if self.key_mode == "env":
            return os.environ.get(self.key_env.strip(), "").strip() or None
        if self.key_mode == "keyring" and self.stored_as:
            stored = Provider(name=self.stored_as, base_url="http://-", api_key_in_keyring=True)
            return api_key_for(stored)
        return None


class ProvidersPage(QWidget):
    """The provider list on the left, the selected provider's form on the right."""

    # -- signals (GUI thread) ------------------------------------------------------------

    changed = Signal()
    """Any edit: the dialog validates again."""
    modelsFound = Signal(list)
    """Model ids from a successful connection test (the person asked: offer the first)."""
    modelsListed = Signal(list)
    """Model ids the provider in use listed when the page loaded (chosen only when alone)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.drafts: list[ProviderDraft] = []
        self._removed: list[ProviderDraft] = []
        self.errors = FieldErrors()
        self._loading = False
        self._test_task: asyncio.Task[None] | None = None
        self._listing_task: asyncio.Task[None] | None = None
        self.environment: ProviderDraft | None = None
        self.keyring_ok = keyring_available()
        self._build()

    # -- public API ----------------------------------------------------------------------

    def load(self, settings: Settings) -> None:
        self.drafts = [ProviderDraft.from_provider(p) for p in settings.providers]
        self.environment = ProviderDraft.from_environment()
        self._removed = []
        self._loading = True
        self.list.clear()
        for draft in self.drafts:
            self.list.addItem(QListWidgetItem(draft.name))
        if self.environment is not None:
            item = QListWidgetItem(icons.icon("model"), f"{ENVIRONMENT_NAME} (read-only)")
            item.setToolTip(ENVIRONMENT_NOTE)
            self.list.addItem(item)
        self._loading = False
        self.list.setCurrentRow(0 if self.list.count() else -1)
        self._show_current()
        active = settings.provider()
        if active is not None:
            self._start_listing(active.base_url, api_key_for(active))

    def contribute(self, data: dict[str, Any]) -> None:
        data["providers"] = [draft.to_data() for draft in self.drafts]

    def names(self) -> list[str]:
        return [draft.name.strip() for draft in self.drafts if draft.name.strip()]

    def extra_errors(self) -> ErrorList:
        """What pydantic does not check: unique names, a named variable, a usable keyring."""
        errors: ErrorList = []
        seen: set[str] = set()
        for index, draft in enumerate(self.drafts):
            name = draft.name.strip()
            if name and name in seen:
                errors.append((("providers", index, "name"), "Another provider has this name."))
            seen.add(name)
            if draft.key_mode == "env" and not draft.key_env.strip():
                errors.append(
                    (("providers", index, "api_key_env"), "Name the environment variable.")
                )
            if draft.key_mode == "keyring" and not self.keyring_ok and draft.new_key:
                errors.append(
                    (("providers", index, "api_key_in_keyring"), "No keyring to store it in.")
                )
        return errors

    def show_errors(self, errors: ErrorList) -> list[str]:
        """Mark this page's errors; returns the messages it could not place on a field."""
        self.errors.clear()
        bad_rows: dict[int, list[str]] = {}
        unplaced: list[str] = []
        current = self.list.currentRow()
        for loc, message in errors:
            if len(loc) < 2 or loc[0] != "providers" or not isinstance(loc[1], int):
                continue
            index = loc[1]
            field = self._field_for(loc[2] if len(loc) > 2 else "")
            draft = self.drafts[index] if index < len(self.drafts) else None
            if draft is not None and draft.fresh and field is self.url_edit:
                unplaced.append(f"Enter the base URL of {draft.name or 'the new provider'}.")
                continue
            bad_rows.setdefault(index, []).append(sentence(message))
            if index == current and field is not None:
                self.errors.mark(field, sentence(message))
            else:
                name = self.drafts[index].name if index < len(self.drafts) else index
                unplaced.append(f"Provider {name}: {sentence(message)}")
        for row in range(self.list.count()):
            item = self.list.item(row)
            problems = bad_rows.get(row)
            item.setIcon(icons.icon("error") if problems else icons.icon("model"))
            item.setToolTip(" ".join(problems) if problems else "")
        return unplaced

    def key_changes(self) -> tuple[list[tuple[str, str]], list[str]]:
        """(keys to store as (provider, key), provider names whose stored key to forget).

        A renamed provider's stored key moves to the new name; a typed key replaces it.
        """
        store: list[tuple[str, str]] = []
        for draft in self.drafts:
            name = draft.name.strip()
            if draft.key_mode != "keyring":
                continue
            if draft.new_key:
                store.append((name, draft.new_key))
            elif draft.stored_as and draft.stored_as != name:
                moved = draft.key()
                if moved:
                    store.append((name, moved))
        keep = {d.name.strip() for d in self.drafts if d.key_mode == "keyring"}
        forget = sorted({d.stored_as for d in self.drafts + self._removed if d.stored_as} - keep)
        return store, forget

    def keys_stored(self) -> None:
        """After a save: typed keys now live in the keyring under their provider's name."""
        for draft in self.drafts:
            if draft.key_mode == "keyring" and (draft.new_key or draft.stored_as):
                draft.stored_as = draft.name.strip()
            elif draft.key_mode != "keyring":
                draft.stored_as = None
            draft.new_key = ""
        self._removed = []
        self._show_current()

    def shutdown(self) -> None:
        for task in (self._test_task, self._listing_task):
            if task is not None:
                task.cancel()

    # -- building ------------------------------------------------------------------------

    def _build(self) -> None:
        self.list = QListWidget()
        self.list.setObjectName("ProviderList")
        self.list.setMaximumWidth(200)
        self.list.currentRowChanged.connect(lambda _row: self._show_current())
        self.add_button = QPushButton(icons.icon("add"), "Add")
        self.add_button.clicked.connect(self._add)
        self.remove_button = QPushButton(icons.icon("delete"), "Remove")
        self.remove_button.clicked.connect(self._remove)
        left_buttons = QHBoxLayout()
        left_buttons.addWidget(self.add_button)
        left_buttons.addWidget(self.remove_button)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        left.addLayout(left_buttons)

        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. ollama, openai, work-gateway")
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("http://localhost:11434/v1")
        self.url_edit.setToolTip(
            "The server's OpenAI-compatible address. Requests go through the proxy named in "
            "HTTPS_PROXY, HTTP_PROXY or ALL_PROXY when one is set (NO_PROXY excepts hosts)."
        )
        self.mode_none = QRadioButton("No key (a local server)")
        self.mode_keyring = QRadioButton("Stored in the system keyring")
        self.mode_env = QRadioButton("From an environment variable")
        self.modes = QButtonGroup(self)
        for button in (self.mode_none, self.mode_keyring, self.mode_env):
            self.modes.addButton(button)
        self.key_edit = QLineEdit()
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setObjectName("ApiKey")
        self.env_edit = QLineEdit()
        self.env_edit.setPlaceholderText("OPENAI_API_KEY")
        self.keyring_note = QLabel(
            "No system keyring is available on this machine, so Baton cannot store a key: "
            "put the key in an environment variable and enter the variable's name."
        )
        self.keyring_note.setWordWrap(True)
        self.keyring_note.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.keyring_note.setObjectName("Secondary")
        self.keyring_note.setVisible(not self.keyring_ok)
        self.mode_keyring.setEnabled(self.keyring_ok)

        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self._start_test)
        self.test_result = PlainLabel()
        self.test_result.setObjectName("TestResult")
        self.test_result.setWordWrap(True)
        self.test_result.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        test_row = QVBoxLayout()
        test_row.setSpacing(4)
        test_row.addWidget(self.test_button, 0, Qt.AlignmentFlag.AlignLeft)
        test_row.addWidget(self.test_result)

        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.errors.add_row(self.form, "Name", self.name_edit)
        self.errors.add_row(self.form, "Base URL", self.url_edit)
        key_box = QWidget()
        key_column = QVBoxLayout(key_box)
        key_column.setContentsMargins(0, 0, 0, 0)
        key_column.setSpacing(4)
        for widget in (self.mode_none, self.mode_keyring, self.key_edit):
            key_column.addWidget(widget)
        key_column.addWidget(self.errors.label_for(self.key_edit))
        key_column.addWidget(self.mode_env)
        key_column.addWidget(self.env_edit)
        key_column.addWidget(self.errors.label_for(self.env_edit))
        key_column.addWidget(self.keyring_note)
        self.form.addRow("API key", key_box)
        self.form.addRow("", test_row)
        self.environment_note = QLabel(ENVIRONMENT_NOTE)
        self.environment_note.setWordWrap(True)
        self.environment_note.setObjectName("Secondary")
        self.form.insertRow(0, self.environment_note)
        self.editor = QWidget()
        self.editor.setLayout(self.form)
        self.empty_note = QLabel(
            "No provider yet. Add one for an OpenAI-compatible server: Ollama, LM Studio, "
            "vLLM, OpenAI, OpenRouter…"
        )
        self.empty_note.setWordWrap(True)
        self.empty_note.setObjectName("Secondary")
        right = QVBoxLayout()
        right.addWidget(self.empty_note)
        right.addWidget(self.editor)
        right.addStretch(1)

        layout = QHBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 8)
        layout.setSpacing(14)
        layout.addLayout(left)
        layout.addLayout(right, 1)

        self.name_edit.textEdited.connect(self._edited)
        self.url_edit.textEdited.connect(self._edited)
        self.key_edit.textEdited.connect(self._edited)
        self.env_edit.textEdited.connect(self._edited)
        self.modes.buttonToggled.connect(self._mode_toggled)

    def _field_for(self, name: Any) -> QWidget | None:
        return {
            "name": self.name_edit,
            "base_url": self.url_edit,
            "api_key_env": self.env_edit,
            "api_key_in_keyring": self.key_edit,
        }.get(str(name))

    # -- editing -------------------------------------------------------------------------

    def current(self) -> ProviderDraft | None:
        row = self.list.currentRow()
        if 0 <= row < len(self.drafts):
            return self.drafts[row]
        return self.environment if row == len(self.drafts) else None

    def _show_current(self) -> None:
        draft = self.current()
        self.editor.setVisible(draft is not None)
        self.empty_note.setVisible(draft is None)
        self.remove_button.setEnabled(draft is not None and not draft.environment)
        self.test_result.clear()
        if draft is None:
            return
        read_only = draft.environment
        self.environment_note.setVisible(read_only)
        self.keyring_note.setVisible(not self.keyring_ok and not read_only)
        for edit in (self.name_edit, self.url_edit, self.env_edit):
            edit.setReadOnly(read_only)
        for button in (self.mode_none, self.mode_keyring, self.mode_env):
            button.setEnabled(
                not read_only and (button is not self.mode_keyring or self.keyring_ok)
            )
        self._loading = True
        self.name_edit.setText(draft.name)
        self.url_edit.setText(draft.base_url)
        self.key_edit.setText(draft.new_key)
        self.env_edit.setText(draft.key_env)
        {"none": self.mode_none, "keyring": self.mode_keyring, "env": self.mode_env}[
            draft.key_mode
        ].setChecked(True)
        self._loading = False
        self._update_key_widgets(draft)
        self.changed.emit()

    def _mode_toggled(self, _button: QRadioButton, checked: bool) -> None:
        if checked:
            self._edited()

    def _edited(self) -> None:
        draft = self.current()
        if self._loading or draft is None:
            return
        draft.name = self.name_edit.text()
        draft.fresh = draft.fresh and not self.url_edit.text()
        draft.base_url = self.url_edit.text()
        draft.new_key = self.key_edit.text()
        draft.key_env = self.env_edit.text()
        draft.key_mode = (
            "keyring"
            if self.mode_keyring.isChecked()
            else "env"
            if self.mode_env.isChecked()
            else "none"
        )
        item = self.list.currentItem()
        if item is not None:
            item.setText(draft.name or "(unnamed)")
        self._update_key_widgets(draft)
        self.changed.emit()

    def _update_key_widgets(self, draft: ProviderDraft) -> None:
        self.key_edit.setEnabled(draft.key_mode == "keyring" and not draft.environment)
        self.env_edit.setEnabled(draft.key_mode == "env")
        self.key_edit.setPlaceholderText(
            "A key is stored in the keyring; type here to replace it"
            if draft.stored_as
            else "Paste the API key (stored in the keyring when you save)"
        )

    def _add(self) -> None:
        name = "provider"
        taken = set(self.names())
        number = 1
        while name in taken:
            number += 1
            name = f"provider-{number}"
        self.drafts.append(
            ProviderDraft(name=name, key_mode="keyring" if self.keyring_ok else "none", fresh=True)
        )
        self.list.insertItem(len(self.drafts) - 1, QListWidgetItem(name))
        self.list.setCurrentRow(len(self.drafts) - 1)
        self.url_edit.setFocus()

    def _remove(self) -> None:
        row = self.list.currentRow()
        if not 0 <= row < len(self.drafts):
            return
        self._removed.append(self.drafts.pop(row))
        self.list.takeItem(row)
        self._show_current()
        self.changed.emit()

    # -- connection test -----------------------------------------------------------------

    def _start_test(self) -> None:
        draft = self.current()
        if draft is None:
            return
        if self._test_task is not None:
            self._test_task.cancel()
        self.test_button.setEnabled(False)
        theme.set_tone(self.test_result, None)
        self.test_result.setText("Connecting…")
        self._test_task = asyncio.ensure_future(self._test(draft.base_url, draft.key()))

    def _start_listing(self, base_url: str, key: str | None) -> None:
        """Ask the provider in use for its models, quietly: a failure here is not news (Test
        connection says it when asked); a list fills the default-model box."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no asyncio loop drives this window (a bare test): nothing to ask with
        self._listing_task = loop.create_task(self._list_quietly(base_url, key))

    async def _list_quietly(self, base_url: str, key: str | None) -> None:
        with contextlib.suppress(ProbeError):
            self.modelsListed.emit(await list_models(base_url, key))

    async def _test(self, base_url: str, key: str | None) -> None:
        try:
            models = await list_models(base_url, key)
        except ProbeError as error:
            self._show_result(str(error), ok=False)
        else:
            self._show_result(_describe_models(models), ok=True)
            self.modelsFound.emit(models)
        finally:
            with contextlib.suppress(RuntimeError):  # the page may be gone already
                self.test_button.setEnabled(True)

    def _show_result(self, text: str, *, ok: bool) -> None:
        theme.set_tone(self.test_result, "ok" if ok else "error")
        self.test_result.setText(text)

    def test_running(self) -> bool:
        return self._test_task is not None and not self._test_task.done()


def _describe_models(models: list[str]) -> str:
    if not models:
        return "Connected, but the server lists no models."
    shown = ", ".join(models[:8])
    if len(models) > 8:
        shown += f" and {len(models) - 8} more"
    return f"Connected: {len(models)} model{'s' if len(models) != 1 else ''}: {shown}."
