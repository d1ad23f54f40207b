"""A stand-in for the ``pi`` CLI: a real child process that plays a script.

Tests never mock the process side of the pi backend; they run this file as ``pi`` through a
two-line shell wrapper (:func:`make_fake_pi`), so the backend really spawns, reads, signals and
reaps a process.

Usage: ``fake_pi.py SCRIPT.json [pi arguments...]``. The script (JSON)::

    {"version": "0.73.1",            # what --version prints ("" prints nothing useful):
                                     # 0.x on stderr, 1.x on stdout, as the real ones do
     "version_exit": 0,
     "refuse_prompt": "No API key",   # RPC: answer the prompt with success false and exit
                                      # when stdin ends (as pi does without a key)
     "record": "/tmp/x/record.json",  # argv, cwd, pid, the prompt file's path/mode/text,
                                      # the task (RPC prompt) and the gate's answers
     "steps": [
        {"ask": {"toolCallId": "c1", "toolName": "bash", "input": {...}}},
            # RPC mode: what Baton's gate extension does in pi's tool_call hook — ask over
            # the extension-UI protocol, wait for the answer, then print the call's
            # tool_execution_end as pi would (blocked: an error with the reason)
        {"out": "<one line of text>"},          # written to stdout with a newline (a list:
                                                # several lines in one write)
        {"out_bytes": "<hex>"},                 # raw bytes, no newline added
        {"out_big": 100000},                    # a text_delta event this many bytes long
        {"replay": "/path/transcript.jsonl"},   # a whole file to stdout
        {"err": "<one line>"},                  # to stderr
        {"ignore_sigterm": true},
        {"spawn_detached": "/path/child.pid"},  # a sleeping grandchild in its own session
        {"hang": true},                         # block forever
        {"wait_steer": 1},                      # RPC: block until this many steer commands
        {"deliver_steering": true},             # RPC: the next turn takes the queued steering
                                                # messages (turn_start, queue_update, the
                                                # user message_start/_end), as pi does
        {"exit": 3}]}                           # exit now with this status

The record is written before the first step, so a test that saw the first line knows it
exists. Without an ``exit`` step the fake exits 0 after the last step (``--mode json``).

With ``--mode rpc`` it speaks pi's RPC protocol on stdin/stdout like the real pi: it answers
``get_commands`` (listing ``baton-gate`` when ``-e`` loads Baton's ``baton-gate.js``),
``get_state`` (idle; with ``--session-dir`` the ``sessionFile`` pi would write there),
``prompt`` and ``steer`` (queued: a ``queue_update`` listing it, then the response, as pi
0.73.1 and 1.x answer), plays the steps only once the prompt came, and exits 0
when stdin ends (also mid-script, as pi shuts down at end of input).
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
    _write_json(path, record)


def _write_json(path: str, record: dict[str, Any]) -> None:
    temporary = Path(path + ".tmp")
    temporary.write_text(json.dumps(record), encoding="utf-8")
    temporary.replace(path)


def _big_line(size: int) -> str:
    event = {
        "type": "message_update",
        "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "x" * size},
    }
    return json.dumps(event)


def _play(step: dict[str, Any], out: Any) -> bool:
    """Write a stdout step; ``False``: not one."""
    if "out" in step:  # a list: several lines in one write (as pi writes in one tick)
        lines = step["out"] if isinstance(step["out"], list) else [step["out"]]
        out.write(b"".join(line.encode("utf-8") + b"\n" for line in lines))
    elif "out_bytes" in step:
        out.write(bytes.fromhex(step["out_bytes"]))
    elif "out_big" in step:
        out.write(_big_line(int(step["out_big"])).encode() + b"\n")
    elif "replay" in step:
        out.write(Path(step["replay"]).read_bytes())
    else:
        return False
    out.flush()
    return True


class Rpc:
    """pi's side of the RPC channel: a thread reads commands while the script plays."""

    def __init__(self, argv: list[str], record: str | None, refusal: str | None) -> None:
        self.refusal = refusal
        self.lock = threading.Lock()
        self.prompted = threading.Event()
        self.ended = threading.Event()
        self.answers: dict[str, dict[str, Any]] = {}
        self.steering: list[str] = []
        """Queued ``steer`` messages not yet taken by a turn."""
        self.steered = 0
        self.answered = threading.Condition()
        self.record = record
        gate = argv[argv.index("-e") + 1] if "-e" in argv else ""
        self.gate_loaded = gate.endswith("baton-gate.js") and Path(gate).is_file()
        self.session_file: str | None = None
        if "--session-dir" in argv:  # where pi would keep this session
            folder = argv[argv.index("--session-dir") + 1]
            self.session_file = str(Path(folder) / f"fake-{os.getpid()}.jsonl")
        threading.Thread(target=self._read, daemon=True).start()

    def write(self, data: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.buffer.write(json.dumps(data).encode() + b"\n")
            sys.stdout.buffer.flush()

    def _note(self, key: str, value: Any) -> None:
        if self.record is None:
            return
        with self.lock:
            data = json.loads(Path(self.record).read_text(encoding="utf-8"))
            if key == "answers":
                data.setdefault("answers", []).append(value)
            else:
                data[key] = value
            _write_json(self.record, data)

    def _read(self) -> None:
        for raw in sys.stdin.buffer:
            command = json.loads(raw)
            kind, ident = command.get("type"), command.get("id")
            reply: dict[str, Any] = {"id": ident, "type": "response", "command": kind}
            if kind == "get_commands":
                gate = [{"name": "baton-gate", "source": "extension"}] if self.gate_loaded else []
                self.write({**reply, "success": True, "data": {"commands": gate}})
            elif kind == "get_state":
                state: dict[str, Any] = {"isStreaming": False, "isCompacting": False}
                if self.session_file is not None:
                    state["sessionFile"] = self.session_file
                self.write({**reply, "success": True, "data": state})
            elif kind == "prompt" and self.refusal:
                self.write({**reply, "success": False, "error": self.refusal})
            elif kind == "prompt":
                self._note("task", command.get("message"))
                self.write({**reply, "success": True})
                self.prompted.set()
            elif kind == "steer":
                with self.answered:
                    self.steering.append(str(command.get("message")))
                    self.steered += 1
                    self.answered.notify_all()
                    queued = list(self.steering)
                self._note("steers", self.steered)
                self.write({"type": "queue_update", "steering": queued, "followUp": []})
                self.write({**reply, "success": True})
            elif kind == "extension_ui_response":
                with self.answered:
                    self.answers[str(ident)] = command
                    self.answered.notify_all()
        self.ended.set()
        with self.answered:
            self.answered.notify_all()
        os._exit(0)  # pi shuts down when its input ends

    def wait_steer(self, count: int) -> None:
        with self.answered:
            self.answered.wait_for(lambda: self.steered >= count or self.ended.is_set())

    def deliver_steering(self) -> None:
        with self.answered:
            taken, self.steering = self.steering, []
        self.write({"type": "turn_start"})
        self.write({"type": "queue_update", "steering": [], "followUp": []})
        for text in taken:
            message = {"role": "user", "content": [{"type": "text", "text": text}]}
            self.write({"type": "message_start", "message": message})
            self.write({"type": "message_end", "message": message})

    def ask(self, number: int, call: dict[str, Any]) -> None:
        ident = f"ui-{number}"
        question = json.dumps(call)
        request = {"type": "extension_ui_request", "id": ident, "method": "input"}
        self.write({**request, "title": "baton-gate/1", "placeholder": question})
        with self.answered:
            self.answered.wait_for(lambda: ident in self.answers or self.ended.is_set())
        response = self.answers.get(ident, {})
        answer = json.loads(response.get("value") or "{}")
        self._note("answers", answer)
        allowed = answer.get("allow") is True
        text = f"ran {json.dumps(answer.get('input', call['input']))}"
        reason = answer.get("reason") or "Blocked: Baton's approval gate did not answer."
        result = {"content": [{"type": "text", "text": text if allowed else reason}]}
        end = {"type": "tool_execution_end", "toolCallId": call["toolCallId"]}
        self.write({**end, "toolName": call["toolName"], "result": result, "isError": not allowed})


def main() -> int:
    script = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    argv = sys.argv[2:]
    if argv[:1] in (["--version"], ["-v"]):
        version = str(script.get("version", "0.73.1"))
        # pi 0.73.1 prints its version on stderr, 1.x on stdout
        print(version, file=sys.stderr if version.startswith("0.") else sys.stdout, flush=True)
        return int(script.get("version_exit", 0))
    out = sys.stdout.buffer
    if script.get("record"):
        _record(script["record"], argv, {})
    rpc = None
    if "--mode" in argv and argv[argv.index("--mode") + 1 :][:1] == ["rpc"]:
        rpc = Rpc(argv, script.get("record"), script.get("refuse_prompt"))
        rpc.prompted.wait()
    asked = 0
    for step in script.get("steps", []):
        with rpc.lock if rpc is not None else contextlib.nullcontext():
            if _play(step, out):
                continue
        if "ask" in step and rpc is not None:
            asked += 1
            rpc.ask(asked, step["ask"])
        elif "wait_steer" in step and rpc is not None:
            rpc.wait_steer(int(step["wait_steer"]))
        elif step.get("deliver_steering") and rpc is not None:
            rpc.deliver_steering()
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
        elif step.get("hang"):
            out.flush()
            threading.Event().wait()
        elif "exit" in step:
            out.flush()
            return int(step["exit"])
        out.flush()
    if rpc is not None:
        rpc.ended.wait()
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: a normal exit aborts (SIGABRT) while the RPC thread is blocked reading stdin
    os._exit(status)
