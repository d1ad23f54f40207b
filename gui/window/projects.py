"""The window's project: File ▸ Open Folder…, File ▸ Open Recent, and folders or files dropped
on the window.

The project is the window's working folder: the agents and presets views list its files, the
launch dialog starts there (so rules and trust, which are kept per project, follow it) and the
status bar names it. Changing it goes through :meth:`Projects.open_project`, which asks about
unsaved edits first, remembers the folder for the next start (:mod:`core.config.recent_projects`)
and
tells the window (its ``projectChanged`` signal). A dropped file is opened like
``baton open FILE``: a run file or a pi / Claude Code transcript in a Runs tab.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QFileOpenEvent
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

from gui.theme import icons

FolderChooser = Callable[[QWidget, Path], Path | None]


def choose_folder(parent: QWidget, start: Path) -> Path | None:
    """The folder picker behind File ▸ Open Folder… (tests put their own in its place)."""
    folder = QFileDialog.getExistingDirectory(parent, "Open a project folder", str(start))
    return Path(folder) if folder else None


def home_relative(folder: Path) -> str:
    home = Path.home()
    return f"~/{folder.relative_to(home)}" if folder.is_relative_to(home) else str(folder)


@dataclass(frozen=True)
class ProjectHost:
    """What changing project needs of the window, handed in so this module never imports the
    window (which composes it)."""

    parent: QWidget
    """Where the folder chooser opens."""
    current_folder: Callable[[], Path]
    show_message: Callable[[str], None]
    """A word in the status bar."""
    may_leave: Callable[[], bool]
    """False when the person keeps unsaved agent or preset edits."""
    set_folder: Callable[[Path], None]
    """Make the folder the window's project (views, launch dialog, status bar)."""
    open_file: Callable[[Path], None]
    """Show a run file or transcript in the Runs view."""


class Projects:
    """What a window does to change project; one per window."""

    def __init__(self, host: ProjectHost) -> None:
        self._host = host
        self.choose: FolderChooser = choose_folder
        """Asked for a folder by :meth:`open_folder` (tests replace it)."""

    def open_folder(self) -> bool:
        """File ▸ Open Folder…: ask for a folder and open it; False when none was chosen."""
        folder = self.choose(self._host.parent, self._host.current_folder())
        return folder is not None and self.open_project(folder)

    def open_project(self, folder: Path) -> bool:
        """Make ``folder`` the window's project (False, with a word in the status bar, when it
        is no folder or the person keeps unsaved edits)."""
        from core.config.recent_projects import remember_project

        host = self._host
        folder = Path(folder).expanduser()
        if not folder.is_dir():
            host.show_message(f"{folder} is not a folder.")
            return False
        folder = folder.resolve()
        if not host.may_leave():
            return False
        try:
            remember_project(folder)
        except OSError as error:  # the next start will not offer it; this one still opens it
            host.show_message(f"Could not remember {folder}: {error}")
        host.set_folder(folder)
        return True

    def open_path(self, path: Path) -> bool:
        """A folder becomes the project; a file opens as a run or transcript (Runs view)."""
        if path.is_dir():
            return self.open_project(path)
        if not path.is_file():
            self._host.show_message(f"{path}: no such file or folder.")
            return False
        self._host.open_file(path)  # a problem is shown in the Runs view
        return True

    def fill_recent_menu(self, menu: QMenu) -> None:
        """File ▸ Open Recent, listed afresh each time it opens (another window may have
        opened a project meanwhile)."""
        from core.config.recent_projects import forget_projects, recent_projects

        menu.clear()
        recent = recent_projects()
        for number, folder in enumerate(recent, start=1):
            label = f"&{number} {folder.name}" if number < 10 else folder.name
            action = menu.addAction(icons.icon("folder"), f"{label}  —  {home_relative(folder)}")
            action.setToolTip(str(folder))
            action.triggered.connect(lambda _checked=False, f=folder: self.open_project(f))
        if not recent:
            menu.addAction("No recent projects").setEnabled(False)
            return
        menu.addSeparator()
        menu.addAction("Clear the list").triggered.connect(lambda _checked=False: forget_projects())

    # -- drag and drop (the window forwards its events) -----------------------------------

    @staticmethod
    def accepts(event: QDragEnterEvent) -> bool:
        """Whether a drag carries local files or folders (so the window shows it can drop)."""
        mime = event.mimeData()
        return mime.hasUrls() and any(url.isLocalFile() for url in mime.urls())

    def drop(self, event: QDropEvent) -> None:
        """Open the first local folder or file dropped."""
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_path(paths[0])


class FileOpenEvents(QObject):
    """macOS hands "Open with Baton" (a folder or file dropped on the Dock icon, or chosen in
    Finder) to the running app as a FileOpen event, not as arguments: it opens like a drop.
    Install it on the QApplication."""

    def __init__(self, projects: Projects, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._projects = projects

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QFileOpenEvent) and event.file():
            self._projects.open_path(Path(event.file()))
            return True
        return super().eventFilter(watched, event)
