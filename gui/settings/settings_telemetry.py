"""Settings page: runs exported as OpenTelemetry traces (:mod:`core.telemetry`).

The switch, the OTLP/HTTP endpoint, the headers a hosted receiver wants (usually its API key:
a secret, so it goes to the system keyring when the dialog saves, never to ``config.yaml``,
and the field never shows what is stored), whether message content goes along (redacted),
and **Send a test trace**, which sends a one-step trace from a worker thread and says where
it went or why it did not.

What the environment already decides is said on the page: ``OTEL_EXPORTER_OTLP_ENDPOINT`` turns
traces on without the switch, ``OTEL_SDK_DISABLED=true`` turns every export off, and without
the ``otel`` extra nothing can be sent at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.config.settings import Settings
from core.safety.secrets import keyring_available, stored_telemetry_headers
from core.telemetry.switch import TelemetryConfig, parse_headers, traces_url
from gui import theme
from gui.settings.settings_fields import ErrorList
from gui.settings.settings_pages import MARGINS, Page
from gui.widgets import PlainLabel

STORED = "Stored in the system keyring (type to replace, clear the switch below to forget)"


def sdk_installed() -> bool:
    """Whether the ``otel`` extra is there, without importing it."""
    try:
        return importlib.util.find_spec("opentelemetry.sdk") is not None
    except ModuleNotFoundError:
        return False


class TelemetryPage(Page):
    """Settings ▸ Telemetry (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.keyring_ok = keyring_available()
        self.headers_stored = False
        """The keyring holds headers from an earlier save."""
        self._test_task: asyncio.Task[None] | None = None

        self.enabled = QCheckBox("Export every run as an OpenTelemetry trace")
        self.endpoint = QLineEdit()
        self.endpoint.setObjectName("TelemetryEndpoint")
        self.endpoint.setPlaceholderText("http://127.0.0.1:6006 (OTLP over HTTP)")
        self.headers = QLineEdit()
        self.headers.setObjectName("TelemetryHeaders")
        self.headers.setEchoMode(QLineEdit.EchoMode.Password)
        self.headers.setEnabled(self.keyring_ok)
        self.forget_headers = QCheckBox("Forget the stored headers")
        self.capture = QCheckBox("Include messages, tasks and tool arguments (redacted)")
        self.note = QLabel()
        self.note.setObjectName("Secondary")
        self.note.setWordWrap(True)
        self.test_button = QPushButton("Send a test trace")
        self.test_button.clicked.connect(self._start_test)
        self.test_result = PlainLabel()
        self.test_result.setObjectName("TestResult")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("", self.enabled)
        self.errors.add_row(form, "Endpoint", self.endpoint)
        self.errors.add_row(form, "Headers", self.headers)
        form.addRow("", self.forget_headers)
        form.addRow("", self.capture)
        test_row = QVBoxLayout()
        test_row.setSpacing(4)
        test_row.addWidget(self.test_button, 0, Qt.AlignmentFlag.AlignLeft)
        test_row.addWidget(self.test_result)
        form.addRow("", test_row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addStretch(1)

        for box in (self.enabled, self.capture, self.forget_headers):
            box.toggled.connect(lambda _on: self.changed.emit())
        for edit in (self.endpoint, self.headers):
            edit.textChanged.connect(lambda _text: self.changed.emit())

    # -- the page protocol ----------------------------------------------------------------

    def load(self, settings: Settings) -> None:
        chosen = settings.telemetry
        self.enabled.setChecked(chosen.enabled)
        self.endpoint.setText(chosen.endpoint or "")
        self.capture.setChecked(chosen.capture_content)
        self.headers.clear()
        self.headers_stored = chosen.headers_in_keyring
        self.forget_headers.setChecked(False)
        self.forget_headers.setVisible(self.headers_stored)
        if not self.keyring_ok:
            placeholder = "No system keyring: see below"
        elif self.headers_stored:
            placeholder = STORED
        else:
            placeholder = "name=value,name=value (kept in the system keyring)"
        self.headers.setPlaceholderText(placeholder)
        self.note.setText(self._environment_note())

    def contribute(self, data: dict[str, Any]) -> None:
        data["telemetry"] = {
            "enabled": self.enabled.isChecked(),
            "endpoint": self.endpoint.text().strip() or None,
            "headers_in_keyring": self._headers_kept(),
            "capture_content": self.capture.isChecked(),
        }

    def extra_errors(self) -> ErrorList:
        errors: ErrorList = []
        endpoint = self.endpoint.text().strip()
        if endpoint and not endpoint.startswith(("http://", "https://")):
            errors.append((("telemetry", "endpoint"), "Must start with http:// or https://."))
        elif self.enabled.isChecked() and not endpoint:
            errors.append((("telemetry", "endpoint"), "Name the receiver's address."))
        typed = self.headers.text().strip()
        if typed and not parse_headers(typed):
            errors.append((("telemetry", "headers"), "Write headers as name=value,name=value."))
        return errors

    def field_for(self, loc: tuple[Any, ...]) -> QWidget | None:
        if loc[:2] == ("telemetry", "endpoint"):
            return self.endpoint
        if loc[:2] == ("telemetry", "headers"):
            return self.headers
        return None

    # -- the headers secret ---------------------------------------------------------------

    def _headers_kept(self) -> bool:
        if self.headers.text().strip():
            return True
        return self.headers_stored and not self.forget_headers.isChecked()

    def header_changes(self) -> tuple[str | None, bool]:
        """What saving does with the keyring: (headers to store, whether to forget them)."""
        typed = self.headers.text().strip()
        if typed:
            return typed, False
        return None, self.headers_stored and self.forget_headers.isChecked()

    def headers_saved(self) -> None:
        """The dialog stored (or forgot) the headers: the field forgets what was typed."""
        self.headers_stored = self._headers_kept()
        self.headers.clear()

    # -- send a test trace ----------------------------------------------------------------

    def _config(self) -> TelemetryConfig | str:
        endpoint = self.endpoint.text().strip()
        if not endpoint.startswith(("http://", "https://")):
            return "Enter the receiver's address first (http://host:port)."
        typed = self.headers.text().strip()
        headers: dict[str, str] | None = parse_headers(typed) if typed else None
        if headers is None and self.headers_stored and not self.forget_headers.isChecked():
            stored = stored_telemetry_headers()
            headers = parse_headers(stored) if stored else None
        return TelemetryConfig(traces_url(endpoint), headers, self.capture.isChecked())

    def _start_test(self) -> None:
        config = self._config()
        if isinstance(config, str):
            self._show_result(config, ok=False)
            return
        if not sdk_installed():
            self._show_result(MISSING_SDK, ok=False)
            return
        self.test_button.setEnabled(False)
        theme.set_tone(self.test_result, None)
        self.test_result.setText(f"Sending to {config.describe()}…")
        self._test_task = asyncio.ensure_future(self._test(config))

    async def _test(self, config: TelemetryConfig) -> None:
        from core.telemetry.export import TelemetryUnavailable, send_test_trace

        try:
            trace = await asyncio.to_thread(send_test_trace, config)
        except (TelemetryUnavailable, OSError, ValueError) as error:
            self._show_result(f"Not sent: {error}", ok=False)
        else:
            self._show_result(
                f"Sent a test trace to {config.describe()} (trace id {trace}).", ok=True
            )
        finally:
            with contextlib.suppress(RuntimeError):  # the page may be gone already
                self.test_button.setEnabled(True)

    def test_running(self) -> bool:
        return self._test_task is not None and not self._test_task.done()

    def shutdown(self) -> None:
        if self._test_task is not None:
            self._test_task.cancel()

    # -- helpers --------------------------------------------------------------------------

    def _show_result(self, text: str, *, ok: bool) -> None:
        theme.set_tone(self.test_result, "ok" if ok else "error")
        self.test_result.setText(text)

    def _environment_note(self) -> str:
        notes: list[str] = []
        if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            notes.append("OTEL_SDK_DISABLED=true in Baton's environment: nothing is exported.")
        for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
            if os.environ.get(name):
                notes.append(
                    f"{name} is set in Baton's environment: runs are exported there while the "
                    "switch above is off."
                )
                break
        if not self.keyring_ok:
            notes.append(
                "No system keyring on this machine: put headers in OTEL_EXPORTER_OTLP_HEADERS "
                "instead."
            )
        if not sdk_installed():
            notes.append(MISSING_SDK)
        notes.append(
            "Traces follow the OpenTelemetry GenAI conventions: the run, each step, each model "
            "request and each tool call, with who decided. Saved runs can be sent later: baton "
            "runs send-traces."
        )
        return "\n\n".join(notes)


MISSING_SDK = "The OpenTelemetry SDK is not installed: pip install 'baton[otel]'."
