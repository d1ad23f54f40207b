"""``baton --self-test``, as a packaged build's smoke test runs it: a child process, no display."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_self_test_passes_offscreen_without_touching_the_real_folders(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["BATON_CONFIG_DIR"] = str(tmp_path / "real-config")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env["TMPDIR"] = str(temporary)
    result = subprocess.run(
        [sys.executable, "-m", "gui.launcher", "--self-test"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == [
        "ok    dependency metadata",
        "ok    agent step",
        "ok    agent and preset definitions",
        "ok    document store",
        "ok    backends",
        "ok    window",
        "ok    charts",
        "ok    window run",
    ]
    assert lines[-1] == "self-test passed"
    assert not (tmp_path / "real-config").exists()
    left = sorted(p.name for p in temporary.iterdir() if p.name.startswith("baton-selftest"))
    assert left == []  # a person's temporary folder keeps nothing of it
