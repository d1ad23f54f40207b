"""The first-run welcome panel: detection of Ollama (the scripted server stands in for it), pi
and claude, and the settings each choice writes."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from core.config.settings import Provider, Settings, config_path, load_settings, save_settings
from gui.settings.settings_dialog import SettingsDialog
from gui.window.welcome_panel import WelcomePanel, needs_welcome
from tests.llm_server import LLMServer

Which = Callable[[str], str | None]


@pytest.fixture
def make_panel(qtbot: QtBot) -> Iterator[Callable[..., WelcomePanel]]:
    panels: list[WelcomePanel] = []

    def make(ollama_url: str, which: Which = lambda name: None) -> WelcomePanel:
        panel = WelcomePanel(ollama_url=ollama_url, which=which)
        qtbot.addWidget(panel)
        panel.show()
        panel.start_detection()
        panels.append(panel)
        return panel

    yield make
    for panel in panels:
        panel.stop()


def test_needs_welcome_only_when_nothing_can_run(monkeypatch: pytest.MonkeyPatch) -> None:
    assert needs_welcome()
    save_settings(Settings(default_backend="claude"))
    assert not needs_welcome()
    save_settings(Settings(providers=[Provider(name="x", base_url="http://x/v1")]))
    assert not needs_welcome()
    save_settings(Settings())
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway/v1")
    assert not needs_welcome()
    monkeypatch.delenv("OPENAI_BASE_URL")
    config_path().write_text("providers: {broken", encoding="utf-8")
    assert not needs_welcome()  # a settings problem, shown elsewhere, not a first run


@pytest.mark.usefixtures("qasync_loop")
def test_a_local_ollama_is_found_and_one_click_configures_it(
    qtbot: QtBot, make_panel: Callable[..., WelcomePanel], llm_server: LLMServer
) -> None:
    llm_server.models = ["qwen3:8b", "llama3.2"]
    panel = make_panel(llm_server.base_url)
    assert panel.ollama_status.text().startswith("Looking at 127.0.0.1:")
    qtbot.waitUntil(lambda: not panel.detecting())
    assert "with 2 models: llama3.2, qwen3:8b" in panel.ollama_status.text()
    assert panel.use_ollama_button.isVisible()
    assert not panel.use_pi_button.isVisible() and not panel.use_claude_button.isVisible()

    with qtbot.waitSignal(panel.configured) as chosen:
        qtbot.mouseClick(panel.use_ollama_button, Qt.MouseButton.LeftButton)
    assert chosen.args == ["ollama"]
    settings = load_settings()
    assert settings.providers == [Provider(name="ollama", base_url=llm_server.base_url)]
    assert settings.default_provider == "ollama" and settings.default_model == "llama3.2"
    assert not panel.isVisible() and not needs_welcome()


@pytest.mark.usefixtures("qasync_loop")
def test_no_ollama_but_pi_on_path(
    qtbot: QtBot, make_panel: Callable[..., WelcomePanel], llm_server: LLMServer
) -> None:
    url = llm_server.base_url
    llm_server.stop()
    panel = make_panel(url, which={"pi": "/usr/local/bin/pi"}.get)
    assert panel.pi_status.text() == "Found: /usr/local/bin/pi (on PATH)"
    assert panel.claude_status.text() == "Not found on PATH or in the usual install folders."
    qtbot.waitUntil(lambda: not panel.detecting())
    assert panel.ollama_status.text().startswith("Not running at 127.0.0.1:")
    assert not panel.use_ollama_button.isVisible() and panel.use_pi_button.isVisible()

    with qtbot.waitSignal(panel.configured):
        qtbot.mouseClick(panel.use_pi_button, Qt.MouseButton.LeftButton)
    assert load_settings() == Settings(default_backend="pi")


@pytest.mark.usefixtures("qasync_loop")
def test_claude_code_and_open_settings(
    qtbot: QtBot, make_panel: Callable[..., WelcomePanel], llm_server: LLMServer
) -> None:
    panel = make_panel(llm_server.base_url, which={"claude": "/opt/claude"}.get)
    with qtbot.waitSignal(panel.openSettingsRequested):
        qtbot.mouseClick(panel.settings_button, Qt.MouseButton.LeftButton)
    assert panel.isVisible()
    with qtbot.waitSignal(panel.configured):
        qtbot.mouseClick(panel.use_claude_button, Qt.MouseButton.LeftButton)
    assert load_settings().default_backend == "claude"


# -- in the main window -----------------------------------------------------------------------


def test_the_window_opens_on_the_welcome_panel_beside_the_sidebar(
    qtbot: QtBot, make_window, dialogs
) -> None:
    window = make_window()
    panel = window.welcome_panel
    assert panel is not None and panel.isVisible()
    assert window.sidebar.isVisible() and window.agents_view.isVisible()
    qtbot.waitUntil(lambda: panel.ollama_status.text() != "")

    dialogs.answer("Cancel")
    with qtbot.waitSignal(window.settings_action.triggered):
        window.settings_action.trigger()
    qtbot.waitUntil(lambda: dialogs.pending() == 0)
    assert dialogs.seen == ["SettingsDialog"]
    assert panel.isVisible()  # cancelled: still nothing configured


def test_saving_a_provider_in_settings_dismisses_the_welcome_panel(
    qtbot: QtBot, make_window, dialogs
) -> None:
    window = make_window()
    assert window.welcome_panel is not None

    def add_provider(dialog: QWidget) -> None:
        assert isinstance(dialog, SettingsDialog)
        page = dialog.providers
        qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
        qtbot.keyClicks(page.url_edit, "http://127.0.0.1:9/v1")

    dialogs.answer("Save", before=add_provider)
    window.open_settings()
    qtbot.waitUntil(lambda: not window.welcome_panel.isVisible())
    assert load_settings().providers[0].base_url == "http://127.0.0.1:9/v1"
    assert "127.0.0.1:9" in window.model_label.text()


def test_a_configured_window_has_no_welcome_panel(make_window) -> None:
    save_settings(Settings(default_backend="pi"))
    assert make_window().welcome_panel is None


@pytest.mark.usefixtures("qasync_loop")
def test_nothing_found_is_said_plainly(
    qtbot: QtBot, make_panel: Callable[..., WelcomePanel], llm_server: LLMServer
) -> None:
    url = llm_server.base_url
    llm_server.stop()
    panel = make_panel(url)
    assert panel.summary.text().endswith("Looking for them on this computer…")
    qtbot.waitUntil(lambda: not panel.detecting())
    assert "None of them was found on this computer" in panel.summary.text()
    assert "pick one" not in panel.summary.text().lower()


def test_pi_and_claude_found_are_offered_by_name(
    make_panel: Callable[..., WelcomePanel],
) -> None:
    panel = make_panel("http://127.0.0.1:9/v1", which={"pi": "/p", "claude": "/c"}.get)
    assert "Found pi or Claude Code on this computer. Choose one" in panel.summary.text()


def test_not_now_hides_the_panel_and_the_window_remembers_it(qtbot: QtBot, make_window) -> None:
    window = make_window()
    panel = window.welcome_panel
    assert panel is not None and panel.isVisible()
    assert panel.height() < 200  # a strip above every view, not a page
    qtbot.mouseClick(panel.close_button, Qt.MouseButton.LeftButton)
    assert not panel.isVisible()
    again = make_window()
    assert again.welcome_panel is None
    again.welcome_action.trigger()
    assert again.welcome_panel is not None and again.welcome_panel.isVisible()


def test_choose_points_baton_at_a_program_and_says_where_it_is(
    qtbot: QtBot, make_panel: Callable[..., WelcomePanel], tmp_path: Path
) -> None:
    program = tmp_path / "somewhere" / "pi"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    # nothing on PATH; a chosen path is looked at where it is
    panel = make_panel(
        "unset://ollama", which=lambda name: shutil.which(name) if "/" in name else None
    )
    assert not panel.use_pi_button.isVisibleTo(panel)
    asked: list[str] = []

    def chooser(_parent: object, name: str) -> str:
        asked.append(name)
        return str(program)

    panel.choose_file = chooser
    panel.choose_pi_button.click()

    assert asked == ["pi"]
    assert load_settings().pi_path == str(program)  # what the pi backend runs
    assert panel.pi_status.text() == f"Found: {program} (chosen in Settings)"
    assert panel.use_pi_button.isVisibleTo(panel)
