"""The settings dialog: inline validation, all-or-nothing saves, keys kept out of files, the
connection test against the scripted server, trusted projects."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import keyring
import pytest
import yaml
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from core.config import paths
from core.config.settings import Provider, Settings, config_path, load_settings, save_settings
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.secrets import SERVICE
from core.safety.trust import TrustStore
from gui.settings.settings_dialog import SettingsDialog
from tests.llm_server import LLMServer, Reply

SECRET = "sk-test-0123456789abcdef"


class MemoryKeyring(KeyringBackend):
    """A keyring that exists only in this process (the real one must never be touched)."""

    priority = 5

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.passwords.pop((service, username), None) is None:
            raise PasswordDeleteError("not stored")


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def make_dialog(qtbot: QtBot) -> Iterator[type[SettingsDialog]]:
    dialogs: list[SettingsDialog] = []

    def make(**options: object) -> SettingsDialog:
        dialog = SettingsDialog(**options)  # type: ignore[arg-type]
        qtbot.addWidget(dialog)
        dialog.show()
        dialogs.append(dialog)
        return dialog

    yield make  # type: ignore[misc]
    for dialog in dialogs:
        dialog.providers.shutdown()


def _type(qtbot: QtBot, field: QLineEdit, text: str) -> None:
    field.selectAll()
    field.clear()
    qtbot.keyClicks(field, text)


def _config_text() -> str:
    return config_path().read_text(encoding="utf-8")


def test_a_bad_url_is_shown_inline_and_disables_save(qtbot: QtBot, make_dialog) -> None:
    dialog = make_dialog()
    page = dialog.providers
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    _type(qtbot, page.url_edit, "localhost:11434")

    assert page.url_edit.property("invalid") is True
    assert page.errors.message(page.url_edit) == "Must start with http:// or https://."
    assert page.errors.label_for(page.url_edit).isVisible()
    assert not dialog.save_button.isEnabled()
    assert dialog.summary.text().startswith("Fix the marked field")
    assert not dialog.save()
    assert not config_path().exists()

    _type(qtbot, page.url_edit, "http://localhost:11434/v1")
    assert not page.url_edit.property("invalid")
    assert dialog.save_button.isEnabled()
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert load_settings().providers == [
        Provider(name="provider", base_url="http://localhost:11434/v1")
    ]


@pytest.mark.usefixtures("qasync_loop")
def test_an_api_key_goes_to_the_keyring_never_to_a_file(
    qtbot: QtBot,
    make_dialog,
    memory_keyring: MemoryKeyring,
    llm_server: LLMServer,
    tmp_path: Path,
) -> None:
    dialog = make_dialog()
    page = dialog.providers
    assert page.mode_keyring.isEnabled() and not page.keyring_note.isVisible()
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    _type(qtbot, page.name_edit, "gateway")
    _type(qtbot, page.url_edit, llm_server.base_url)
    page.mode_keyring.setChecked(True)
    _type(qtbot, page.key_edit, SECRET)
    dialog.models.model_combo.setEditText("test-model")
    with qtbot.waitSignal(dialog.saved):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)

    assert memory_keyring.passwords == {(SERVICE, "gateway"): SECRET}
    assert SECRET not in _config_text()
    settings = load_settings()
    assert settings.providers[0].api_key_in_keyring and settings.default_model == "test-model"

    # A run with that provider sends the key, and its run file never contains it.
    llm_server.queue(Reply.answer(f"I saw the key {SECRET} somewhere."))
    request = RunRequest(mode="single", steps=[StepSpec(agent="planner", task="go")], cwd=tmp_path)
    runner = Runner(request, settings=settings)
    task = asyncio.ensure_future(runner.run())
    qtbot.waitUntil(task.done, timeout=10_000)
    assert task.result().status == "ok"
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    run_files = list((paths.data_dir() / "runs").glob("*.jsonl"))
    assert run_files and all(SECRET not in f.read_text(encoding="utf-8") for f in run_files)


def test_removing_a_provider_forgets_its_key(
    qtbot: QtBot, make_dialog, memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.set_password(SERVICE, "old", SECRET)
    save_settings(
        Settings(providers=[Provider(name="old", base_url="http://a/v1", api_key_in_keyring=True)])
    )
    dialog = make_dialog()
    assert "stored in the keyring" in dialog.providers.key_edit.placeholderText()
    qtbot.mouseClick(dialog.providers.remove_button, Qt.MouseButton.LeftButton)
    assert dialog.save()
    assert memory_keyring.passwords == {}
    assert load_settings().providers == []


def test_renaming_a_provider_moves_its_stored_key(
    qtbot: QtBot, make_dialog, memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.set_password(SERVICE, "old", SECRET)
    save_settings(
        Settings(providers=[Provider(name="old", base_url="http://a/v1", api_key_in_keyring=True)])
    )
    dialog = make_dialog()
    _type(qtbot, dialog.providers.name_edit, "new")
    assert dialog.providers.list.item(0).text() == "new"
    assert dialog.save()
    assert memory_keyring.passwords == {(SERVICE, "new"): SECRET}
    assert SECRET not in _config_text()


def test_without_a_keyring_the_dialog_offers_an_environment_variable(
    qtbot: QtBot, make_dialog
) -> None:
    dialog = make_dialog()
    page = dialog.providers
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    assert not page.mode_keyring.isEnabled() and page.mode_none.isChecked()
    assert page.keyring_note.isVisible() and "No system keyring" in page.keyring_note.text()
    _type(qtbot, page.url_edit, "https://api.example.com/v1")
    page.mode_env.setChecked(True)
    assert page.errors.message(page.env_edit) == "Name the environment variable."
    assert not dialog.save_button.isEnabled()
    _type(qtbot, page.env_edit, "EXAMPLE_KEY")
    assert dialog.save()
    assert yaml.safe_load(_config_text())["providers"] == [
        {"name": "provider", "base_url": "https://api.example.com/v1", "api_key_env": "EXAMPLE_KEY"}
    ]


@pytest.mark.usefixtures("qasync_loop")
def test_test_connection_lists_the_models_and_fills_the_default_model(
    qtbot: QtBot,
    make_dialog,
    llm_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm_server.models = ["qwen3:8b", "llama3.2"]
    monkeypatch.setenv("GATEWAY_KEY", "env-secret")
    save_settings(Settings(providers=[llm_server.provider("local", api_key_env="GATEWAY_KEY")]))
    dialog = make_dialog()
    page = dialog.providers

    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    assert page.test_result.text() == "Connecting…" and not page.test_button.isEnabled()
    qtbot.waitUntil(lambda: page.test_button.isEnabled())

    assert page.test_result.text() == "Connected: 2 models: llama3.2, qwen3:8b."
    combo = dialog.models.model_combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["llama3.2", "qwen3:8b"]
    assert combo.currentText() == "llama3.2"
    assert llm_server.all_requests[-1].headers["authorization"] == "Bearer env-secret"


class _Refusing(BaseHTTPRequestHandler):
    """Answers every request with 401, as a gateway does for a wrong key."""

    def do_GET(self) -> None:
        body = b'{"error": {"message": "invalid api key"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def refusing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    thread.join()
    server.server_close()


@pytest.mark.usefixtures("qasync_loop")
def test_test_connection_explains_a_failure_in_one_sentence(
    qtbot: QtBot, make_dialog, refusing_server: str, llm_server: LLMServer
) -> None:
    save_settings(Settings(providers=[Provider(name="wrong", base_url=refusing_server)]))
    dialog = make_dialog()
    page = dialog.providers
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.test_button.isEnabled())
    assert page.test_result.text() == "The server refused the API key (HTTP 401); check the key."

    url = llm_server.base_url
    llm_server.stop()  # nothing listens on that port any more
    _type(qtbot, page.url_edit, url)
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.test_button.isEnabled())
    assert page.test_result.text() == f"Could not connect to {url}: nothing answers there."


def test_policy_limits_and_aliases_round_trip(qtbot: QtBot, make_dialog) -> None:
    dialog = make_dialog()
    dialog.permissions.combos["bash"].setCurrentText("allow")
    dialog.permissions.combos["read"].setCurrentText("ask")
    dialog.limits.spins["max_turns"].setValue(12)
    dialog.limits.spins["step_timeout_s"].setValue(300)
    dialog.models.add_alias("claude-sonnet-4-5", "qwen3:8b")
    dialog.models.backend_combo.setCurrentIndex(dialog.models.backend_combo.findData("pi"))
    assert dialog.save()

    settings = load_settings()
    assert settings.policy == {"bash": "allow", "read": "ask"}
    assert settings.limits.max_turns == 12 and settings.limits.step_timeout_s == 300
    assert settings.model_aliases == {"claude-sonnet-4-5": "qwen3:8b"}
    assert settings.default_backend == "pi"

    again = make_dialog()
    assert again.permissions.combos["bash"].currentText() == "allow"
    qtbot.mouseClick(again.permissions.reset_button, Qt.MouseButton.LeftButton)
    again.limits.spins["step_timeout_s"].setValue(0)  # "No limit"
    assert again.limits.spins["step_timeout_s"].text() == "No limit"
    assert again.save()
    settings = load_settings()
    assert settings.policy == {} and settings.limits.step_timeout_s is None


def test_the_hand_off_cap_is_a_labelled_limit(qtbot: QtBot, make_dialog) -> None:
    dialog = make_dialog()
    spin = dialog.limits.spins["handoff_chars"]
    labels = [label.text() for label in dialog.limits.findChildren(QLabel)]
    assert any(text.startswith("Answer handed to the next step") for text in labels)
    assert spin.value() == 50_000 and spin.suffix() == " chars"
    spin.setValue(20_000)
    assert dialog.save()
    assert load_settings().limits.handoff_chars == 20_000


def test_invalid_limits_and_aliases_are_marked_and_nothing_is_saved(
    qtbot: QtBot, make_dialog
) -> None:
    dialog = make_dialog()
    spin = dialog.limits.spins["max_turns"]
    spin.setValue(0)
    assert dialog.limits.errors.message(spin) == "Input should be greater than or equal to 1."
    assert not dialog.save_button.isEnabled()
    assert not dialog.tabs.tabIcon(dialog.tabs.indexOf(dialog.limits)).isNull()
    spin.setValue(5)
    dialog.models.add_alias("gpt-4o", "")
    assert dialog.models.errors.message(dialog.models.aliases) == (
        "Row 1 needs both names (or neither)."
    )
    assert not dialog.save()
    assert not config_path().exists()


def test_program_paths_are_checked_and_hint_at_path(
    qtbot: QtBot, make_dialog, tmp_path: Path
) -> None:
    found = {"pi": "/opt/bin/pi"}
    dialog = make_dialog(which=found.get)
    tools = dialog.tools
    assert tools.pi.hint.text() == "Found on PATH: /opt/bin/pi"
    assert tools.claude.hint.text().startswith("claude is not on PATH")
    tools.claude.edit.setText(str(tmp_path / "missing" / "claude"))
    assert tools.errors.is_marked(tools.claude.edit)
    assert not dialog.save_button.isEnabled()
    program = tmp_path / "claude"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    tools.claude.edit.setText(str(program))
    assert dialog.save()
    assert load_settings().claude_path == str(program)


def test_an_unreadable_config_is_explained_and_can_be_overwritten(
    qtbot: QtBot, make_dialog
) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text("providers: [name: x\n", encoding="utf-8")
    dialog = make_dialog()
    assert dialog.banner.isVisible() and dialog.banner.kind() == "error"
    assert "config.yaml could not be read" in dialog.banner.message()
    assert dialog.banner.button("Open config.yaml") is not None
    assert dialog.save()
    assert load_settings() == Settings()


def test_trusted_projects_can_be_revoked(qtbot: QtBot, make_dialog, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".pi" / "agents").mkdir(parents=True)
    TrustStore().trust(project)
    dialog = make_dialog()
    tree = dialog.trust.tree
    assert tree.topLevelItemCount() == 1 and tree.topLevelItem(0).text(0) == str(project)
    tree.setCurrentItem(tree.topLevelItem(0))
    qtbot.mouseClick(dialog.trust.revoke_button, Qt.MouseButton.LeftButton)
    assert TrustStore().is_trusted(project)  # only when saved
    assert dialog.save()
    assert not TrustStore().is_trusted(project)


def test_the_environment_provider_is_shown_read_only_and_never_saved(
    qtbot: QtBot, make_dialog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    save_settings(Settings(providers=[Provider(name="work", base_url="https://gw.example/v1")]))
    dialog = make_dialog()
    page = dialog.providers
    labels = [page.list.item(row).text() for row in range(page.list.count())]
    assert labels == ["work", "environment (read-only)"]

    page.list.setCurrentRow(1)
    assert page.url_edit.text() == "http://127.0.0.1:9/v1"
    assert page.url_edit.isReadOnly() and page.name_edit.isReadOnly()
    assert page.env_edit.text() == "OPENAI_API_KEY"
    assert not page.remove_button.isEnabled()
    assert page.environment_note.isVisible()
    assert "OPENAI_BASE_URL" in page.environment_note.text()

    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    labels = [page.list.item(row).text() for row in range(page.list.count())]
    assert labels == ["work", "provider", "environment (read-only)"]
    _type(qtbot, page.url_edit, "http://localhost:11434/v1")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    saved = yaml.safe_load(_config_text())["providers"]
    assert [p["name"] for p in saved] == ["work", "provider"]


@pytest.mark.usefixtures("qasync_loop")
def test_the_only_model_of_the_provider_in_use_is_offered_without_a_click(
    qtbot: QtBot, make_dialog, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    llm_server.models = ["qwen2.5-coder:7b"]
    dialog = make_dialog()
    combo = dialog.models.model_combo
    qtbot.waitUntil(lambda: combo.count() == 1)
    assert combo.currentText() == "qwen2.5-coder:7b"
    assert dialog.providers.test_result.text() == ""  # quiet: no test result was asked for


@pytest.mark.usefixtures("qasync_loop")
def test_several_models_are_offered_but_none_is_chosen_for_the_person(
    qtbot: QtBot, make_dialog, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    llm_server.models = ["a-model", "b-model"]
    dialog = make_dialog()
    combo = dialog.models.model_combo
    qtbot.waitUntil(lambda: combo.count() == 2)
    assert combo.currentText() == ""


def test_a_new_provider_asks_for_its_address_kindly_and_the_form_never_jumps(
    qtbot: QtBot, make_dialog
) -> None:
    dialog = make_dialog()
    page = dialog.providers
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    assert not page.errors.is_marked(page.url_edit)  # nothing red before anything was typed
    assert dialog.summary.text() == "Enter the base URL of provider."
    assert not dialog.save_button.isEnabled()
    below = page.test_button.mapTo(dialog, page.test_button.rect().topLeft()).y()

    _type(qtbot, page.url_edit, "ftp://x")
    assert page.errors.message(page.url_edit) == "Must start with http:// or https://."
    qtbot.keyClick(page.url_edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(page.url_edit, Qt.Key.Key_Delete)
    assert page.errors.message(page.url_edit).startswith("Required.")
    assert "String should" not in dialog.summary.text() + page.errors.message(page.url_edit)

    _type(qtbot, page.url_edit, "http://localhost:11434/v1")
    assert not page.errors.is_marked(page.url_edit)
    assert page.test_button.mapTo(dialog, page.test_button.rect().topLeft()).y() == below


def test_search_shows_only_the_tabs_with_a_matching_setting(qtbot: QtBot, make_dialog) -> None:
    dialog = make_dialog()
    qtbot.keyClicks(dialog.search, "sandbox")
    shown = [
        dialog.tabs.tabText(i) for i in range(dialog.tabs.count()) if dialog.tabs.isTabVisible(i)
    ]
    assert "Tools" in shown
    assert "Providers" not in shown and "Appearance" not in shown
    current = dialog.tabs.currentWidget()
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) in shown
    marked = [hit.widget for hit in dialog._search.hits() if current.isAncestorOf(hit.widget)]
    assert marked and all(widget.property("settingsMatch") == "true" for widget in marked)
    assert any("sandbox" in widget.text().lower() for widget in marked)
    assert "match" in dialog.search_result.text()

    dialog.search.clear()
    assert all(dialog.tabs.isTabVisible(i) for i in range(dialog.tabs.count()))
    assert all(widget.property("settingsMatch") is None for widget in marked)

    qtbot.keyClicks(dialog.search, "theme")
    assert dialog.tabs.currentWidget() is dialog.appearance
    qtbot.keyClicks(dialog.search, " xyzzy")
    assert dialog.search_result.text() == "No setting matches"
