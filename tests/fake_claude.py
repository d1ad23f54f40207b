"""A fake ``claude`` CLI: a real child process that speaks Claude Code's stdio protocol.

The backend tests run it instead of Claude Code so every path — approvals answered over stdin,
``interrupt``, a CLI that ignores both the interrupt and SIGTERM — is exercised with a real
process, real pipes and real signals, in milliseconds and without Node.

Run as ``python fake_claude.py <scenario.json> [the arguments claude would get]``
(:func:`install` writes an executable wrapper doing that). The scenario:

``log``
    A JSONL file the fake appends to: first ``{"argv", "cwd", "pid"}``, then ``{"stdin": …}``
    for every message it reads, so tests can assert what the backend sent.
``steps``
    Done in order, after the ``initialize`` request was answered and the task was read:

    * ``{"print": {...}}`` — one stdout line; ``{"raw": "text"}`` — a line as is (garbage);
      ``{"stderr": "text"}``;
    * ``{"ask": {"tool_name", "input", "tool_use_id"}, "request_id": "…"}`` — a
      ``can_use_tool`` request; waits for its answer and prints the tool result a real CLI
      would (``allow``: ``ran: <command>``; ``deny``: the message as an error);
      ``then_print`` lines go out while it waits. An
      ``interrupt`` while waiting withdraws the question (``control_cancel_request``) and ends
      the turn like Claude Code 2.0.76 does;
    * ``{"await_interrupt": true}`` — blocks until an ``interrupt`` and answers it with an
      ``error_during_execution`` result;
    * ``{"await_user": N}`` — blocks until N user messages came after the task (a person
      talking to the step); like the real CLI it prints nothing on receiving one, and
      messages that come while it does something else are taken too (and logged);
    * ``{"await_response": "<request id>"}`` — waits for the answer to a request it printed;
    * ``{"exit": N}`` — exits at once.
``ignore_interrupt``, ``ignore_sigterm``
    Never answer an interrupt (and hang); survive SIGTERM (only SIGKILL ends the fake).
``exit_code``
    After the steps the fake reads stdin to its end (as the real CLI waits for more user
    messages) and exits with this code.

The builders below (:func:`init`, :func:`streamed_text`, :func:`tool_use`, :func:`result`, …)
make lines shaped like the real CLI's, for scenarios and parser tests alike.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

SESSION = "fake-session"


# ------------------------------------------------------------------------------- builders


def init(model: str = "claude-sonnet-4-5", cwd: str = "/work") -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "init",
        "cwd": cwd,
        "session_id": SESSION,
        "tools": ["Bash", "Read"],
        "model": model,
        "permissionMode": "default",
        "claude_code_version": "0.0.0-fake",
    }


def stream(event: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    return {
        "type": "stream_event",
        "event": event,
        "session_id": SESSION,
        "parent_tool_use_id": parent,
    }


def assistant(
    message_id: str,
    block: dict[str, Any],
    *,
    model: str = "claude-sonnet-4-5",
    usage: dict[str, int] | None = None,
    parent: str | None = None,
) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": None,
            "usage": usage or {"input_tokens": 10, "output_tokens": 1},
        },
        "parent_tool_use_id": parent,
        "session_id": SESSION,
    }


def streamed_text(
    message_id: str,
    pieces: list[str],
    *,
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read: int = 0,
    cache_write: int = 0,
    model: str = "claude-sonnet-4-5",
) -> list[dict[str, Any]]:
    """One API message holding one text block, streamed as Claude Code 2.0.76 prints it."""
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": 1,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }
    start = {"id": message_id, "model": model, "role": "assistant", "content": [], "usage": usage}
    lines = [
        stream({"type": "message_start", "message": start}),
        stream({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}),
    ]
    lines += [
        stream(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
        )
        for p in pieces
    ]
    lines += [
        assistant(message_id, {"type": "text", "text": "".join(pieces)}, usage=usage),
        stream({"type": "content_block_stop", "index": 0}),
        stream(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": output_tokens},
            }
        ),
        stream({"type": "message_stop"}),
    ]
    return lines


def tool_use(message_id: str, call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call as a whole ``assistant`` line (no partial messages)."""
    block = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    return assistant(message_id, block)


def tool_result(
    call_id: str, text: str | list[dict[str, Any]], *, is_error: bool = False
) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}
    return {
        "type": "user",
        "message": {"role": "user", "content": [block]},
        "parent_tool_use_id": None,
        "session_id": SESSION,
    }


