"""Watching agent folders so edits made elsewhere show up without a restart.

``QFileSystemWatcher`` reports a folder when entries are added, removed or renamed, and a file
when its content changes, but not a folder that does not exist yet. So the watcher is given:

* the agent folders that exist, and every ``*.md`` file in them (in-place edits);
* for folders that may appear later, their nearest existing ancestor — never the home folder
  or the filesystem root, whose constant churn would only cause needless re-reads.

Events arrive in bursts (an editor's atomic save is create + rename + delete), so they are
debounced into one :attr:`FolderWatcher.changed`. Call :meth:`FolderWatcher.watch` again
after each refresh: the set of files changes and replaced files lose their watch.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal


class FolderWatcher(QObject):
    changed = Signal()
    """Something under the watched folders changed (debounced). GUI thread."""

    def __init__(self, delay_ms: int = 200, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.changed)
        self._watcher.directoryChanged.connect(self._poke)
        self._watcher.fileChanged.connect(self._poke)

    def watch(self, folders: Iterable[Path], may_appear: Iterable[Path] = ()) -> None:
        """Watch ``folders`` (and their ``*.md`` files) and the ancestors of ``may_appear``."""
        wanted: set[str] = set()
        for folder in folders:
            if folder.is_dir():
                wanted.add(str(folder))
                wanted.update(str(p) for p in folder.glob("*.md") if p.is_file())
        for candidate in may_appear:
            ancestor = _nearest_existing(candidate)
            if ancestor is not None:
                wanted.add(str(ancestor))
        current = set(self._watcher.files()) | set(self._watcher.directories())
        stale = sorted(current - wanted)
        fresh = sorted(wanted - current)
        if stale:
            self._watcher.removePaths(stale)
        if fresh:
            self._watcher.addPaths(fresh)

    def watched(self) -> list[str]:
        return sorted([*self._watcher.files(), *self._watcher.directories()])

    def stop(self) -> None:
        """Stop watching and drop a pending notification (on window close)."""
        self._timer.stop()
        paths = [*self._watcher.files(), *self._watcher.directories()]
        if paths:
            self._watcher.removePaths(paths)

    def _poke(self, _path: str) -> None:
        self._timer.start()


def _nearest_existing(path: Path) -> Path | None:
    stop = {Path.home().resolve(), Path(path.anchor)}
    for folder in (path, *path.parents):
        if folder.resolve() in stop:
            return None
        if folder.is_dir():
            return folder
    return None
