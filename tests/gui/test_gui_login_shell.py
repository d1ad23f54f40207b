"""A desktop start (no terminal, ``PATH=/usr/bin:/bin``) finds the agent CLIs the login
shell's profile puts on PATH, and a slow, failing or garbage-printing login shell never holds
up the window: ``baton`` runs in a child process with a home folder of its own, and reports
the order things happened in (first paint, login shell done) and what the welcome panel says.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gui.app_log import LOG_NAME

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import os, sys
import gui.window.welcome_panel
gui.window.welcome_panel.OLLAMA_URL = "unset://ollama"
from PySide6.QtCore import QTimer
from gui import login_shell
from gui.window.main_window import MainWindow

def say(*parts):
    print(*parts, flush=True)

deliver = login_shell.LoginShellReader._deliver

def reported(self, change, error):
    say("shell", "applied" if change is not None else "failed: " + error)
    deliver(self, change, error)

login_shell.LoginShellReader._deliver = reported
show = MainWindow.show

def probed_show(window):
    window.first_paint.when_painted(lambda: say("painted"))
    show(window)

    reader = window.login_shell
    if reader is None:
        say("error", "the login shell was not read")
        os._exit(1)

    def check():
        panel = window.welcome_panel
        if reader.finished and panel is not None and panel.pi_status.text():
            say("pi", panel.pi_status.text())
            say("path", os.environ["PATH"])
            os._exit(0)

    # Once the shell was read (after the app's own use of it) and once the start-up steps
    # made the welcome panel: whichever comes last finds both.
    reader.when_finished(check)
    window.after_first_paint.append(lambda: QTimer.singleShot(0, check))

MainWindow.show = probed_show
from gui.launcher import main
sys.exit(main([]))
"""


def start_from_desktop(home: Path, shell: str, timeout_s: float = 30) -> list[str]:
    """``baton`` as a menu starts it: no terminal, a bare PATH, the user's $SHELL; the lines
    it reported."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key.startswith(("BATON_", "XDG_", "PYTHON")) or key == "HOME"
    }
    environment.update(
        PATH="/usr/bin:/bin",
        SHELL=shell,
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=str(ROOT),
        BATON_LOGIN_SHELL="1",  # no terminal, whatever pytest's streams are
        BATON_LOGIN_SHELL_TIMEOUT=str(timeout_s),
    )
    project = home / "project"
    project.mkdir(exist_ok=True)
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result.stdout.splitlines()


def _value(lines: list[str], key: str) -> str:
    return next(line.partition(" ")[2] for line in lines if line.startswith(key + " "))


def test_the_welcome_panel_finds_pi_on_the_login_shells_path(isolated_home: Path) -> None:
    tools = isolated_home / "tools" / "bin"
    tools.mkdir(parents=True)
    pi = tools / "pi"
    pi.write_text("#!/bin/sh\necho 0.73.1\n")
    pi.chmod(0o755)
    (isolated_home / ".bash_profile").write_text(
        'echo "Good morning"\nexport PATH="$HOME/tools/bin:$PATH"\n', encoding="utf-8"
    )

    lines = start_from_desktop(isolated_home, "/bin/bash")

    assert "shell applied" in lines
    assert _value(lines, "pi") == f"Found: {pi} (on your login shell's PATH)"
    assert _value(lines, "path").split(":")[0] == str(tools)


def test_a_slow_login_shell_does_not_hold_the_first_paint(isolated_home: Path) -> None:
    (isolated_home / ".bash_profile").write_text("sleep 30\n", encoding="utf-8")

    lines = start_from_desktop(isolated_home, "/bin/bash", timeout_s=8)

    shell = next(i for i, line in enumerate(lines) if line.startswith("shell "))
    assert lines.index("painted") < shell  # on screen while the shell was still busy
    assert lines[shell] == "shell failed: /bin/bash did not answer within 8 s"
    assert _value(lines, "pi") == "Not found on PATH or in the usual install folders."
    log = (isolated_home / "data" / "logs" / LOG_NAME).read_text(encoding="utf-8")
    assert "did not answer within 8 s" in log  # a desktop user can find out why


@pytest.mark.parametrize("kind", ["exit 1", "garbage"])
def test_a_broken_login_shell_is_logged_and_ignored(isolated_home: Path, kind: str) -> None:
    if kind == "garbage":
        shell = isolated_home / "garbage-shell"
        shell.write_text("#!/bin/sh\nhead -c 20000 /dev/urandom\n")
        shell.chmod(0o755)
        expected = "printed no environment"
    else:
        (isolated_home / ".bash_profile").write_text("exit 1\n", encoding="utf-8")
        shell = Path("/bin/bash")
        expected = "exited with status 1"

    lines = start_from_desktop(isolated_home, str(shell))

    assert "painted" in lines
    assert expected in _value(lines, "shell")
    assert _value(lines, "path") == "/usr/bin:/bin"
    log = (isolated_home / "data" / "logs" / LOG_NAME).read_text(encoding="utf-8")
    assert expected in log
