"""The window's menu bar: File, Edit, View, Run and Help, and the actions behind them.

Every action is also added to the window itself, so its shortcut works while the menu bar is
hidden (macOS full screen, a styled-away bar). The actions tests and other modules reach
(``window.save_action`` and friends) are returned in :class:`WindowActions`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from core import __version__
from gui.theme import icons
from gui.window.services import MenuCommands
from gui.window.views import VIEWS

EDIT_ACTIONS: tuple[tuple[str, QKeySequence.StandardKey, str], ...] = (
    ("&Undo", QKeySequence.StandardKey.Undo, "undo"),
    ("&Redo", QKeySequence.StandardKey.Redo, "redo"),
    ("", QKeySequence.StandardKey.UnknownKey, ""),
    ("Cu&t", QKeySequence.StandardKey.Cut, "cut"),
    ("&Copy", QKeySequence.StandardKey.Copy, "copy"),
    ("&Paste", QKeySequence.StandardKey.Paste, "paste"),
    ("", QKeySequence.StandardKey.UnknownKey, ""),
    ("Select &All", QKeySequence.StandardKey.SelectAll, "selectAll"),
)
"""(text, keys, method of the focused widget) — a blank text is a separator."""


@dataclass(frozen=True)
class WindowActions:
    """The menu actions the window keeps as attributes (the Edit and View items need no name)."""

    new: QAction
    save: QAction
    open_run: QAction
    settings: QAction
    quit: QAction
    new_run: QAction
    cancel_run: QAction
    shortcuts: QAction
    welcome: QAction
    about: QAction
    open_folder: QAction
    open_log_folder: QAction


def build_menus(window: QMainWindow, commands: MenuCommands) -> WindowActions:
    """Fill ``window``'s menu bar; each item calls one of ``commands`` (the window's public
    API)."""

    def action(
        text: str,
        shortcut: QKeySequence | None,
        slot: Callable[[], object],
        icon_name: str | None = None,
    ) -> QAction:
        return _action(window, text, shortcut, slot, icon_name)

    actions = WindowActions(
        new=action("&New agent…", QKeySequence("Ctrl+N"), commands.new_agent, "add"),
        save=action("&Save", QKeySequence("Ctrl+S"), commands.save, "save"),
        open_run=action(
            "&Open run or transcript…",
            QKeySequence("Ctrl+Shift+O"),
            commands.open_run_file,
            "folder",
        ),
        settings=action("Se&ttings…", QKeySequence("Ctrl+,"), commands.settings),
        quit=action("&Quit", QKeySequence("Ctrl+Q"), commands.quit),
        new_run=action("&New run…", QKeySequence("Ctrl+R"), commands.new_run, "nav-runs"),
        cancel_run=action("&Cancel run", QKeySequence("Ctrl+."), commands.cancel_run),
        shortcuts=action("&Keyboard shortcuts…", QKeySequence("Ctrl+/"), commands.shortcuts),
        welcome=action("&Welcome…", None, commands.welcome),
        about=action("&About Baton", None, lambda: show_about(window)),
        open_folder=action("Open &Folder…", None, commands.open_folder, "folder"),
        open_log_folder=action("Open &Log Folder", None, open_log_folder),
    )
    actions.quit.setMenuRole(QAction.MenuRole.QuitRole)
    actions.settings.setMenuRole(QAction.MenuRole.PreferencesRole)
    actions.about.setMenuRole(QAction.MenuRole.AboutRole)
    bar = window.menuBar()

    file_menu = bar.addMenu("&File")
    file_menu.addAction(actions.open_folder)
    recent_menu = file_menu.addMenu("Open &Recent")
    recent_menu.setObjectName("OpenRecentMenu")
    recent_menu.aboutToShow.connect(lambda: commands.fill_recent_menu(recent_menu))
    file_menu.addSeparator()
    file_menu.addActions([actions.new, actions.save, actions.open_run])
    file_menu.addSeparator()
    file_menu.addAction(actions.settings)
    file_menu.addSeparator()
    file_menu.addAction(actions.quit)

    edit_menu = bar.addMenu("&Edit")
    for text, key, method in EDIT_ACTIONS:
        if not text:
            edit_menu.addSeparator()
            continue
        edit_menu.addAction(action(text, QKeySequence(key), partial(edit_focused_widget, method)))

    view_menu = bar.addMenu("&View")
    for number, spec in enumerate(VIEWS, start=1):
        view_menu.addAction(
            action(
                spec.label,
                QKeySequence(f"Ctrl+{number}"),
                partial(commands.go_to_view, spec.key),
                spec.icon,
            )
        )

    run_menu = bar.addMenu("&Run")
    run_menu.addAction(actions.new_run)
    run_menu.addAction(actions.cancel_run)

    help_menu = bar.addMenu("&Help")
    help_menu.addAction(actions.shortcuts)
    help_menu.addAction(actions.welcome)
    help_menu.addAction(actions.open_log_folder)
    help_menu.addAction(actions.about)
    return actions


def _action(
    window: QWidget,
    text: str,
    shortcut: QKeySequence | None,
    slot: Callable[[], object],
    icon_name: str | None,
) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(shortcut)
    if icon_name:
        action.setIcon(icons.icon(icon_name))
    action.triggered.connect(lambda _checked=False: slot())
    window.addAction(action)  # shortcuts work even while the menu bar is hidden
    return action


def edit_focused_widget(method: str) -> None:
    """Edit menu items act on whatever widget has keyboard focus, if it can do them."""
    widget = QApplication.focusWidget()
    action = getattr(widget, method, None)
    if callable(action):
        action()


def open_log_folder() -> None:
    """Help ▸ Open Log Folder: where a double-clicked app writes what went wrong."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    from gui.app_log import log_folder

    QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_folder())))


def show_about(parent: QWidget) -> None:
    """Help ▸ About Baton."""
    from html import escape

    from PySide6.QtWidgets import QMessageBox

    QMessageBox.about(
        parent,
        "About Baton",
        f"<h3>Baton {escape(__version__)}</h3>"
        "<p>See and steer chains of LLM agents: definitions, presets, live runs and the "
        "documents your agents write.</p>"
        "<p>Agent files are plain Markdown with YAML frontmatter, shared with pi and "
        "Claude Code.</p>",
    )
