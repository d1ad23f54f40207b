"""Secrets, everywhere, each written as the attack: a known key in a batch input (progress,
status, export, the stores), in a file and a file name (``runs diff``, the checkpoint index),
and a model that has bash print the key encoded, reversed or in halves."""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, unquote_plus

import pytest

from core.cli import main
from core.config.paths import data_dir
from core.config.settings import save_settings
from core.model.events import Event, ToolCallOutput
from core.record.run_files import RunIndex
from core.safety.redaction import OutputJoiner, Redactor, StreamRedactor
from tests.llm_server import LLMServer, Reply

SECRET = "tok-acc+ept=ance-7f3e2d1c0b9a8877"
"""Known to Baton (a secret-named environment variable); ``+`` and ``=`` make its
URL-encoded form differ from it."""
FIRST, SECOND = SECRET[:16], SECRET[16:]
ENV_LINE = f"MY_SERVICE_TOKEN={SECRET}\n"


@pytest.fixture(autouse=True)
def known_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)


def revealed(text: str) -> list[str]:
    """How ``text`` gives the secret away (empty: it does not): as it is, reversed, URL-encoded,
    in either half, or inside any base64, base64url or hex run in it."""
    found = [
        how
        for how, shown in (
            ("plain", text),
            ("reversed", text[::-1]),
            ("url-encoded", unquote(text)),
            ("form-encoded", unquote_plus(text)),
        )
        if SECRET in shown
    ]
    found += [f"half {half!r}" for half in (FIRST, SECOND) if half in text]
    for run in re.findall(r"[A-Za-z0-9+/=_-]{16,}", text):
        for candidate in (run, run.replace("-", "+").replace("_", "/")):
            for skip in range(4):  # a run may start mid-group
                piece = candidate[skip:].rstrip("=")
                piece = piece[: len(piece) // 4 * 4]
                try:
                    if SECRET.encode() in base64.b64decode(piece):
                        found.append("base64")
                except (binascii.Error, ValueError):
                    pass
    for run in re.findall(r"[0-9a-fA-F]{16,}", text):
        for skip in (0, 1):
            piece = run[skip:]
            piece = piece[: len(piece) // 2 * 2]
            if SECRET.encode() in bytes.fromhex(piece):
                found.append("hex")
    return found


ENCODINGS = {
    "base64 of the whole line": "base64 -w0 .env",
    "base64url": "cut -d= -f2- .env | tr -d '\\n' | base64 -w0 | tr '+/' '-_'",
    "hex": "cut -d= -f2- .env | tr -d '\\n' | od -An -v -tx1 | tr -d ' \\n'",
    "url-encoded": "python3 -c 'import urllib.parse as u;print(u.quote(open(\".env\").read()))'",
    "reversed": "rev .env",
}


def test_the_oracle_sees_every_form() -> None:
    line = ENV_LINE.encode()
    assert "base64" in revealed(base64.b64encode(line).decode())
    assert "base64" in revealed(base64.urlsafe_b64encode(b"x" + line).decode())
    assert "hex" in revealed(line.hex())
    assert "reversed" in revealed(ENV_LINE[::-1])
    assert revealed("nothing here") == []


def test_encoded_reversed_or_halved_keys_never_reach_the_model(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack: the model has bash print the key in every form it can think of, then in two
    halves over two calls. Each form must reach neither the model nor the run file."""
    save_settings(llm_server.settings())
    (tmp_path / ".env").write_text(ENV_LINE, encoding="utf-8")
    halves = ["cut -c18-33 .env", "cut -c34- .env"]
    commands = [*ENCODINGS.values(), *halves]
    llm_server.queue(
        *(Reply.tool("bash", {"command": command}) for command in commands), Reply.answer("ok")
    )
    code = main(
        ["run", "--agent", "worker", "--task", "go", "--cwd", str(tmp_path), "--approve", "all"]
    )
    assert code == 0, capsys.readouterr().err
    results = llm_server.requests[-1].tool_messages
    assert len(results) == len(commands)
    for command, message in zip(commands, results, strict=True):
        content = message["content"]
        assert "Exit code 0" in content, (command, content)
        assert revealed(content) == [], (command, content)
    sent = json.dumps([r.body for r in llm_server.all_requests])
    assert revealed(sent) == []
    (record,) = RunIndex().list()
    assert SECRET not in Path(record.path).read_text(encoding="utf-8")


def test_a_key_in_two_halves_over_two_outputs_is_caught_in_each() -> None:
    joiner = OutputJoiner(Redactor([SECRET]))
    first = joiner.scrub(f"part one: {FIRST}\n\nExit code 0")
    second = joiner.scrub(f"{SECOND} was part two")
    assert FIRST not in first and SECOND not in second
    assert second.endswith(" was part two")
    joined = OutputJoiner(Redactor([SECRET]))  # back to back: the rest of a short start
    assert joined.scrub("x" + SECRET[:6]) + joined.scrub(SECRET[6:] + "y") == (
        f"x{SECRET[:6]}[redacted]y"
    )


def test_ordinary_outputs_pass_the_joiner_unchanged() -> None:
    joiner = OutputJoiner(Redactor([SECRET]))
    texts = ["total 8\ndrwxr-xr-x 2 me me 4096 core\n", "tok-acc is a prefix too short", "ok"]
    assert [joiner.scrub(text) for text in texts] == texts


def test_a_key_in_a_batch_input_is_nowhere(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    llm_server.responder = lambda body: Reply.answer("noted")
    inputs = tmp_path / "inputs.jsonl"
    rows = [{"args": [f"deploy with {SECRET}"]}, {"args": [f"and {SECRET} again"]}]
    inputs.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    code = main(["batch", "scout-and-plan", "--inputs", str(inputs), "--cwd", str(tmp_path)])
    shown = capsys.readouterr()
    assert code in (0, 1), shown.err
    batch_id = re.search(r"(\S+): \d+ of \d+ items", shown.err)
    assert batch_id is not None, shown.err
    outputs: list[Any] = [shown.out, shown.err]
    for extra in (["status"], ["status", "--json"]):
        assert main(["batch", extra[0], batch_id.group(1), *extra[1:]]) == 0
    for fmt in ("jsonl", "csv"):
        assert main(["batch", "export", batch_id.group(1), "--format", fmt]) == 0
    after = capsys.readouterr()
    outputs += [after.out, after.err]
    assert "[redacted]" in after.out
    stored = [p.read_bytes() for p in data_dir().rglob("*") if p.is_file()]
    assert all(SECRET.encode() not in blob for blob in stored)
    assert all(SECRET not in text for text in outputs)
    assert SECRET not in json.dumps([r.body for r in llm_server.all_requests])


def test_runs_diff_and_the_checkpoint_index_hide_a_key_in_a_file_and_a_file_name(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    (tmp_path / ".env").write_text(ENV_LINE, encoding="utf-8")
    command = 'cp .env notes.txt && echo named > "$(cut -d= -f2- .env | tr -d "\\n").txt"'
    llm_server.queue(Reply.tool("bash", {"command": command}), Reply.answer("done"))
    code = main(
        ["run", "--agent", "worker", "--task", "t", "--cwd", str(tmp_path), "--approve", "all"]
    )
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / f"{SECRET}.txt").is_file()  # the attack did write the file
    (record,) = RunIndex().list()
    capsys.readouterr()
    assert main(["runs", "diff", record.id]) == 0
    diff = capsys.readouterr().out
    assert "notes.txt" in diff and "[redacted]" in diff
    assert SECRET not in diff
    indexes = list((data_dir() / "checkpoints" / "indexes").iterdir())
    assert indexes
    assert all(SECRET.encode() not in index.read_bytes() for index in indexes)


def test_an_encoded_key_split_across_output_chunks_is_held_back_and_redacted() -> None:
    """The stream (run file, window, terminal) joins bash's chunks: a base64'd key cut in two
    must not be put back together there either."""
    encoded = base64.b64encode(ENV_LINE.encode()).decode()
    middle = len(encoded) // 2
    chunks = [f"out: {encoded[:middle]}", f"{encoded[middle:]}\ndone\n"]
    streaming = StreamRedactor(Redactor([SECRET]))
    events: list[Event] = [
        ToolCallOutput(run_id="r", step=0, ts=0.0, call_id="c", chunk=chunk) for chunk in chunks
    ]
    shown = [out for event in events for out in streaming.feed(event)] + streaming.flush()
    joined = "".join(e.chunk for e in shown if isinstance(e, ToolCallOutput))
    assert revealed(joined) == [] and joined.endswith("\ndone\n")
    assert "[redacted]" in joined
