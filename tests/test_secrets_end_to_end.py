"""Acceptance: a secret in the environment, split across three deltas, and inside a base_url
appears 0 times in run files, ``--json`` and plain stdout, md/json exports, error messages and
the scripted model server's request log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.cli import main
from core.config.settings import config_path
from core.record.run_files import RunIndex, runs_dir
from tests.llm_server import MODEL, LLMServer, Reply

SECRET = "tok-acceptance-7f3e2d1c0b9a8877"
URL_SECRET = "pw-in-the-url-55aa66bb77cc"


def write_config(base_url: str, **limits: Any) -> None:
    """config.yaml as a person might write it, unvalidated (settings may well refuse a
    base_url with credentials: then that refusal must not show the key either)."""
    config: dict[str, Any] = {
        "providers": [{"name": "test", "base_url": base_url}],
        "default_model": MODEL,
    }
    if limits:
        config["limits"] = limits
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(yaml.safe_dump(config), encoding="utf-8")


def run(cwd: Path, *extra: str) -> int:
    return main(
        ["run", "--agent", "worker", "--task", "go", "--approve", "all", "--cwd", str(cwd), *extra]
    )


def every_output(capsys: pytest.CaptureFixture[str], server: LLMServer) -> str:
    """Everything Baton wrote or sent: the run files, exports of every run, the request log."""
    parts = [f.read_text(encoding="utf-8") for f in sorted(runs_dir().glob("*.jsonl"))]
    for record in RunIndex().list():
        parts.append(record.model_dump_json())
        for fmt in ("md", "json"):
            assert main(["runs", "export", record.id, "--format", fmt]) == 0
    assert main(["runs", "list", "--json"]) == 0
    captured = capsys.readouterr()
    parts += [captured.out, captured.err]
    for request in server.all_requests:
        parts += [request.path, json.dumps(request.headers), json.dumps(request.body)]
    return "\n".join(parts)


def test_secrets_appear_nowhere(
    llm_server: LLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    (tmp_path / ".env").write_text(f"MY_SERVICE_TOKEN={SECRET}\n", encoding="utf-8")
    answer = f"Key: {SECRET}."
    assert len(answer) == 37  # deltas of 13, 13 and 11 characters: both cuts in the secret
    write_config(llm_server.base_url)

    transcript: dict[str, str] = {}
    for mode in ("--json", "plain"):
        llm_server.queue(
            Reply.tool("read", {"path": ".env"}),
            Reply.tool("bash", {"command": "printenv MY_SERVICE_TOKEN"}),
            Reply.answer(answer),
        )
        assert run(tmp_path, *(["--json"] if mode == "--json" else [])) == 0
        transcript[mode] = capsys.readouterr().out
    assert transcript["plain"].count("Key: [redacted].") == 1
    assert sum("[redacted]" in line for line in transcript["--json"].splitlines()) >= 3

    # A key in the base_url: against the server, then against a port nobody listens on (the
    # error names the URL).
    url = llm_server.base_url.replace("http://", f"http://user:{URL_SECRET}@")
    write_config(url, max_retries=0)
    llm_server.queue(Reply.answer("fine"))
    run(tmp_path, "--json")
    write_config(f"http://user:{URL_SECRET}@127.0.0.1:9/v1", max_retries=0)
    assert run(tmp_path) != 0

    everything = every_output(capsys, llm_server)
    assert SECRET not in everything
    assert URL_SECRET not in everything
    assert everything.count("Key: [redacted].") >= 4  # the answer survives, redacted
