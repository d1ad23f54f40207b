"""The typed-parameters form: one widget per type, defaults, pydantic validation, and the
values reaching the model as ``{param}`` substitutions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QWidget,
)
from pytestqt.qtbot import QtBot

from core.config.settings import save_settings
from core.definitions.agents import ParamSpec
from core.definitions.params import ParamsError, validate_params
from gui.window.main_window import MainWindow
from tests.gui.launching import (
    click,
    open_launch_dialog,
    type_into,
    wait_for_session,
    wait_until_finished,
)
from tests.llm_server import LLMServer, Reply

pytestmark = pytest.mark.usefixtures("qasync_loop")

WRITER = """---
name: writer
description: Writes short pieces
tools: read
params:
  tone: {type: enum, values: [plain, friendly, formal], default: plain, description: "voice"}
  words: {type: integer, default: 100}
  temperature: {type: number, default: 0.25}
  draft: {type: boolean, default: false, description: "Mark as a draft"}
  topic: {type: string, description: "What to write about"}
---
You write.
"""

EDITOR = """---
name: editor
description: Edits
params:
  tone: {type: enum, values: [strict, kind], default: kind}
  style-guide: {type: string, default: house}
---
You edit.
"""


@pytest.fixture(autouse=True)
def configured(llm_server: LLMServer) -> LLMServer:
    """A configured provider (also keeps the first-run panel from probing for Ollama)."""
    save_settings(llm_server.settings())
    return llm_server


@pytest.fixture
def agents(user_agents: Path) -> Path:
    (user_agents / "writer.md").write_text(WRITER, encoding="utf-8")
    (user_agents / "editor.md").write_text(EDITOR, encoding="utf-8")
    return user_agents


def test_the_form_follows_the_chosen_agents_and_substitutes_values(
    qtbot: QtBot, make_window: Callable[..., MainWindow], llm_server: LLMServer, agents: Path
) -> None:
    llm_server.queue(Reply.answer("Owls are quiet."))
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    dialog.set_ad_hoc("single", [])
    assert dialog.params_box.isHidden()  # the default first agent has no params
    row = dialog.steps_editor.rows()[0]
    row.agent.setCurrentText("writer")
    form = dialog.params_form
    assert not dialog.params_box.isHidden()
    assert form.names() == ["tone", "words", "temperature", "draft", "topic"]
    tone, words, temperature, draft, topic = (form.widget(n) for n in form.names())
    assert isinstance(tone, QComboBox) and tone.currentText() == "plain"
    assert [tone.itemText(i) for i in range(tone.count())] == ["plain", "friendly", "formal"]
    assert isinstance(words, QSpinBox) and words.value() == 100
    assert isinstance(temperature, QDoubleSpinBox) and temperature.value() == 0.25
    assert isinstance(draft, QCheckBox) and not draft.isChecked()
    assert draft.text() == "Mark as a draft"
    assert isinstance(topic, QLineEdit) and topic.placeholderText() == "What to write about"
    assert "Used by: writer" in tone.toolTip()

    type_into(
        qtbot,
        row.task,
        "Write {words} {tone} words about {topic}; draft={draft}; t={temperature}; keep {unknown}",
    )
    click(qtbot, dialog.run_button)
    assert dialog.error_text() == "Parameter topic: enter a value."

    type_into(qtbot, topic, "owls")
    tone.setCurrentText("friendly")
    words.setValue(42)
    click(qtbot, draft)
    qtbot.keyClick(dialog.run_button, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    session = wait_for_session(qtbot, window)
    assert wait_until_finished(qtbot, session) == "ok"
    assert session.request.params == {
        "tone": "friendly",
        "words": 42,
        "temperature": 0.25,
        "draft": True,
        "topic": "owls",
    }
    assert llm_server.requests[0].user_text.endswith(
        "Write 42 friendly words about owls; draft=true; t=0.25; keep {unknown}"
    )
    assert session.view.state().steps[0].task.startswith("Write 42 friendly words")


def test_values_survive_changing_agents_and_shared_names_are_merged(
    qtbot: QtBot, make_window: Callable[..., MainWindow], agents: Path
) -> None:
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    dialog.set_ad_hoc("chain", [])
    editor = dialog.steps_editor
    editor.rows()[0].agent.setCurrentText("writer")
    form = dialog.params_form
    topic = form.widget("topic")
    assert isinstance(topic, QLineEdit)
    type_into(qtbot, topic, "tides")
    click(qtbot, editor.add_button)
    editor.rows()[1].agent.setCurrentText("editor")
    # "tone" is declared by both: the first declaration (writer's) is the field.
    assert form.names() == ["tone", "words", "temperature", "draft", "topic", "style-guide"]
    assert "Used by: writer, editor" in form.widget("tone").toolTip()
    assert form.values()["topic"] == "tides"
    assert form.values()["style-guide"] == "house"

    editor.rows()[0].agent.setCurrentText("scout")
    assert form.names() == ["tone", "style-guide"]
    tone = form.widget("tone")
    assert isinstance(tone, QComboBox) and tone.currentText() == "kind"
    editor.rows()[0].agent.setCurrentText("writer")
    assert form.values()["topic"] == "tides"  # typed values are remembered by name
    dialog.close()


def test_the_pydantic_model_checks_types() -> None:
    specs = {
        "mode": ParamSpec(type="enum", values=["a", "b"]),
        "count": ParamSpec(type="integer", default=1),
        "ratio": ParamSpec(type="number", default=0.5),
        "on": ParamSpec(type="boolean"),
        "name-x": ParamSpec(default="x"),
    }
    assert validate_params(specs, {"mode": "b", "count": 2, "ratio": 1, "on": True}) == {
        "mode": "b",
        "count": 2,
        "ratio": 1.0,
        "on": True,
        "name-x": "x",
    }
    with pytest.raises(ParamsError) as error:
        validate_params(specs, {"mode": "c", "count": "many"})
    assert str(error.value).startswith(
        "parameter mode: Input should be 'a' or 'b'; parameter count: Input should"
    )


def test_tab_reaches_the_parameter_form_before_cancel_and_run(
    qtbot: QtBot, make_window: Callable[..., MainWindow], agents: Path
) -> None:
    presets = agents.parent / "presets"
    presets.mkdir(exist_ok=True)
    (presets / "essay.yaml").write_text(
        "name: essay\ndescription: An essay\nmode: single\n"
        "steps:\n  - agent: writer\n    task: Write about {topic}\n",
        encoding="utf-8",
    )
    window = make_window()
    dialog = open_launch_dialog(qtbot, window)
    assert dialog.select_preset("essay")
    form = dialog.params_form
    qtbot.waitUntil(lambda: bool(form.names()))
    fields = [form.widget(name) for name in form.names()]
    dialog.args_edit.setFocus()
    qtbot.waitUntil(dialog.args_edit.hasFocus)
    seen: list[QWidget] = []
    for _ in range(60):  # a person pressing Tab through the dialog
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        focused = QApplication.focusWidget()
        assert focused is not None
        seen.append(focused)
        if focused is dialog.run_button:
            break
    reached = [seen.index(field) for field in fields if field in seen]
    assert len(reached) == len(fields), "every parameter field is reached by Tab"
    assert max(reached) < seen.index(dialog.cancel_button) < seen.index(dialog.run_button)
    assert max(reached) < seen.index(dialog.folder_edit)  # where the form stands: above Options
