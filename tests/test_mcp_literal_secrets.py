"""Literal secrets in MCP server entries — a header value, a secret environment value, a token
in an argument or a URL, in the user's ``mcp.json`` or a project's ``.mcp.json`` — are
redacted from every output: the run file (a model that reads ``.mcp.json`` cannot copy the
token into it), ``baton mcp list``, and the trust question's listing and diff. Each test is the
attack it names; the shape check keeps ordinary values (paths, package names, dates) shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.config import paths
from core.config.mcp_servers import looks_secret
from core.record.run_files import run_file
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety.redaction import Redactor
from core.safety.trust import TrustStore
from core.safety.untrusted import UntrustedProjectError
from tests.llm_server import LLMServer, Reply
from tests.mcp_support import (
    configure,
    finished_calls,
    run,
    sdk_server,
    wait_no_server_left,
    write_agent,
)

HEADER = "Bearer tok-9f8e7d6c5b4a39281706"
TOKEN = HEADER.removeprefix("Bearer ")
ENV_VALUE = "envsecret-0a1b2c3d4e5f6a7b8c9d"
ARG_VALUE = "argsecret-1a2b3c4d5e6f7a8b9c0d"
URL_PASSWORD = "urlsecret-2b3c4d5e6f7a8b9c0d1e"
SECRETS = (TOKEN, ENV_VALUE, ARG_VALUE, URL_PASSWORD)


def mcp_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    servers = {
        "tracker": {
            "type": "http",
            "url": f"https://bot:{URL_PASSWORD}@mcp.example.com/mcp",
            "headers": {"Authorization": HEADER},
        },
        "files": {
            "command": "npx",
            "args": ["-y", "@scope/server-files-2024-01-01", f"--key={ARG_VALUE}"],
            "env": {"OPAQUE": ENV_VALUE, "LOG_LEVEL": "debug-verbose-mode", "HOME_DIR": "/srv"},
        },
    }
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    mcp_file(root / ".mcp.json")
    return root


def test_the_shape_check_takes_tokens_and_leaves_ordinary_values() -> None:
    for value in (
        *SECRETS,
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "--token=sk0123456789abcdefgh",
    ):
        assert looks_secret(value), value
    for value in ("debug-verbose-mode", "@scope/server-files-2024-01-01", "/usr/local/bin/x", "1"):
        assert not looks_secret(value), value


@pytest.mark.parametrize("where", ["user", "project"])
def test_a_redactor_knows_the_literal_secrets_of_either_file(tmp_path: Path, where: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    mcp_file(paths.config_dir() / "mcp.json" if where == "user" else root / ".mcp.json")
    text = f"{HEADER} {ENV_VALUE} {ARG_VALUE} https://bot:{URL_PASSWORD}@mcp.example.com"
    scrubbed = Redactor.configured([root]).scrub(text)
    assert not any(secret in scrubbed for secret in SECRETS), scrubbed
    assert Redactor.configured([root]).scrub("debug-verbose-mode") == "debug-verbose-mode"


def test_attack_baton_mcp_list_never_prints_a_literal_secret(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = project(tmp_path)
    mcp_file(paths.config_dir() / "mcp.json")
    for argv in (["list"], ["list", "--json"]):
        assert main(["mcp", "--cwd", str(root), *argv]) == 0
        out, err = capsys.readouterr()
        assert "tracker" in out and "files" in out
        assert not any(secret in out + err for secret in SECRETS), out


def test_attack_the_trust_question_never_shows_a_literal_secret(tmp_path: Path) -> None:
    root = project(tmp_path)
    request = RunRequest(mode="single", steps=[StepSpec("scout", "x")], cwd=root, backend="claude")
    with pytest.raises(UntrustedProjectError) as asked:
        Runner(request, record=False).prepare()
    assert "MCP server tracker" in str(asked.value) and "MCP server files" in str(asked.value)
    assert not any(secret in str(asked.value) for secret in SECRETS), asked.value

    # Trusted, then changed: the diff of .mcp.json is printed without the secrets either.
    TrustStore().trust(root)
    data = json.loads((root / ".mcp.json").read_text())
    data["mcpServers"]["tracker"]["headers"]["X-Other"] = HEADER + "0"
    (root / ".mcp.json").write_text(json.dumps(data, indent=1))
    with pytest.raises(UntrustedProjectError) as again:
        Runner(request, record=False).prepare()
    assert "changed since you trusted it: .mcp.json (changed)" in str(again.value)
    assert not any(secret in str(again.value) for secret in SECRETS), again.value


async def test_attack_a_model_reading_the_mcp_file_leaves_no_secret_in_the_run_file(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    root = project(tmp_path)
    TrustStore().trust(root)
    agents = paths.config_dir() / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "helper.md").write_text(
        "---\nname: helper\ndescription: Helps.\ntools: read\n---\nYou help.\n"
    )
    llm_server.queue(
        Reply.tool("read", {"path": ".mcp.json"}),
        Reply.answer(f"The header is {HEADER} and the key {ARG_VALUE}."),
    )
    runner = Runner(
        RunRequest(mode="single", steps=[StepSpec("helper", "Show me")], cwd=root),
        settings=llm_server.settings(),
    )
    await runner.run()
    assert runner.result is not None and runner.result.status == "ok", runner.result
    text = run_file(runner.run_id).read_text(encoding="utf-8")
    assert "mcpServers" in text  # the file was read and recorded
    assert not any(secret in text for secret in SECRETS)


def test_attack_a_tool_result_carrying_a_literal_env_secret_is_redacted(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """The server holds a token from its ``env`` (named plainly, so only its shape says it is
    one) and a tool hands it back: neither the model nor the run file sees it."""
    server = sdk_server()
    configure("t", server.model_copy(update={"env": {**server.env, "OPAQUE": ENV_VALUE}}))
    write_agent("mcp-user", "mcp: [t]")
    llm_server.queue(Reply.tool("mcp__t__environment", {"name": "OPAQUE"}), Reply.answer("ok"))
    status, events = run(llm_server, tmp_path)
    assert status == "ok"
    (call,) = finished_calls(events)
    assert call.status == "ok" and "[redacted]" in call.result
    assert ENV_VALUE not in str(llm_server.requests[-1].body)
    assert all(ENV_VALUE not in event.model_dump_json() for event in events)
    wait_no_server_left()
