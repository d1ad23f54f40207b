"""Configured programs installed under the host's ``/tmp``: bubblewrap's private ``/tmp`` hid
them, so a sandboxed MCP server run by a virtualenv or a script there could not even start
(``bwrap: execvp …: No such file or directory``). The folders its command names are shown back,
read-only, and the host's sockets inside them stay out of reach."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.safety.sandbox import bwrap_argv, named_temp_folders, sandbox_status
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import (
    REPO,
    configure,
    finished_calls,
    run,
    sdk_server,
    warnings,
    write_agent,
)

needs_bwrap = pytest.mark.skipif(
    sandbox_status().kind != "bubblewrap", reason="bubblewrap does not run here"
)


@pytest.fixture
def under_tmp() -> Iterator[Path]:
    """A fresh folder directly under the host's ``/tmp`` (pytest's own may live elsewhere)."""
    folder = Path(tempfile.mkdtemp(prefix="baton-program-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_named_top_folders_of_tmp_each_once(under_tmp: Path) -> None:
    other = Path(tempfile.mkdtemp(prefix="baton-lib-", dir="/tmp"))
    try:
        argv = [str(under_tmp / ".venv/bin/python"), "-m", "server", str(under_tmp / "x.py")]
        env = {"PYTHONPATH": f"{other}/src:relative/path:/usr/lib", "HOME": "/root"}
        assert named_temp_folders(argv, env) == [under_tmp, other]
    finally:
        other.rmdir()


@pytest.mark.parametrize(
    "value",
    ["/tmp", "/tmp/", "/tmp/../etc/passwd", "/tmp/baton-never-made-here/bin/x", "tmp/a", "-m"],
)
def test_tmp_itself_and_what_does_not_exist_are_never_named(value: str) -> None:
    assert named_temp_folders([value], {"PATH": value}) == []


def test_bwrap_shows_them_read_only_inside_the_private_tmp(under_tmp: Path) -> None:
    argv = bwrap_argv(
        ["true"], cwd=Path("/work/p"), protected=[], network=True, readable_temp=[under_tmp]
    )
    private = argv.index("/tmp")
    assert argv[private - 1] == "--tmpfs"
    shown = argv.index(str(under_tmp))
    assert argv[shown - 1] == "--ro-bind" and shown > private


@needs_bwrap
def test_a_socket_inside_a_shown_folder_stays_out_of_reach(under_tmp: Path) -> None:
    path = under_tmp / "agent.sock"
    script = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX)\n"
        "try:\n s.connect(sys.argv[1]); print('REACHED')\n"
        "except OSError as e: print('refused', e)\n"
    )
    (under_tmp / "probe.py").write_text(script, encoding="utf-8")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen(1)
        python = os.path.realpath(sys.executable)
        command = [python, str(under_tmp / "probe.py"), str(path)]
        argv = bwrap_argv(
            command,
            cwd=REPO,
            protected=[],
            network=True,
            readable_temp=named_temp_folders(command, {}),
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.startswith("refused"), done.stdout + done.stderr


@needs_bwrap
def test_an_mcp_server_started_from_tmp_runs_sandboxed_and_cannot_write_there(
    llm_server: LLMServer, tmp_path: Path, under_tmp: Path
) -> None:
    launcher = under_tmp / "server.sh"
    launcher.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m tests.mcp_test_server normal\n', encoding="utf-8"
    )
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    configure("t", sdk_server().model_copy(update={"command": str(launcher), "args": []}))
    write_agent("mcp-user", "mcp: [t]")
    outside = under_tmp / "planted.txt"
    llm_server.queue(
        Reply.tool("mcp__t__echo", {"text": "hello"}),
        Reply.tool("mcp__t__write_file", {"path": str(outside), "text": "x"}),
        Reply.answer("done"),
    )
    status, events = run(llm_server, tmp_path)
    assert status == "ok" and warnings(events) == []
    echo, planted = finished_calls(events)
    assert "hello" in echo.result
    assert planted.result.startswith("refused") and not outside.exists()
