"""A stand-in for the ``pi`` CLI: a real child process that plays a script.

Tests never mock the process side of the pi backend; they run this file as ``pi`` through a
two-line shell wrapper (:func:`make_fake_pi`), so the backend really spawns, reads, signals and
reaps a process.

Usage: ``fake_pi.py SCRIPT.json [pi arguments...]``. The script (JSON)::

    {"version": "0.73.1",            # what --version prints ("" prints nothing useful)
     "version_exit": 0,
     "record": "/tmp/x/record.json",  # argv, cwd, pid, the prompt file's path/mode/text
     "steps": [
        {"out": "<one line of text>"},          # written to stdout with a newline
        {"out_bytes": "<hex>"},                 # raw bytes, no newline added
        {"out_big": 100000},                    # a text_delta event this many bytes long
        {"replay": "/path/transcript.jsonl"},   # a whole file to stdout
        {"err": "<one line>"},                  # to stderr
        {"ignore_sigterm": true},
        {"spawn_detached": "/path/child.pid"},  # a sleeping grandchild in its own session
        {"wait_file": "/path"},                 # block until the file exists
        {"hang": true},                         # block forever
        {"exit": 3}]}                           # exit now with this status

The record is written before the first step, so a test that saw the first line knows it
exists. Without an ``exit`` step the fake exits 0 after the last step.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any


def make_fake_pi(folder: Path, script: dict[str, Any]) -> Path:
    """Write ``script`` and an executable ``pi`` wrapper into ``folder``; returns the wrapper.

    The wrapper ``exec``\\ s Python, so the process the backend starts *is* the fake (same pid).
    """
    folder.mkdir(parents=True, exist_ok=True)
    script_path = folder / "script.json"
    script_path.write_text(json.dumps(script), encoding="utf-8")
    wrapper = folder / "pi"
    wrapper.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" "{script_path}" "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    return wrapper


def _record(path: str, argv: list[str], extra: dict[str, Any]) -> None:
    prompt_path = None
    if "--append-system-prompt" in argv:
        prompt_path = argv[argv.index("--append-system-prompt") + 1]
    record: dict[str, Any] = {"argv": argv, "cwd": os.getcwd(), "pid": os.getpid(), **extra}
    if prompt_path is not None:
        info = os.stat(prompt_path)
        record["prompt_path"] = prompt_path
        record["prompt_mode"] = stat.S_IMODE(info.st_mode)
        record["prompt_folder_mode"] = stat.S_IMODE(os.stat(Path(prompt_path).parent).st_mode)
        record["prompt_text"] = Path(prompt_path).read_text(encoding="utf-8")
    stdin_closed = True
    with contextlib.suppress(OSError, ValueError):
        stdin_closed = sys.stdin is None or sys.stdin.read(1) == ""
    record["stdin_empty"] = stdin_closed
    temporary = Path(path + ".tmp")
    temporary.write_text(json.dumps(record), encoding="utf-8")
    temporary.replace(path)


def _big_line(size: int) -> str:
    event = {
        "type": "message_update",
        "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "x" * size},
    }
    return json.dumps(event)


def main() -> int:
    script = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    argv = sys.argv[2:]
    if argv[:1] in (["--version"], ["-v"]):
        print(script.get("version", "0.73.1"), flush=True)
        return int(script.get("version_exit", 0))
    out = sys.stdout.buffer
    if script.get("record"):
        _record(script["record"], argv, {})
    for step in script.get("steps", []):
        if "out" in step:
            out.write(step["out"].encode("utf-8") + b"\n")
        elif "out_bytes" in step:
            out.write(bytes.fromhex(step["out_bytes"]))
        elif "out_big" in step:
            out.write(_big_line(int(step["out_big"])).encode() + b"\n")
        elif "replay" in step:
            out.write(Path(step["replay"]).read_bytes())
        elif "err" in step:
            sys.stderr.write(step["err"] + "\n")
            sys.stderr.flush()
        elif step.get("ignore_sigterm"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        elif step.get("spawn_detached"):
            child = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(600)"],
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            pid_file = Path(step["spawn_detached"])
            pid_file.with_suffix(".tmp").write_text(str(child.pid), encoding="utf-8")
            pid_file.with_suffix(".tmp").replace(pid_file)
        elif "wait_file" in step:
            while not Path(step["wait_file"]).exists():
                threading.Event().wait(0.01)
        elif step.get("hang"):
            out.flush()
            threading.Event().wait()
        elif "exit" in step:
            out.flush()
            return int(step["exit"])
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
