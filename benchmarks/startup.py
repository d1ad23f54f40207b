"""Time to Baton's first painted window against a bare PySide6 window, in fresh processes.

Each sample is a new Python process, timed from spawn until it reports the first paint event
of its main window (then it exits at once). Two kinds, alternated run by run so a busy moment
on the machine hits both alike, :data:`RUNS` of each, medians compared:

* ``bare`` — ``QApplication`` + an empty ``QMainWindow``, shown;
* ``baton`` — what the ``baton`` command does (:func:`gui.launcher.main` with no arguments:
  its checks, the application and the main window; the asyncio event loop starts after the
  first paint), with a configured provider (no first-run panel);
* ``baton_1000`` — the same in a project whose ``.pi/agents`` holds 1,000 agent files.

Each process gets fresh, empty config and data folders; compiled bytecode is used as an
installed app would: the untimed first run of each kind writes it to a scratch
``PYTHONPYCACHEPREFIX``, and ``PYTHONDONTWRITEBYTECODE`` is dropped from the children's
environment (inherited, it made every sample compile Baton's own modules from source while the
bare window compiles nothing).

The probe is an event filter on the main window alone, installed just before the window is
shown, on both sides. It used to filter the whole application: a Python event filter sees every
event of every object, and for each new kind of object PySide builds its Python class and the
class's enums, which cost Baton's window (many widgets) ~20 ms that the bare window (one) did
not pay, and that no user pays.

Last line, JSON (goals in brackets): ``ratio`` = baton / bare [≤ 2], ``ratio_1000_agents`` =
baton_1000 / bare [≤ 2.5], and the medians in ms.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 10
AGENTS = 1_000

CHILD = r"""
import os, sys
kind = sys.argv[1]
if kind == "baton":
    import gui.app  # what `baton` imports first (it brings PySide6)
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint:
            sys.stdout.write("painted\n")
            sys.stdout.flush()
            os._exit(0)
        return False

watcher = FirstPaint()
if kind == "bare":
    app = QApplication(["bare"])
    window = QMainWindow()
    window.resize(1200, 760)
    window.installEventFilter(watcher)
    window.show()
    app.exec()
else:
    # The `baton` command itself, with the probe added when its window is shown (as for the
    # bare window: not during the window's construction).
    from gui.window.main_window import MainWindow

    show = MainWindow.show

    def probed_show(window):
        window.installEventFilter(watcher)
        show(window)

    MainWindow.show = probed_show
    from gui.launcher import main
    main([])
"""


def write_agents(folder: Path, count: int) -> None:
    agents = folder / ".pi" / "agents"
    agents.mkdir(parents=True)
    for number in range(count):
        (agents / f"agent-{number:04d}.md").write_text(
            f"---\nname: agent-{number:04d}\ndescription: Agent number {number}\n"
            f"tools: read, grep\n---\nYou are agent {number}. Read the code and report.\n",
            encoding="utf-8",
        )


def child_env(scratch: Path, **extra: str) -> dict[str, str]:
    """The environment a timed child starts with: scratch folders, offscreen, a configured
    provider (no first-run panel); ``extra`` on top."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        PYTHONPYCACHEPREFIX=str(scratch / "bytecode"),
        QT_QPA_PLATFORM=env.get("QT_QPA_PLATFORM", "offscreen"),
        PYTHONPATH=str(ROOT),
        BATON_CONFIG_DIR=str(scratch / "config"),
        BATON_DATA_DIR=str(scratch / "data"),
        HOME=str(scratch / "home"),
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",  # a configured provider: no first-run panel
        OPENAI_API_KEY="not-used",
    )
    env.update(extra)
    return env


def time_to_paint(label: str, which: str, cwd: Path, env: dict[str, str]) -> float:
    """Milliseconds from spawning :data:`CHILD` (``which``: ``baton`` or ``bare``) to the
    main window's first paint."""
    start = time.perf_counter()
    child = subprocess.run(
        [sys.executable, "-c", CHILD, which],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    elapsed = (time.perf_counter() - start) * 1000
    if child.stdout.strip() != "painted":
        raise SystemExit(f"{label} did not paint: {child.stderr[-2000:]}")
    return elapsed


def sample(kind: str, cwd: Path, scratch: Path) -> float:
    which = "baton" if kind.startswith("baton") else "bare"
    return time_to_paint(kind, which, cwd, child_env(scratch))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="baton-startup-") as tmp:
        scratch = Path(tmp)
        (scratch / "home").mkdir()
        plain = scratch / "plain"
        plain.mkdir()
        project = scratch / "project"
        write_agents(project, AGENTS)
        folders = {"bare": plain, "baton": plain, "baton_1000": project}
        for kind, folder in folders.items():  # bytecode compiled, caches warm: not timed
            sample(kind, folder, scratch)
        samples: dict[str, list[float]] = {kind: [] for kind in folders}
        for _ in range(RUNS):
            for kind, folder in folders.items():
                samples[kind].append(sample(kind, folder, scratch))
        medians = {kind: statistics.median(values) for kind, values in samples.items()}
        for kind, values in samples.items():
            print(
                f"{kind}: median {medians[kind]:.0f} ms "
                f"(min {min(values):.0f}, max {max(values):.0f})"
            )
        print(
            json.dumps(
                {
                    "ratio": round(medians["baton"] / medians["bare"], 2),
                    "ratio_1000_agents": round(medians["baton_1000"] / medians["bare"], 2),
                    **{f"{kind}_ms": round(value, 1) for kind, value in medians.items()},
                }
            )
        )


if __name__ == "__main__":
    main()
