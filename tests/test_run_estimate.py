"""``baton run PRESET --estimate``: the median of the preset's earlier runs, printed without
running anything (no request reaches the scripted server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.record.run_files import RunIndex
from tests.llm_server import LLMServer, Reply, Tokens


def _preset(folder: Path) -> list[str]:
    presets = folder / ".baton" / "presets"
    presets.mkdir(parents=True)
    (presets / "look.yaml").write_text(
        "name: look\nmode: single\nsteps:\n  - {agent: scout, task: look}\n", encoding="utf-8"
    )
    return ["--cwd", str(folder), "--trust-project"]


def test_estimate_prints_earlier_runs_and_runs_nothing(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings())
    where = _preset(tmp_path)
    assert main(["run", "look", "--estimate", *where]) == 0
    assert capsys.readouterr().out.strip() == "look: no estimate yet"

    llm_server.queue(Reply.answer("seen", tokens=Tokens(prompt=1000, completion=100)))
    assert main(["run", "look", "--model", "gpt-4o-mini", *where]) == 0
    capsys.readouterr()
    runs_before, requests_before = len(RunIndex().list()), len(llm_server.requests)

    assert main(["run", "look", "--estimate", *where]) == 0
    out = capsys.readouterr().out
    assert out.startswith("look: usually $0.0002 and 1.1k tokens (median of 1 earlier run)"), out
    assert main(["run", "look", "--estimate", "--json", *where]) == 0
    found = json.loads(capsys.readouterr().out)["estimate"]
    assert (found["runs"], found["tokens"], found["priced"]) == (1, 1100, True)
    assert len(RunIndex().list()) == runs_before  # nothing ran
    assert len(llm_server.requests) == requests_before


def test_estimate_needs_a_known_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = _preset(tmp_path)
    assert main(["run", "--agent", "scout", "--task", "x", "--estimate", *where]) == 2
    assert "--estimate needs a preset" in capsys.readouterr().err
    assert main(["run", "nosuch", "--estimate", *where]) == 2
    assert "unknown preset 'nosuch'" in capsys.readouterr().err
