"""Settings ▸ Telemetry, driven as a person would: the switch and endpoint saved in
config.yaml, the headers (a receiver's key) only in the keyring and never shown again, a bad
address marked, and Send a test trace reaching a real OTLP/HTTP receiver with the headers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.config.settings import TELEMETRY_HEADERS_KEY, config_path, load_settings
from core.safety.redaction import Redactor
from core.safety.secrets import SERVICE
from core.telemetry.switch import telemetry_config
from gui.settings.settings_dialog import SettingsDialog
from tests.gui.test_gui_settings import MemoryKeyring, _type, memory_keyring  # noqa: F401

HEADERS = "authorization=Bearer otel-key-0123456789"


@pytest.fixture
def dialog(qtbot: QtBot, memory_keyring: MemoryKeyring) -> Iterator[SettingsDialog]:  # noqa: F811
    shown = SettingsDialog()
    qtbot.addWidget(shown)
    shown.show()
    shown.tabs.setCurrentWidget(shown.telemetry)
    yield shown
    shown.providers.shutdown()
    shown.telemetry.shutdown()


def test_the_switch_and_endpoint_are_saved_and_the_headers_only_in_the_keyring(
    qtbot: QtBot,
    dialog: SettingsDialog,
    memory_keyring: MemoryKeyring,  # noqa: F811
) -> None:
    page = dialog.telemetry
    assert dialog.tabs.tabText(dialog.tabs.currentIndex()) == "Telemetry"
    page.enabled.setChecked(True)
    _type(qtbot, page.endpoint, "http://127.0.0.1:6006")
    _type(qtbot, page.headers, HEADERS)
    assert page.headers.echoMode() == page.headers.EchoMode.Password
    with qtbot.waitSignal(dialog.saved):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    text = config_path().read_text(encoding="utf-8")
    assert "otel-key" not in text
    assert yaml.safe_load(text)["telemetry"] == {
        "enabled": True,
        "endpoint": "http://127.0.0.1:6006",
        "headers_in_keyring": True,
    }  # defaults (no content) are left out of the file
    assert memory_keyring.passwords[(SERVICE, TELEMETRY_HEADERS_KEY)] == HEADERS
    settings = load_settings()
    config = telemetry_config(settings, {})
    assert config is not None and config.traces_url == "http://127.0.0.1:6006/v1/traces"
    assert config.headers == {"authorization": "Bearer otel-key-0123456789"}
    assert "otel-key" not in Redactor.for_settings(settings).scrub(f"sent {HEADERS}")

    again = SettingsDialog()
    qtbot.addWidget(again)
    assert again.telemetry.headers.text() == ""
    assert "Stored in the system keyring" in again.telemetry.headers.placeholderText()
    again.telemetry.forget_headers.setChecked(True)
    assert again.save()
    assert (SERVICE, TELEMETRY_HEADERS_KEY) not in memory_keyring.passwords
    assert not load_settings().telemetry.headers_in_keyring


def test_a_bad_address_is_marked_and_save_waits(qtbot: QtBot, dialog: SettingsDialog) -> None:
    page = dialog.telemetry
    page.enabled.setChecked(True)
    assert page.errors.message(page.endpoint) == "Name the receiver's address."
    assert not dialog.save_button.isEnabled()
    _type(qtbot, page.endpoint, "127.0.0.1:6006")
    assert page.errors.message(page.endpoint) == "Must start with http:// or https://."
    assert page.errors.label_for(page.endpoint).isVisible()
    _type(qtbot, page.endpoint, "https://collector.example.com")
    assert dialog.save_button.isEnabled()


def test_the_environment_s_say_is_shown(
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,  # noqa: F811
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    shown = SettingsDialog()
    qtbot.addWidget(shown)
    assert "OTEL_EXPORTER_OTLP_ENDPOINT is set" in shown.telemetry.note.text()


@pytest.mark.otel
@pytest.mark.usefixtures("qasync_loop")
def test_send_a_test_trace_reaches_the_receiver_with_the_headers(
    qtbot: QtBot, dialog: SettingsDialog
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from tests.otlp_sink import OtlpSink

    page = dialog.telemetry
    with OtlpSink() as sink:
        _type(qtbot, page.endpoint, sink.endpoint)
        _type(qtbot, page.headers, HEADERS)
        qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.test_result.text().startswith("Sent"), timeout=60_000)
        spans = sink.wait_for(4)
    assert {s.name for s in spans} >= {"invoke_workflow telemetry test", "execute_tool ls"}
    assert sink.headers[0]["authorization"] == "Bearer otel-key-0123456789"
    trace = spans[0].trace_id
    assert trace in page.test_result.text()
    assert page.test_button.isEnabled()
