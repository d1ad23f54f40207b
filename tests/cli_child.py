"""``baton`` as a real child process: started from this checkout, or interrupted the way
Ctrl+C interrupts it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.llm_server import LLMServer

REPO = Path(__file__).resolve().parents[1]


def start_baton(arguments: list[str], **popen: Any) -> subprocess.Popen[str]:
    """``baton ARGUMENTS`` from this checkout (``python -m core.cli``), text output piped;
    ``popen`` adds to or overrides the other ``Popen`` arguments (``stdin`` …)."""
    return subprocess.Popen(
        [sys.executable, "-m", "core.cli", *arguments],
        **{
            "stdout": subprocess.PIPE,
            "stderr": subprocess.PIPE,
            "text": True,
            "env": {**os.environ, "PYTHONPATH": str(REPO)},
            "cwd": REPO,
            **popen,
        },
    )


def interrupt_baton_run(
    server: LLMServer, arguments: list[str], *, after_requests: int
) -> tuple[int, str, str]:
    """Run ``baton ARGUMENTS``, send SIGINT once the server saw ``after_requests`` requests;
    return ``(exit status, stdout, stderr)``. The child is killed if it does not exit."""
    child = start_baton(arguments)
    try:
        server.wait_requests(after_requests, timeout=30)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, out, err
