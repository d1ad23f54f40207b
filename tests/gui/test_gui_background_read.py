"""Reading definition files on a worker thread: bursts merge, a superseded read is dropped."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication
from pytestqt.qtbot import QtBot

from gui.definitions.background_read import BackgroundRead


def test_changes_during_a_read_cause_one_more_read_not_a_queue(qtbot: QtBot) -> None:
    reads: list[int] = []
    shown: list[tuple[int, bool]] = []
    release = threading.Event()

    def read() -> Callable[[], None]:
        number = len(reads)
        reads.append(number)
        release.wait(10)
        on_worker = threading.current_thread() is not threading.main_thread()
        return lambda: shown.append((number, on_worker))

    reader = BackgroundRead(read)
    for _ in range(5):  # an editor's save: create, rename, delete... while the first read runs
        reader.request()
    release.set()
    qtbot.waitUntil(lambda: len(shown) == 2)
    reader.wait()
    assert reads == [0, 1]
    assert shown == [(0, True), (1, True)]  # read on the worker, shown on the GUI thread


def test_a_read_superseded_by_a_refresh_is_not_shown(qtbot: QtBot) -> None:
    shown: list[str] = []
    release = threading.Event()

    def read() -> Callable[[], None]:
        release.wait(10)
        return lambda: shown.append("older picture")

    reader = BackgroundRead(read)
    reader.request()
    reader.supersede()  # the view re-read synchronously meanwhile (a save)
    release.set()
    reader.wait()
    QCoreApplication.sendPostedEvents(reader)  # deliver the finished read's result
    assert shown == []
    reader.request()  # the next change is shown again
    qtbot.waitUntil(lambda: shown == ["older picture"])
    reader.wait()