def result(
    text: str | None = "done",
    *,
    is_error: bool = False,
    subtype: str = "success",
    num_turns: int = 1,
    cost: float = 0.001,
    usage: dict[str, int] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "num_turns": num_turns,
        "session_id": SESSION,
        "total_cost_usd": cost,
        "usage": usage
        or {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
        **extra,
    }
    if text is not None:
        line["result"] = text
    return line


def install(folder: Path, scenario: dict[str, Any]) -> Path:
    """Write ``scenario`` and an executable ``claude`` wrapper into ``folder``; return it."""
    scenario_path = folder / "scenario.json"
    scenario_path.write_text(json.dumps(scenario), encoding="utf-8")
    wrapper = folder / "claude"
    wrapper.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" "{scenario_path}" "$@"\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    return wrapper


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# ------------------------------------------------------------------------------- the fake


class _Interrupted(Exception):
    pass


class FakeClaude:
    def __init__(self, scenario: dict[str, Any]) -> None:
        self.scenario = scenario
        self.log_path = Path(scenario["log"])
        self.user_messages = 0
        """User messages read after the task."""

    def log(self, entry: dict[str, Any]) -> None:
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    def print(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def read(self) -> dict[str, Any] | None:
        line = sys.stdin.readline()
        if not line:
            return None
        message: dict[str, Any] = json.loads(line)
        self.log({"stdin": message})
        if message.get("type") == "user":
            self.user_messages += 1
        return message

    def hang(self) -> None:
        """A CLI stuck for good: only a signal ends it."""
        threading.Event().wait()

    def answer_interrupt(self, request_id: str) -> None:
        if self.scenario.get("ignore_interrupt"):
            while self.read() is not None:
                pass
            self.hang()
        response = {"subtype": "success", "request_id": request_id}
        self.print({"type": "control_response", "response": response})

    def run(self) -> int:
        if self.scenario.get("ignore_sigterm"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        self.log({"argv": sys.argv[2:], "cwd": os.getcwd(), "pid": os.getpid()})
        if "--append-system-prompt-file" in sys.argv:  # what the real CLI would read from it
            path = Path(sys.argv[sys.argv.index("--append-system-prompt-file") + 1])
            mode = path.stat().st_mode & 0o777
            self.log({"prompt_file": str(path), "mode": mode, "text": path.read_text()})
        first = self.read()
        if first and first.get("type") == "control_request":
            response = {"subtype": "success", "request_id": first["request_id"], "response": {}}
            self.print({"type": "control_response", "response": response})
            self.read()  # the task
            self.user_messages = 0
        try:
            for step in self.scenario.get("steps", []):
                self.step(step)
        except _Interrupted:
            self.print(result(None, subtype="error_during_execution"))
        while (message := self.read()) is not None:
            if message.get("request", {}).get("subtype") == "interrupt":
                self.answer_interrupt(message["request_id"])
        return int(self.scenario.get("exit_code", 0))

    def step(self, step: dict[str, Any]) -> None:
        if "print" in step:
            self.print(step["print"])
        elif "raw" in step:
            sys.stdout.write(step["raw"] + "\n")
            sys.stdout.flush()
        elif "stderr" in step:
            sys.stderr.write(step["stderr"] + "\n")
            sys.stderr.flush()
        elif "exit" in step:
            sys.exit(int(step["exit"]))
        elif "ask" in step:
            self.ask(step["request_id"], step["ask"], step.get("then_print", []))
        elif "await_response" in step:
            while (message := self.read()) is not None:
                if message.get("response", {}).get("request_id") == step["await_response"]:
                    return
            self.hang()
        elif "await_user" in step:
            while self.user_messages < int(step["await_user"]):
                if self.read() is None:
                    self.hang()
        elif step.get("await_interrupt"):
            while (message := self.read()) is not None:
                if message.get("request", {}).get("subtype") == "interrupt":
                    self.answer_interrupt(message["request_id"])
                    raise _Interrupted
            self.hang()

    def ask(self, request_id: str, ask: dict[str, Any], then_print: list[Any]) -> None:
        request = {"subtype": "can_use_tool", **ask, "permission_suggestions": []}
        self.print({"type": "control_request", "request_id": request_id, "request": request})
        for line in then_print:
            self.print(line)
        call_id = ask["tool_use_id"]
        while (message := self.read()) is not None:
            if message.get("request", {}).get("subtype") == "interrupt":
                self.print({"type": "control_cancel_request", "request_id": request_id})
                self.answer_interrupt(message["request_id"])
                error = "Tool permission request failed: AbortError"
                self.print(tool_result(call_id, error, is_error=True))
                raise _Interrupted
            response = message.get("response", {})
            if message.get("type") != "control_response" or response.get("request_id") != (
                request_id
            ):
                continue
            answer = response.get("response", {})
            if answer.get("behavior") == "allow":
                command = answer.get("updatedInput", {}).get("command", "")
                self.print(tool_result(call_id, f"ran: {command}"))
            else:
                self.print(tool_result(call_id, answer.get("message", ""), is_error=True))
            return
        self.hang()


if __name__ == "__main__":
    scenario_file = Path(sys.argv[1])
    sys.exit(FakeClaude(json.loads(scenario_file.read_text(encoding="utf-8"))).run())
