"""A light ↔ dark switch recolours what is already on screen: the run view's step panes and
header, notices, the gate panel, the Settings dialog's marks, and every monochrome icon."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget
from pytestqt.qtbot import QtBot

from core.safety.rule_store import RuleStore
from core.workspace.patch_lines import PatchLine
from gui.changes.patch_view import PatchText
from gui.run.run_view import RunView
from gui.run.step_items import NoticeItem
from gui.settings.settings_dialog import SettingsDialog
from gui.theme import icons, tone_color
from gui.theme.scheme import apply_scheme
from gui.window.main_window import MainWindow
from tests.gui.run_events import RunBuilder, failed_chain


@pytest.fixture(autouse=True)
def light_then_system(qapp: QApplication) -> Iterator[None]:
    apply_scheme(qapp, "light")
    yield
    apply_scheme(qapp, "system")


def _text(widget: QWidget) -> QColor:
    return widget.palette().color(QPalette.ColorRole.WindowText)


def _icon_color(icon: QIcon) -> QColor:
    """The colour of the icon's most opaque pixel (its strokes)."""
    image = icon.pixmap(24, 24).toImage()
    pixels = (image.pixelColor(x, y) for x in range(24) for y in range(24))
    return max(pixels, key=lambda color: color.alpha())


def test_the_run_view_follows_a_switch_to_dark_at_once(qtbot: QtBot, qapp: QApplication) -> None:
    view = RunView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    view.load_events(failed_chain())
    pane = view.pane(0)
    failed = next(p for p in view.panes() if p.phase.text() == "failed")
    view.gate_panel.show()  # made and shown when a gate waits (this replayed run has none)
    notices = [w for p in view.panes() for w in p.item_widgets() if isinstance(w, NoticeItem)]
    labels: list[tuple[QLabel, str]] = [
        (pane.model, "secondary"),
        (pane.usage, "secondary"),
        (pane.task, "secondary"),
        (failed.phase, "error"),
        (view.header.usage, "secondary"),
        (view.gate_panel.question, "waiting"),
    ]
    labels += [(notice, str(notice.property("textTone"))) for notice in notices]
    assert notices
    light = [_text(label) for label, _tone in labels]
    assert [c.name() for c in light] == [
        tone_color(qapp.palette(), tone).name() for _label, tone in labels
    ]

    apply_scheme(qapp, "dark")

    dark = qapp.palette()

    def follows(label: QLabel, tone: str) -> bool:
        return _text(label).name() == tone_color(dark, tone).name()

    for (label, tone), before in zip(labels, light, strict=True):
        qtbot.waitUntil(partial(follows, label, tone))
        assert _text(label) != before


def test_icons_already_made_are_drawn_in_the_new_text_colour(qapp: QApplication) -> None:
    icon = icons.icon("search")
    on_light = _icon_color(icon)
    apply_scheme(qapp, "dark")
    on_dark = _icon_color(icon)
    assert on_dark.lightness() > on_light.lightness() + 100  # dark strokes, then light ones
    assert on_dark.name() == qapp.palette().color(QPalette.ColorRole.WindowText).name()


def test_settings_follows_the_theme_picked_in_it(
    qtbot: QtBot, qapp: QApplication, tmp_path: Path
) -> None:
    """What the dialog already shows — a rule's effect, a marked field, a search mark — takes
    the colours of the theme picked on its Appearance page."""
    RuleStore().add(tmp_path, "deny", "Read(./.env)")
    dialog = SettingsDialog(path=tmp_path / "config.yaml")
    qtbot.addWidget(dialog)
    dialog.show()
    project = dialog.rules.tree.topLevelItem(0)
    rule = project.child(0) if project is not None else None
    assert rule is not None and rule.text(1) == "deny"
    red_on_light = rule.foreground(1).color()
    page = dialog.telemetry
    page.enabled.setChecked(True)  # no receiver named yet: marked
    problem = page.errors.label_for(page.endpoint)
    assert problem.property("textTone") == "error"

    dialog.tabs.setCurrentWidget(dialog.appearance)
    theme_choice = dialog.appearance.theme
    theme_choice.setCurrentIndex(theme_choice.findText("Dark"))

    dark = qapp.palette()
    assert rule.foreground(1).color().lightness() > red_on_light.lightness()
    assert _text(problem).name() == tone_color(dark, "error").name()
    dialog.reject()  # Cancel puts the previous theme back


def test_a_review_table_s_badges_follow_the_theme(qtbot: QtBot, qapp: QApplication) -> None:
    view = RunView()
    qtbot.addWidget(view)
    view.show()
    run = RunBuilder("20260101-000000-review")
    run.start("single", [("reviewer", "Review the change", "m")])
    run.step_started(0, "Review the change", "m")
    review = {"passed": False, "issues": [{"severity": "critical", "description": "Oops"}]}
    run.step_finished(0, "ok", output="Changes requested.", structured=review)
    run.run_finished("ok")
    view.load_events(run.events)
    pane = view.pane(0)
    qtbot.waitUntil(lambda: pane.review is not None)
    table = pane.review
    assert table is not None
    on_light = table.badge_color(0)
    apply_scheme(qapp, "dark")
    qtbot.waitUntil(lambda: table.badge_color(0).lightness() < on_light.lightness())


def test_a_patch_shown_is_drawn_again_in_the_new_theme(qtbot: QtBot, qapp: QApplication) -> None:
    text = PatchText()
    qtbot.addWidget(text)
    text.show()
    text.show_lines("a.py", [PatchLine("added", "x = 1", new=1)], unified=True)

    def added_background() -> QColor:
        return text.document().firstBlock().blockFormat().background().color()

    on_light = added_background()
    apply_scheme(qapp, "dark")
    qtbot.waitUntil(lambda: added_background().lightness() < on_light.lightness())
    assert text.kinds == ["added"]


def test_every_open_editor_recolours_its_text(
    qtbot: QtBot, qapp: QApplication, make_window: Callable[..., MainWindow]
) -> None:
    """Presets' YAML too, not only the Agents view's text (the window asks every view)."""
    window = make_window()
    window.go_to_view("presets")
    presets = window.presets_view
    found = presets.catalog.get("implement")
    assert found is not None and found.path is not None
    presets.open_path(Path(found.path))
    formats = presets.editor.highlighter.formats
    key_on_light = formats["key"].foreground().color()
    apply_scheme(qapp, "dark")
    qtbot.waitUntil(
        lambda: (
            presets.editor.highlighter.formats["key"].foreground().color().lightness()
            > key_on_light.lightness()
        )
    )
