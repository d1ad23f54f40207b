"""Baton's main window: sidebar, the views in a stack, menus and the status bar (architecture: "The
window").

The window composes parts that each live in their own module: the views and their builders
(:mod:`gui.window.views`), the menus (:mod:`~gui.window.menus`), the status bar
(:mod:`~gui.window.status_bar`), saved geometry (:mod:`~gui.window.geometry`), the start-up
work deferred past the first paint (:mod:`~gui.window.first_paint`), the runs and what of them
waits for the person (:mod:`~gui.window.attention`) and the first-run welcome strip
(:mod:`~gui.window.welcome`); it keeps the public API tests and other modules use. Only the
view shown first
is built while the window opens; each other view is built the first time it is shown or asked
for (``window.runs_view`` and friends build it on access). The window can be built without
:func:`gui.app.run_app` (tests do), given a working folder and a QSettings to use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QEvent, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QPaintEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QMainWindow,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gui import theme
from gui.theme import icons
from gui.widgets.prompts import Prompts
from gui.window.attention import Attention, window_title
from gui.window.first_paint import FirstPaint
from gui.window.geometry import restore_geometry, save_geometry
from gui.window.menus import build_menus
from gui.window.projects import ProjectHost, Projects
from gui.window.services import BuiltViews, MenuCommands, WindowServices
from gui.window.sidebar import Sidebar
from gui.window.status_bar import WindowStatus
from gui.window.views import VIEWS, view_index
from gui.window.welcome import WelcomeBanner

if TYPE_CHECKING:  # imported where first used: start-up imports only the first view's modules
    from gui.batch.batch_view import BatchView
    from gui.definitions.agents_view import AgentsView
    from gui.definitions.presets_view import PresetsView
    from gui.documents.documents_view import DocumentsView
    from gui.inbox.inbox_model import InboxModel
    from gui.launch.launch_dialog import LaunchDialog, LaunchInputs
    from gui.login_shell import LoginShellReader
    from gui.run.run_controller import RunController, RunSession
    from gui.run.runs_view import RunsView
    from gui.settings.settings_dialog import SettingsDialog
    from gui.window.shortcuts_dialog import ShortcutsDialog
    from gui.window.welcome_panel import WelcomePanel


class MainWindow(QMainWindow):
    prompts: Prompts

    projectChanged = Signal(Path)
    """The window's project (working folder) was changed by the person (File ▸ Open Folder…,
    Open Recent, a dropped folder); the views have already followed it."""

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
        self._attention = Attention(
            self, self.focus_run_step, self._session_started, self._waiting_changed
        )
        self._launch_dialog: LaunchDialog | None = None
        self._last_launch: LaunchInputs | None = None
        self._working_folder = self.initial_folder
        self.opening = True
        """True while the window is being built (see :data:`VIEWS`' factories)."""
        self.login_shell: LoginShellReader | None = None
        """Reading the login shell's environment (a desktop start), when it is read."""
        self.projects = Projects(
            ProjectHost(
                parent=self,
                current_folder=lambda: self.working_folder,
                show_message=lambda text: self.statusBar().showMessage(text, 8000),
                may_leave=self._may_leave_project,
                set_folder=self._set_project,
                open_file=self._open_run_path,
            )
        )
        """File ▸ Open Folder…, Open Recent and drops: how the project changes."""
        self.setAcceptDrops(True)
        self.first_paint = FirstPaint(self._first_painted)
        """Start-up work, run from the event loop once the window has painted."""
        self.after_first_paint: list[Callable[[], None]] = self.first_paint.steps
        """Called in turn, from the event loop, once the window has painted: start-up work
        its first picture does not need (settings for the status bar and the welcome panel,
        listing agents), so the window is on screen while it happens."""

        self.sidebar = Sidebar()
        self.stack = QStackedWidget()
        self.views: dict[str, QWidget] = {}
        """The views built so far, by key (see :meth:`view`)."""
        self.built = BuiltViews()
        """The same views, each with its own type."""
        self.services = WindowServices(
            prompts=self.prompts,
            settings=self.settings,
            built=self.built,
            working_folder=lambda: self.working_folder,
            opening=lambda: self.opening,
            after_first_paint=self.after_first_paint,
            controller=lambda: self.run_controller,
            inbox=lambda: self.inbox,
            show_view=self.show_view,
            open_run=self.open_run_by_id,
            show_batch=self.show_batch,
            launch=self.open_launch_dialog,
            update_title=self.update_title,
        )
        """What the views may ask of the window (they are handed this, not the window)."""
        for spec in VIEWS:
            self.stack.addWidget(QWidget())  # a stand-in until the view is first shown
            self.sidebar.add_entry(spec.label, spec.icon)
        self.sidebar.currentChanged.connect(self._show_index)
        self.sidebar.picked.connect(lambda index: self.go_to_view(VIEWS[index].key))
        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.sidebar)
        self._content = QVBoxLayout()  # the first-run welcome banner sits above the views
        self._content.setSpacing(0)
        self._content.addWidget(self.stack, 1)
        layout.addLayout(self._content, 1)
        self.setCentralWidget(central)
        self._welcome = WelcomeBanner(  # decided after the first paint
            self, self._content, self.settings, self.open_settings, self.refresh_status
        )

        actions = build_menus(
            self,
            MenuCommands(
                new_agent=self.new_agent,
                save=self.save_current,
                open_run_file=self.open_run_file,
                settings=self.open_settings,
                quit=self.close,
                new_run=self.open_launch_dialog,
                cancel_run=self.cancel_current_run,
                shortcuts=self.show_shortcuts,
                welcome=self.show_welcome,
                go_to_view=self.go_to_view,
                open_folder=self.open_folder,
                fill_recent_menu=self.projects.fill_recent_menu,
            ),
        )
        self.new_action = actions.new
        self.save_action = actions.save
        self.open_run_action = actions.open_run
        self.settings_action = actions.settings
        self.quit_action = actions.quit
        self.new_run_action = actions.new_run
        self.cancel_run_action = actions.cancel_run
        self.shortcuts_action = actions.shortcuts
        self.welcome_action = actions.welcome
        self.about_action = actions.about
        self.open_folder_action = actions.open_folder
        self.open_log_folder_action = actions.open_log_folder

        # The model (settings: pydantic, yaml) is shown after the first paint.
        self._status = WindowStatus(self.statusBar(), self.working_folder)
        self.model_icon = self._status.model_icon
        self.model_label = self._status.model_label
        self.folder_label = self._status.folder_label
        self.show_view(restore_geometry(self, self.settings, [spec.key for spec in VIEWS]))
        self.opening = False

    # -- public API ----------------------------------------------------------------------

    def view(self, key: str) -> QWidget:
        """The view ``key``, built (and put in the stack) the first time it is asked for."""
        built = self.views.get(key)
        if built is not None:
            return built
        index = view_index(key)
        widget = VIEWS[index].make(self.services)
        self.views[key] = widget
        stand_in = self.stack.widget(index)
        current = self.stack.currentIndex()
        self.stack.insertWidget(index, widget)
        if stand_in is not None:
            self.stack.removeWidget(stand_in)
            stand_in.deleteLater()
        self.stack.setCurrentIndex(current)
        if key == "agents" and self.built.agents is not None:
            self.built.agents.restore_state()
        return widget

    def has_started(self) -> bool:
        """True once the work deferred past the first paint was done (see
        :attr:`after_first_paint`): the status bar names the model, the welcome panel is
        shown when needed, the first view is listing its files."""
        return self.first_paint.started

    @property
    def agents_view(self) -> AgentsView:
        self.view("agents")
        return built(self.built.agents)

    @property
    def presets_view(self) -> PresetsView:
        self.view("presets")
        return built(self.built.presets)

    @property
    def runs_view(self) -> RunsView:
        self.view("runs")
        return built(self.built.runs)

    @property
    def documents_view(self) -> DocumentsView:
        self.view("documents")
        return built(self.built.documents)

    @property
    def batch_view(self) -> BatchView:
        self.view("batches")
        return built(self.built.batches)

    @property
    def run_controller(self) -> RunController:
        """Runs launched from this window (made on first use: it brings in the backends)."""
        return self._attention.controller()

    @property
    def inbox(self) -> InboxModel:
        """What waits for the person across the window's runs (made with the controller)."""
        return self._attention.inbox()

    @property
    def welcome_panel(self) -> WelcomePanel | None:
        """The first-run welcome strip above the views, once it was shown."""
        return self._welcome.panel

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
        for view in (self.built.agents, self.built.presets):
            if view is not None:
                view.working_folder = Path(folder)
        self.refresh_status()

    def open_folder(self) -> bool:
        """File ▸ Open Folder…"""
        return self.projects.open_folder()

    def open_project(self, folder: Path) -> bool:
        """Make ``folder`` the project (``baton PATH``, Open Recent, a dropped folder)."""
        return self.projects.open_project(folder)

    def _may_leave_project(self) -> bool:
        """Unsaved agent or preset edits are saved, discarded or kept (then: stay)."""
        for key in ("agents", "presets"):
            if key in self.views:
                view = self.agents_view if key == "agents" else self.presets_view
                if not view.maybe_discard_changes():
                    return False
        return True

    def _set_project(self, folder: Path) -> None:
        self.working_folder = folder
        dialog = self.launch_dialog()
        if dialog is not None:
            dialog.set_working_folder(folder)
        self.projectChanged.emit(folder)

    def _open_run_path(self, path: Path) -> None:
        self.runs_view.open_path(path)
        self.show_view("runs")

    def launch_dialog(self) -> LaunchDialog | None:
        """The launch dialog, while it is open."""
        return self._launch_dialog

    def open_run_by_id(self, run_id: str, step: int = -1, call_id: str = "") -> None:
        """Show a saved run — open or not — on ``step`` (0-based; -1: the top) and its tool
        call ``call_id``, highlighted: the documents' provenance links land here."""
        from core.record.run_files import RunIndex

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
        self.batch_view.choose(batch_id)

    def show_view(self, key: str) -> None:
        self.sidebar.set_current(view_index(key))

    def current_view(self) -> str:
        return VIEWS[self.stack.currentIndex()].key

    def go_to_view(self, key: str) -> None:
        """View ▸ <view> (Ctrl+1…6), or a sidebar row clicked or entered: show it and put the
        keyboard in it — in its filter field, so typing filters and Tab reaches its list, or
        its main widget (the Inbox's list, so Enter opens a row) — not left on the sidebar."""
        self.show_view(key)
        view = self.view(key)
        field = view.findChild(QLineEdit, "FilterField")
        if field is not None and field.isVisible():
            field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        elif view.focusProxy() is not None:  # a view without a filter names its main widget
            view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def refresh_status(self) -> None:
        """Show the settings' model (they may have been edited) and the working folder."""
        self._status.update(self.working_folder)

    def update_title(self, _dirty: bool = False) -> None:
        """The title says what waits for the person and whether an editor has unsaved work."""
        dirty = (
            ("agents" in self.views and self.agents_view.editor.is_dirty())
            or ("presets" in self.views and self.presets_view.editor.is_dirty())
            or ("documents" in self.views and self.documents_view.detail.is_dirty())
        )
        self.setWindowTitle(
            window_title(self._attention.waiting(), dirty, self._attention.running())
        )

    def new_agent(self) -> None:
        """File ▸ New agent…"""
        self.show_view("agents")
        self.agents_view.new_agent()

    def save_current(self) -> None:
        """File ▸ Save: the editor of the view shown (Agents' when no editor is shown)."""
        if self.current_view() == "presets":
            self.presets_view.save_current()
        elif self.current_view() == "documents":
            self.documents_view.save_current()
        else:
            self.agents_view.save_current()

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

    def open_settings(self) -> SettingsDialog:
        """The settings dialog, window-modal via ``open()``: no nested event loop, so running
        steps and its own Test connection keep going."""
        from gui.settings.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self, window_settings=self.settings)
        dialog.rules.select_project(self.working_folder)  # the rules of this window's project
        dialog.mcp.select_project(self.working_folder)
        dialog.saved.connect(self._welcome.settings_saved)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def show_shortcuts(self) -> ShortcutsDialog:
        from gui.window.shortcuts_dialog import ShortcutsDialog

        dialog = ShortcutsDialog(self.menuBar(), self)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def show_welcome(self) -> None:
        """The welcome strip above the views (again, after "Not now", from Help ▸ Welcome)."""
        self._welcome.show()

    def save_state(self) -> None:
        save_geometry(self, self.settings, self.current_view())
        if "agents" in self.views:
            self.agents_view.save_state()
        self.settings.sync()

    # -- Qt overrides --------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        built = self.built
        editors = [v for v in (built.agents, built.presets, built.documents) if v is not None]
        for view in editors:
            if not view.maybe_discard_changes():
                event.ignore()
                return
        controller = self._attention.made()
        if controller is not None and not controller.confirm_close():
            event.ignore()  # it closes the window itself once cancelled runs have ended
            return
        self.save_state()
        for view in editors:
            view.shutdown()
        if controller is not None:
            controller.shutdown()
        if self._launch_dialog is not None:
            self._launch_dialog.close()
        event.accept()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self.projects.accepts(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        self.projects.drop(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        self.first_paint.painted()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        kind = event.type()
        if kind in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_style()
        elif kind == QEvent.Type.ActivationChange and self.isActiveWindow() and self.has_started():
            self.refresh_status()  # config.yaml may have been edited meanwhile

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
        # Editors colour their text themselves (syntax, marks): every view built so far, not
        # only Agents, redraws it (Presets' YAML, a document's Markdown).
        for view in list(getattr(self, "views", {}).values()):
            refresh = getattr(view, "refresh_colors", None)
            if callable(refresh):
                refresh()

    def _first_painted(self) -> None:
        self.refresh_status()
        self._welcome.show_if_needed()

    def _session_started(self, session: RunSession) -> None:
        """A run launched before the Runs view was ever shown: build it now and give it the
        run (a view built from here missed this signal)."""
        if "runs" not in self.views:
            self.runs_view.add_session(session)

    def _waiting_changed(self, count: int) -> None:
        """The inbox's count and the runs at work, wherever the person may look: sidebar,
        title, taskbar, tray."""
        self.sidebar.set_count(view_index("inbox"), count)
        running = self._attention.running()
        self.sidebar.set_note(view_index("runs"), f"{running} running" if running else "")
        self.update_title()

    def _show_index(self, index: int) -> None:
        self.view(VIEWS[index].key)
        self.stack.setCurrentIndex(index)


View = TypeVar("View", bound=QWidget)


def built(view: View | None) -> View:
    """A view just asked for by key: its builder has recorded it in :class:`BuiltViews`."""
    if view is None:
        raise RuntimeError("a view's builder did not record the view it built")
    return view
