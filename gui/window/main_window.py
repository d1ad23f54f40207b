"""Baton's main window: sidebar, the views in a stack, menus and the status bar (DESIGN §8).

Views are listed once, in :data:`VIEWS`. Only the view shown first is built (and its modules
imported) while the window opens; each other view is built the first time it is shown or
asked for (``window.runs_view`` and friends build it on access), so start-up pays for one
view, not four. The window can be built without :func:`gui.app.run_app` (tests do), given a
working folder and a QSettings to use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence, QPaintEvent
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core import __version__
from gui import theme
from gui.theme import icons
from gui.widgets.prompts import Prompts
from gui.window.sidebar import Sidebar

if TYPE_CHECKING:  # imported where first used: start-up imports only the first view's modules
    from gui.definitions.agents_view import AgentsView
    from gui.definitions.presets_view import PresetsView
    from gui.documents.documents_view import DocumentsView
    from gui.inbox.inbox_model import InboxModel
    from gui.launch.launch_dialog import LaunchDialog, LaunchInputs
    from gui.run.run_controller import RunController
    from gui.run.runs_view import RunsView
    from gui.settings.settings_dialog import SettingsDialog
    from gui.window.shortcuts_dialog import ShortcutsDialog
    from gui.window.welcome_panel import WelcomePanel


@dataclass(frozen=True)
class ViewSpec:
    key: str
    label: str
    icon: str
    make: Callable[[MainWindow], QWidget]


def _agents(window: MainWindow) -> QWidget:
    from gui.definitions.agents_view import AgentsView

    # The view the window opens on reads its files off the GUI thread, once the window is up.
    view = AgentsView(
        window.prompts, window.settings, window.working_folder, read_later=window.opening
    )
    if window.opening:
        window.after_first_paint.append(view.read_in_background)
    view.dirtyChanged.connect(window._update_title)
    return view


def _presets(window: MainWindow) -> QWidget:
    from gui.definitions.presets_view import PresetsView

    view = PresetsView(window.prompts, window.settings, window.working_folder)
    view.runRequested.connect(window.open_launch_dialog)
    view.dirtyChanged.connect(window._update_title)
    return view


def _runs(window: MainWindow) -> QWidget:
    from gui.run.runs_view import RunsView

    view = RunsView(window.run_controller)
    view.runOpened.connect(lambda _page: window.show_view("runs"))
    view.history.batchRequested.connect(lambda record: window.show_batch(record.batch_id))
    return view


def _documents(window: MainWindow) -> QWidget:
    from gui.documents.documents_view import DocumentsView

    view = DocumentsView(prompts=window.prompts)
    view.dirtyChanged.connect(window._update_title)
    view.openRunRequested.connect(window.open_run_by_id)
    return view


def _batches(window: MainWindow) -> QWidget:
    from gui.batch.batch_view import BatchView

    view = BatchView(responder=window.run_controller.approvals)
    view.openRunRequested.connect(window.open_run_by_id)
    return view


def _inbox(window: MainWindow) -> QWidget:
    from gui.inbox.inbox_view import InboxView

    return InboxView(window.inbox)


VIEWS: list[ViewSpec] = [
    ViewSpec("agents", "Agents", "nav-agents", _agents),
    ViewSpec("presets", "Presets", "nav-presets", _presets),
    ViewSpec("runs", "Runs", "nav-runs", _runs),
    ViewSpec("documents", "Documents", "nav-documents", _documents),
    ViewSpec("batches", "Batches", "nav-batches", _batches),
    ViewSpec("inbox", "Inbox", "nav-inbox", _inbox),
]
"""The views in sidebar order, one line each. The views for "agents", "presets" and "runs" must
be an AgentsView, a PresetsView and a RunsView."""


def model_status() -> tuple[str, str]:
    """(short text, tooltip) describing the active provider and model from settings."""
    from core.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as error:
        return "Settings problem: config.yaml could not be read", str(error)
    provider = settings.provider()
    model = settings.default_model
    if provider is None and model is None:
        return "No model configured", "Set a provider and default_model in config.yaml."
    where = f"{provider.name} · {provider.base_url}" if provider else "no provider"
    return f"{where} · {model or 'no default model'}", "Active provider and default model"


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


class MainWindow(QMainWindow):
    prompts: Prompts

    def __init__(
        self,
        working_folder: Path | None = None,
        settings: QSettings | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("MainWindow")
        self.setWindowTitle("Baton")
        self.setWindowIcon(icons.app_icon())
        self.settings = settings if settings is not None else QSettings()
        self.initial_folder = Path(working_folder or Path.cwd())
        self.prompts = Prompts(self)
        self._theme_key = ""
        self._apply_style()
        self._run_controller: RunController | None = None
        self._inbox: InboxModel | None = None
        self._launch_dialog: LaunchDialog | None = None
        self._last_launch: LaunchInputs | None = None
        self._working_folder = self.initial_folder
        self.opening = True
        """True while the window is being built (see :data:`VIEWS`' factories)."""
        self.after_first_paint: list[Callable[[], None]] = [self._first_painted]
        """Called in turn, from the event loop, once the window has painted: start-up work
        its first picture does not need (settings for the status bar and the welcome panel,
        listing agents), so the window is on screen while it happens."""
        self._painted = False
        self._started = False

        self.sidebar = Sidebar()
        self.stack = QStackedWidget()
        self.views: dict[str, QWidget] = {}
        """The views built so far, by key (see :meth:`view`)."""
        for spec in VIEWS:
            self.stack.addWidget(QWidget())  # a stand-in until the view is first shown
            self.sidebar.add_entry(spec.label, spec.icon)
        self.sidebar.currentChanged.connect(self._show_index)
        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.sidebar)
        self._content = QVBoxLayout()  # the first-run welcome banner sits above the views
        self._content.setSpacing(0)
        self.welcome_panel: WelcomePanel | None = None  # decided after the first paint
        self._content.addWidget(self.stack, 1)
        layout.addLayout(self._content, 1)
        self.setCentralWidget(central)
        self._build_menus()
        self._build_status_bar()
        self._restore_state()
        self.opening = False

    # -- public API ----------------------------------------------------------------------

    def view(self, key: str) -> QWidget:
        """The view ``key``, built (and put in the stack) the first time it is asked for."""
        built = self.views.get(key)
        if built is not None:
            return built
        index = [spec.key for spec in VIEWS].index(key)
        widget = VIEWS[index].make(self)
        self.views[key] = widget
        stand_in = self.stack.widget(index)
        current = self.stack.currentIndex()
        self.stack.insertWidget(index, widget)
        if stand_in is not None:
            self.stack.removeWidget(stand_in)
            stand_in.deleteLater()
        self.stack.setCurrentIndex(current)
        if key == "agents":
            widget.restore_state()  # type: ignore[attr-defined]
        return widget

    def has_started(self) -> bool:
        """True once the work deferred past the first paint was done (see
        :attr:`after_first_paint`): the status bar names the model, the welcome panel is
        shown when needed, the first view is listing its files."""
        return self._started

    @property
    def agents_view(self) -> AgentsView:
        return self.view("agents")  # type: ignore[return-value]

    @property
    def presets_view(self) -> PresetsView:
        return self.view("presets")  # type: ignore[return-value]

    @property
    def runs_view(self) -> RunsView:
        return self.view("runs")  # type: ignore[return-value]

    @property
    def documents_view(self) -> DocumentsView:
        return self.view("documents")  # type: ignore[return-value]

    @property
    def run_controller(self) -> RunController:
        """Runs launched from this window (made on first use: it brings in the backends)."""
        if self._run_controller is None:
            from gui.inbox.inbox_model import InboxModel
            from gui.run.run_controller import RunController

            controller = RunController(self)
            self._run_controller = controller
            controller.sessionStarted.connect(self._session_started)
            controller.notifier.opened.connect(self.focus_run_step)
            self._inbox = InboxModel(controller)
            self._inbox.changed.connect(self._waiting_changed)
            self._inbox.openRequested.connect(self.focus_run_step)
        return self._run_controller

    @property
    def inbox(self) -> InboxModel:
        """What waits for the person across the window's runs (made with the controller)."""
        self.run_controller  # noqa: B018 - makes the inbox with it
        assert self._inbox is not None
        return self._inbox

    def focus_run_step(self, run_id: str, step: int) -> None:
        """Show ``step`` of run ``run_id`` — live or saved — highlighted (an inbox item or a
        notification was opened)."""
        session = self.run_controller.session(run_id)
        if session is None:
            self.open_run_by_id(run_id, step)
            return
        page = self.runs_view.add_session(session)
        self.runs_view.tabs.setCurrentWidget(page)
        self.show_view("runs")
        page.view.focus_step(step)

    @property
    def working_folder(self) -> Path:
        return self._working_folder

    @working_folder.setter
    def working_folder(self, folder: Path) -> None:
        self._working_folder = Path(folder)
        for key in ("agents", "presets"):
            if key in self.views:
                self.views[key].working_folder = Path(folder)  # type: ignore[attr-defined]
        self._update_status()

    def open_run_by_id(self, run_id: str, step: int = -1, call_id: str = "") -> None:
        """Show a saved run — open or not — on ``step`` (0-based; -1: the top) and its tool
        call ``call_id``, highlighted: the documents' provenance links land here."""
        from core.runs import RunIndex

        record = RunIndex().get(run_id)
        if record is None:
            self.statusBar().showMessage(f"Run {run_id} is no longer in the history.", 8000)
            return
        page = self.runs_view.open_record(record)
        self.show_view("runs")
        if step >= 0:
            page.view.focus_step(step, call_id or None)

    def show_batch(self, batch_id: str | None) -> None:
        """Show a batch in the Batches view (History's "Show its batch")."""
        if batch_id is None:
            self.statusBar().showMessage("This run is not part of a batch.", 8000)
            return
        self.show_view("batches")
        self.view("batches").choose(batch_id)  # type: ignore[attr-defined]

    def show_view(self, key: str) -> None:
        self.sidebar.set_current([spec.key for spec in VIEWS].index(key))

    def current_view(self) -> str:
        return VIEWS[self.stack.currentIndex()].key

    def refresh_status(self) -> None:
        self._update_status()

    def open_launch_dialog(self, preset: str | None = None) -> LaunchDialog:
        """The launch dialog (one at a time, not modal), on ``preset`` when given."""
        from gui.launch.launch_dialog import LaunchDialog

        dialog = self._launch_dialog
        if dialog is None or not dialog.isVisible():
            dialog = LaunchDialog(self.run_controller, self.working_folder, self, preset=preset)
            if self._last_launch is not None:
                dialog.restore(self._last_launch)  # what was run last, ready to tweak
                if preset is not None:
                    dialog.select_preset(preset)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.destroyed.connect(lambda _obj=None: setattr(self, "_launch_dialog", None))
            dialog.launched.connect(
                lambda _session, d=dialog: setattr(self, "_last_launch", d.inputs())
            )
            self._launch_dialog = dialog
        elif preset is not None:
            dialog.select_preset(preset)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def open_run_file(self) -> None:
        """File ▸ Open run or transcript…"""
        self.show_view("runs")
        self.runs_view.open_file_dialog()

    def open_settings(self) -> SettingsDialog:
        """The settings dialog, window-modal via ``open()``: no nested event loop, so running
        steps and its own Test connection keep going."""
        from gui.settings.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self)
        dialog.saved.connect(self._settings_saved)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    # -- building ------------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.new_action = self._action(
            "&New agent…", QKeySequence("Ctrl+N"), self._new_agent, "add"
        )
        self.save_action = self._action("&Save", QKeySequence("Ctrl+S"), self._save_current, "save")
        self.open_run_action = self._action(
            "&Open run or transcript…", QKeySequence("Ctrl+Shift+O"), self.open_run_file, "folder"
        )
        self.quit_action = self._action("&Quit", QKeySequence("Ctrl+Q"), self.close)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        file_menu.addAction(self.new_action)
        file_menu.addAction(self.save_action)
        file_menu.addAction(self.open_run_action)
        self.settings_action = self._action(
            "Se&ttings…", QKeySequence("Ctrl+,"), self.open_settings
        )
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        file_menu.addSeparator()
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        edit_menu = self.menuBar().addMenu("&Edit")
        for text, key, method in EDIT_ACTIONS:
            if not text:
                edit_menu.addSeparator()
                continue
            action = self._action(text, QKeySequence(key), lambda m=method: self._edit(m))
            edit_menu.addAction(action)

        view_menu = self.menuBar().addMenu("&View")
        for number, spec in enumerate(VIEWS, start=1):
            action = self._action(
                spec.label,
                QKeySequence(f"Ctrl+{number}"),
                lambda _=False, key=spec.key: self._go_to_view(key),
                spec.icon,
            )
            view_menu.addAction(action)

        run_menu = self.menuBar().addMenu("&Run")
        self.new_run_action = self._action(
            "&New run…", QKeySequence("Ctrl+R"), self.open_launch_dialog, "nav-runs"
        )
        run_menu.addAction(self.new_run_action)
        self.cancel_run_action = self._action(
            "&Cancel run", QKeySequence("Ctrl+."), self.cancel_current_run
        )
        run_menu.addAction(self.cancel_run_action)

        help_menu = self.menuBar().addMenu("&Help")
        self.shortcuts_action = self._action(
            "&Keyboard shortcuts…", QKeySequence("Ctrl+/"), self.show_shortcuts
        )
        help_menu.addAction(self.shortcuts_action)
        self.welcome_action = self._action("&Welcome…", None, self.show_welcome)
        help_menu.addAction(self.welcome_action)
        self.about_action = self._action("&About Baton", None, self._about)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        help_menu.addAction(self.about_action)

    def _action(
        self,
        text: str,
        shortcut: QKeySequence | None,
        slot: Callable[..., object],
        icon_name: str | None = None,
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        if icon_name:
            action.setIcon(icons.icon(icon_name))
        action.triggered.connect(lambda _checked=False: slot())
        self.addAction(action)  # shortcuts work even while the menu bar is hidden
        return action

    def _build_status_bar(self) -> None:
        self.model_icon = QLabel()
        self.model_icon.setPixmap(icons.pixmap("model", 14))
        self.model_label = QLabel()
        self.model_label.setObjectName("ModelStatus")
        self.folder_label = QLabel()
        self.folder_label.setObjectName("FolderStatus")
        bar = self.statusBar()
        bar.setSizeGripEnabled(True)
        bar.addWidget(self.model_icon)
        bar.addWidget(self.model_label, 1)
        bar.addPermanentWidget(self.folder_label)
        self._update_folder()  # the model (settings: pydantic, yaml) after the first paint

    # -- state ---------------------------------------------------------------------------

    def _restore_state(self) -> None:
        geometry = self.settings.value("main/geometry")
        if isinstance(geometry, QByteArray | bytes) and self.restoreGeometry(QByteArray(geometry)):
            pass
        else:
            self.resize(1200, 760)
            screen = QGuiApplication.primaryScreen()
            if screen is not None:
                frame = self.frameGeometry()
                frame.moveCenter(screen.availableGeometry().center())
                self.move(frame.topLeft())
        state = self.settings.value("main/state")
        if isinstance(state, QByteArray | bytes):
            self.restoreState(QByteArray(state))
        view = self.settings.value("main/view", "agents")
        self.show_view(str(view) if view in [spec.key for spec in VIEWS] else "agents")

    def save_state(self) -> None:
        self.settings.setValue("main/geometry", self.saveGeometry())
        self.settings.setValue("main/state", self.saveState())
        self.settings.setValue("main/view", self.current_view())
        if "agents" in self.views:
            self.agents_view.save_state()
        self.settings.sync()

    # -- Qt overrides --------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        editors = [self.views[k] for k in ("agents", "presets", "documents") if k in self.views]
        for view in editors:
            if not view.maybe_discard_changes():  # type: ignore[attr-defined]
                event.ignore()
                return
        controller = self._run_controller
        if controller is not None and not controller.confirm_close():
            event.ignore()  # it closes the window itself once cancelled runs have ended
            return
        self.save_state()
        for view in editors:
            view.shutdown()  # type: ignore[attr-defined]
        if controller is not None:
            controller.shutdown()
        if self._launch_dialog is not None:
            self._launch_dialog.close()
        event.accept()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if not self._painted:  # the window paints before its children: this is the first
            self._painted = True
            QTimer.singleShot(0, self._run_after_first_paint)  # after this paint, not in it

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        kind = event.type()
        if kind in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_style()
        elif kind == QEvent.Type.ActivationChange and self.isActiveWindow() and self.has_started():
            self._update_status()  # config.yaml may have been edited meanwhile

    # -- private -------------------------------------------------------------------------

    def _apply_style(self) -> None:
        """(Re)apply the style sheet when the palette's colours changed (dark/light switch)."""
        palette = self.palette()
        key = "|".join(
            palette.color(role).name()
            for role in (
                palette.ColorRole.Window,
                palette.ColorRole.Text,
                palette.ColorRole.Highlight,
            )
        )
        if key == self._theme_key:
            return
        self._theme_key = key
        self.setStyleSheet(theme.stylesheet(palette))
        if "agents" in getattr(self, "views", {}):
            self.agents_view.refresh_colors()

    def _run_after_first_paint(self) -> None:
        self._started = True
        for step in self.after_first_paint:
            step()

    def _first_painted(self) -> None:
        self._update_status()
        if _needs_welcome() and not self.settings.value("welcome/dismissed", False, bool):
            self.show_welcome()

    def _update_status(self) -> None:
        text, tooltip = model_status()
        self.model_label.setText(text)
        self.model_label.setToolTip(tooltip)
        self._update_folder()

    def _update_folder(self) -> None:
        folder = self.working_folder
        home = Path.home()
        shown = f"~/{folder.relative_to(home)}" if folder.is_relative_to(home) else str(folder)
        self.folder_label.setText(f"Working folder: {shown}")
        self.folder_label.setToolTip(str(folder))

    def _update_title(self, _dirty: bool = False) -> None:
        dirty = (
            ("agents" in self.views and self.agents_view.editor.is_dirty())
            or ("presets" in self.views and self.presets_view.editor.is_dirty())
            or ("documents" in self.views and self.documents_view.detail.is_dirty())
        )
        waiting = self._inbox.count() if self._inbox is not None else 0
        title = "Baton" + (f" ({waiting} waiting for you)" if waiting else "")
        self.setWindowTitle(title + (" — unsaved changes" if dirty else ""))

    def _save_current(self) -> None:
        if self.current_view() == "presets":
            self.presets_view.save_current()
        elif self.current_view() == "documents":
            self.documents_view.save_current()
        else:
            self.agents_view.save_current()

    def _session_started(self, session: object) -> None:
        """A run launched before the Runs view was ever shown: build it now and give it the
        run (a view built from here missed this signal)."""
        if "runs" not in self.views:
            self.runs_view.add_session(session)  # type: ignore[arg-type]

    def _waiting_changed(self, count: int) -> None:
        """The inbox's count, wherever the person may look: sidebar, title, taskbar, tray."""
        self.sidebar.set_count([spec.key for spec in VIEWS].index("inbox"), count)
        self._update_title()
        self.run_controller.notifier.set_waiting(count)

    def _show_index(self, index: int) -> None:
        self.view(VIEWS[index].key)
        self.stack.setCurrentIndex(index)

    def _go_to_view(self, key: str) -> None:
        """View ▸ <view> (Ctrl+1…5): show it and put the keyboard in it — in its filter
        field, so typing filters and Tab reaches its list — not left on the sidebar."""
        self.show_view(key)
        field = self.view(key).findChild(QLineEdit, "FilterField")
        if field is not None and field.isVisible():
            field.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _settings_saved(self) -> None:
        self._update_status()
        if self.welcome_panel is not None and not _needs_welcome():
            self._welcome_done()

    def cancel_current_run(self) -> None:
        """Run ▸ Cancel run: the run in the current Runs tab, else the only one running. It
        goes through the run's own Cancel button, so the two can never behave differently."""
        page = self.runs_view.current_page()
        active = self.run_controller.active()
        session = page.session if page is not None and page.session in active else None
        if session is None and len(active) == 1:
            session = active[0]
        if session is None:
            message = (
                "No run is running."
                if not active
                else "Several runs are running: open the one to cancel in Runs, then cancel it."
            )
            self.statusBar().showMessage(message, 5000)
            return
        button = session.view.header.cancel_button
        if button.isEnabled():
            button.click()

    def show_shortcuts(self) -> ShortcutsDialog:
        from gui.window.shortcuts_dialog import ShortcutsDialog

        dialog = ShortcutsDialog(self.menuBar(), self)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def _edit(self, method: str) -> None:
        """Edit menu items act on whatever widget has keyboard focus, if it can do them."""
        widget = QApplication.focusWidget()
        action = getattr(widget, method, None)
        if callable(action):
            action()

    def show_welcome(self) -> None:
        """The welcome strip above the views (again, after "Not now", from Help ▸ Welcome)."""
        self.settings.remove("welcome/dismissed")
        if self.welcome_panel is None:
            from gui.window.welcome_panel import WelcomePanel

            self.welcome_panel = WelcomePanel(self)
            self.welcome_panel.configured.connect(self._welcome_done)
            self.welcome_panel.openSettingsRequested.connect(self.open_settings)
            self.welcome_panel.dismissed.connect(
                lambda: self.settings.setValue("welcome/dismissed", True)
            )
            self._content.insertWidget(0, self.welcome_panel)
        self.welcome_panel.show()
        # Ollama is probed on the asyncio loop, which runs only once Qt's loop does.
        QTimer.singleShot(0, self.welcome_panel.start_detection)

    def _welcome_done(self, _choice: str = "") -> None:
        if self.welcome_panel is not None:
            self.welcome_panel.stop()
            self.welcome_panel.hide()
        self._update_status()

    def _new_agent(self) -> None:
        self.show_view("agents")
        self.agents_view.new_agent()

    def _about(self) -> None:
        QMessageBox.about(
            self,
            "About Baton",
            f"<h3>Baton {escape(__version__)}</h3>"
            "<p>See and steer chains of LLM agents: definitions, presets, live runs and the "
            "documents your agents write.</p>"
            "<p>Agent files are plain Markdown with YAML frontmatter, shared with pi and "
            "Claude Code.</p>",
        )


def _needs_welcome() -> bool:
    from gui.window.welcome_panel import needs_welcome

    return needs_welcome()
