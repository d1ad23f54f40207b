"""``baton open RUN_FILE [--screenshot PNG]`` in a child process on the offscreen platform."""

from __future__ import annotations

import asyncio
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from gui.launcher import main
from tests.llm_server import LLMServer, Reply

ROOT = Path(__file__).resolve().parents[2]


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _make_run(server: LLMServer, cwd: Path) -> Path:
    server.queue(
        Reply.answer("The flags are parsed in `core/cli.py`.\n\n- `build_parser`\n- `main`"),
        Reply.answer("## Plan\n1. Add `--json`\n2. Test it"),
    )
    request = RunRequest(
        mode="chain",
        steps=[StepSpec("scout", "Find the flags"), StepSpec("planner", "Plan: {previous}")],
        cwd=cwd,
    )
    runner = Runner(request, settings=server.settings())
    assert asyncio.run(runner.run()).status == "ok"
    path = Path(os.environ["BATON_DATA_DIR"]) / "runs" / f"{runner.run_id}.jsonl"
    assert path.is_file()
    return path


def test_screenshot_of_a_saved_run_without_a_display(llm_server: LLMServer, tmp_path: Path) -> None:
    run_file = _make_run(llm_server, tmp_path)
    target = tmp_path / "shots" / "run.png"
    env = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    result = subprocess.run(
        [sys.executable, "-m", "gui.launcher", "open", str(run_file), "--screenshot", str(target)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "does not support" not in result.stderr  # no offscreen-plugin noise
    assert result.stdout.strip() == f"Saved {target} (1200×760)"
    assert _png_size(target) == (1200, 760)
    assert target.stat().st_size > 20_000  # a rendered window, not a blank image


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ('{"hello": "world"}\n', "is not a transcript Baton can read"),
    ],
)
def test_a_missing_or_unknown_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "run.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["open", str(path), "--screenshot", str(tmp_path / "x.png")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("baton open: ") and message in error
    assert error.count("\n") == 1
    assert not (tmp_path / "x.png").exists()
