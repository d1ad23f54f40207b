"""The launch dialog says which model each step will use, and keeps Run off (saying why) when
a step of Baton's own loop would have none — checked against the scripted server's model list."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytestqt.qtbot import QtBot

from core.config.settings import Settings, save_settings
from gui.window.main_window import MainWindow
from tests.gui.launching import open_launch_dialog, pick_preset, type_into
from tests.llm_server import LLMServer

pytestmark = pytest.mark.usefixtures("qasync_loop")
Window = Callable[..., MainWindow]


def test_the_providers_only_model_is_named_for_each_step(
    qtbot: QtBot, make_window: Window, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)  # the README's quickest set-up
    llm_server.models = ["qwen2.5-coder:7b"]
    dialog = open_launch_dialog(qtbot, make_window())
    assert dialog.preset_list.hasFocus()  # typing goes somewhere visible at once
    pick_preset(qtbot, dialog, "scout-and-plan")
    qtbot.waitUntil(lambda: "the server's only model" in dialog.step_models.text())
    assert dialog.step_models.text().splitlines() == [
        "1. scout — qwen2.5-coder:7b (the server's only model)",
        "2. planner — qwen2.5-coder:7b (the server's only model)",
    ]
    type_into(qtbot, dialog.args_edit, "x")
    assert dialog.run_button.isEnabled()


def test_several_models_and_none_chosen_keeps_run_off_until_one_is(
    qtbot: QtBot, make_window: Window, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    llm_server.models = ["alpha", "beta", "gamma"]
    dialog = open_launch_dialog(qtbot, make_window())
    pick_preset(qtbot, dialog, "scout-and-plan")
    type_into(qtbot, dialog.args_edit, "x")
    qtbot.waitUntil(lambda: not dialog.run_button.isEnabled())
    assert dialog.error_text().startswith(
        "Step 1 (scout) has no model: the provider serves 3 models"
    )
    assert dialog.step_models.text().splitlines()[0] == "1. scout — no model"

    type_into(qtbot, dialog.model_combo.lineEdit(), "beta")
    assert dialog.run_button.isEnabled()
    assert dialog.error_text() == ""
    assert dialog.step_models.text().splitlines()[0] == "1. scout — beta (chosen for this run)"


def test_a_configured_default_model_is_shown_as_such(
    qtbot: QtBot, make_window: Window, llm_server: LLMServer
) -> None:
    save_settings(llm_server.settings(default_model="house-model"))
    dialog = open_launch_dialog(qtbot, make_window())
    pick_preset(qtbot, dialog, "scout-and-plan")
    assert dialog.step_models.text().splitlines()[0] == (
        "1. scout — house-model (the default model)"
    )


def test_no_provider_at_all_says_so_before_run_is_pressed(
    qtbot: QtBot, make_window: Window
) -> None:
    save_settings(Settings(default_backend="openai"))
    dialog = open_launch_dialog(qtbot, make_window())
    pick_preset(qtbot, dialog, "scout-and-plan")
    type_into(qtbot, dialog.args_edit, "x")
    assert not dialog.run_button.isEnabled()
    assert dialog.error_text().startswith("No model provider is configured")
