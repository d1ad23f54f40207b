"""Every view of the window at one width and one theme: the check that Baton is usable on a
small screen (800 px) and uses a large one (1600 px), in light and in dark.

One driver for the sizes set: a throwaway home with a few recorded runs (a finished chain, a
failed chain, a parallel run), a document and a batch; then the main window on each view —
Agents, Presets, Runs (a run open), History, Documents, Batches, Inbox — and the Settings
dialog, each saved as ``<view>-<width>-<theme>.png`` (reduced to 256 colours with ImageMagick
when it is there, so the set stays small)::

    Xvfb :95 -screen 0 1700x1000x24 &
    for width in 800 1600; do for theme in light dark; do
        DISPLAY=:95 .venv/bin/python docs/make_all_screenshots.py --width $width --theme $theme
    done; done

The pictures land in ``docs/screenshots/sizes/`` unless ``--output`` says otherwise; the
other ``docs/make_*.py`` scripts make the pictures the guides show.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import scratch_home, settle  # noqa: E402

if TYPE_CHECKING:
    from gui.run.run_page import RunPage

SCRATCH = scratch_home("baton-sizes-demo")
HEIGHT = {800: 600, 1600: 1000}
VIEWS = ("agents", "presets", "runs", "history", "documents", "batches", "inbox")


def _record_runs() -> None:
    """Three runs as Baton records them: run files plus index rows."""
    from core.model.events import event_from_json, event_to_json
    from core.record.run_files import RunIndex, RunWriter
    from core.safety.redaction import Redactor
    from tests.gui.run_events import failed_chain, finished_chain, running_parallel

    parallel = running_parallel(done=3, running=0)
    for events in (finished_chain(), failed_chain(), parallel):
        # The demo runs' folder is the scratch project, so they show under this project.
        events = [
            event_from_json(event_to_json(e).replace("/home/dev/src/baton", str(SCRATCH)))
            for e in events
        ]
        writer = RunWriter(events[0].run_id, Redactor())
        for event in events:
            writer.write(event)
        writer.close()
        RunIndex().add_file(writer.path)


def _record_document_and_batch() -> None:
    from core.batch.inputs import BatchItem
    from core.batch.store import BatchSpec, BatchStore
    from core.documents.store import DocumentStore

    with DocumentStore.default() as store:
        store.create(
            "Release checklist",
            "# Release checklist\n\n- [ ] bump the version\n- [ ] tag\n",
            tags=["release"],
        )
        store.create("Retry policy", "429 and 5xx retry with backoff.", type="memory")
    issues = ["#412 login loops", "#415 export drops names", "#421 retry ignores Retry-After"]
    BatchStore().create(
        BatchSpec(preset="scout-and-plan", cwd=str(SCRATCH)),
        [BatchItem(args=[issue]) for issue in issues],
        "issues.jsonl",
    )


def _read(page: RunPage) -> bool:
    return not page.is_reading()


def _shrink(path: Path) -> None:
    """256 colours: a tenth of the bytes, the same picture to the eye."""
    convert = shutil.which("convert")
    if convert is not None:
        subprocess.run([convert, str(path), "-colors", "256", f"PNG8:{path}"], check=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, choices=sorted(HEIGHT), default=1600)
    parser.add_argument("--theme", choices=["light", "dark"], default="light")
    parser.add_argument("--output", type=Path, default=ROOT / "docs/screenshots/sizes")
    args = parser.parse_args(argv)

    from PySide6.QtCore import QSettings

    from gui.app import create_application
    from gui.theme.scheme import apply_scheme
    from gui.window.main_window import MainWindow

    _record_runs()
    _record_document_and_batch()
    app = create_application([])
    apply_scheme(app, args.theme)
    settings = QSettings(str(SCRATCH / "gui.ini"), QSettings.Format.IniFormat)
    settings.setValue("welcome/dismissed", True)
    window = MainWindow(SCRATCH, settings)
    window.setGeometry(0, 0, args.width, HEIGHT[args.width])
    window.show()
    settle(600, until=window.has_started)
    args.output.mkdir(parents=True, exist_ok=True)

    def save(name: str, widget: object) -> None:
        from PySide6.QtWidgets import QWidget

        assert isinstance(widget, QWidget)
        path = args.output / f"{name}-{args.width}-{args.theme}.png"
        widget.grab().save(str(path))
        _shrink(path)
        print(path, f"(minimum width {window.minimumSizeHint().width()} px)")

    for view in VIEWS:
        if view == "history":
            window.show_view("runs")
            window.runs_view.show_history()
        else:
            window.show_view(view)
        if view == "runs":
            records = window.runs_view.history.visible_records()
            if records:
                page = window.runs_view.open_record(records[-1])
                settle(300, until=partial(_read, page))
        settle(500)
        save(view, window)

    dialog = window.open_settings()
    dialog.resize(min(820, args.width - 40), dialog.height())
    settle(300)
    save("settings", dialog)
    dialog.close()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
