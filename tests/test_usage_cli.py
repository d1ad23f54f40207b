"""``baton usage``: saved runs made against the scripted server, grouped per agent, model and
day; a cost no price table knows shows as "$—", never as $0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.record.run_files import RunIndex
from tests.llm_server import LLMServer, Reply, Tokens

# gpt-4o-mini: $0.15 per million input tokens, $0.60 per million output tokens.
PRICED = Tokens(prompt=100_000, completion=10_000)  # $0.015 + $0.006 = $0.021


def _two_runs(server: LLMServer, folder: Path) -> None:
    save_settings(server.settings())
    server.queue(Reply.tool("ls", {"path": "."}, tokens=PRICED), Reply.answer("done"))
    priced = ["--agent", "scout", "--task", "look", "--model", "gpt-4o-mini"]
    assert main(["run", *priced, "--cwd", str(folder)]) == 0
    server.queue(Reply.answer("planned", tokens=Tokens(prompt=500, completion=50)))
    assert main(["run", "--agent", "planner", "--task", "plan", "--cwd", str(folder)]) == 0


def test_usage_per_agent_model_and_day(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_runs(llm_server, tmp_path)
    capsys.readouterr()

    assert main(["usage", "--by", "agent", "--json"]) == 0
    rows = {row["key"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert set(rows) == {"scout", "planner"}
    assert (rows["scout"]["runs"], rows["scout"]["steps"]) == (1, 1)
    assert rows["scout"]["input"] >= 100_000 and rows["scout"]["priced"]
    assert rows["scout"]["cost"] == pytest.approx(0.021, abs=0.001)
    assert rows["planner"]["priced"] is False and rows["planner"]["cost"] is None

    assert main(["usage", "--by", "model"]) == 0
    out = capsys.readouterr().out
    header, *lines = out.splitlines()
    assert header.split() == ["MODEL", "RUNS", "STEPS", "IN", "OUT", "COST"]
    by_model = {line.split()[0]: line.split() for line in lines if line.strip()}
    assert by_model["gpt-4o-mini"][-1].startswith("$0.021")
    unpriced = next(cells for model, cells in by_model.items() if model != "gpt-4o-mini")
    assert unpriced[-1] == "$—", out

    assert main(["usage", "--by", "day", "--json"]) == 0
    [day] = json.loads(capsys.readouterr().out)["rows"]
    assert (day["runs"], day["steps"]) == (2, 2) and day["priced"] is False
    assert day["cost"] == pytest.approx(0.021, abs=0.001)  # the priced part, shown as ≥
    assert main(["usage", "--by", "day"]) == 0
    assert "≥$0.021" in capsys.readouterr().out


def test_since_leaves_older_runs_out_and_a_bad_date_is_refused(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_runs(llm_server, tmp_path)
    capsys.readouterr()
    assert main(["usage", "--since", "2999-01-01"]) == 0
    assert "No saved runs since 2999-01-01." in capsys.readouterr().out
    assert main(["usage", "--since", "2000-01-01", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 2
    with pytest.raises(SystemExit) as exit_:
        main(["usage", "--since", "last tuesday"])
    assert exit_.value.code == 2
    assert "not a date" in capsys.readouterr().err


def test_a_run_whose_file_is_gone_still_counts_by_day(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_runs(llm_server, tmp_path)
    capsys.readouterr()
    for record in RunIndex().list():
        Path(record.path).unlink()
    assert main(["usage", "--by", "day", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"][0]["runs"] == 2 and len(report["unreadable_runs"]) == 2
    assert main(["usage", "--by", "agent"]) == 0
    assert "2 runs left out" in capsys.readouterr().out


def test_no_runs_yet(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage"]) == 0
    assert "No saved runs yet." in capsys.readouterr().out
