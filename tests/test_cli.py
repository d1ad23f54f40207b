"""The ``baton`` entry point itself: version, and the no-display guard."""

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
        [sys.executable, "-m", "core.cli"],
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
