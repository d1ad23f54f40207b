"""The ``baton`` entry point itself: version, the no-display guard, and which side imports Qt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core import __version__
from core.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.strip() == f"baton {__version__}"


def test_no_display_gives_one_line_and_exit_2() -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    result = subprocess.run(
        [sys.executable, "-m", "gui.launcher"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    if not sys.platform.startswith("linux"):
        pytest.skip("the display check only matters on Linux")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "no display available" in result.stderr


def test_core_cli_alone_runs_headless_commands_but_opens_no_window() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "core.cli"],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert result.returncode == 2
    assert "run 'baton' instead" in result.stderr


def test_a_headless_command_through_the_entry_point_never_loads_qt(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from gui.launcher import main\n"
        "code = main(['agents', '--json'])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync'))\n"
        "print('qt modules:', loaded, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        },
    )
    assert result.returncode == 0, result.stderr
    assert "qt modules: []" in result.stderr
