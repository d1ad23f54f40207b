"""A ``baton run`` typed by an agent: linked to the step that started it, one level at most."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.events import RunStarted
from core.nesting import PARENT_VARIABLE, NestedRunRefused, current_parent
from core.run_request import RunRequest, StepSpec
from core.runner import Runner
from core.runs import RunIndex, load_run
from core.settings import save_settings
from tests.llm_server import LLMServer, Reply

REPO = Path(__file__).resolve().parents[1]


def test_a_run_started_by_a_step_is_linked_to_that_step(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Unsandboxed: inside the sandbox Baton's own folders are hidden, so a nested baton there
    # could not even record its run.
    save_settings(llm_server.settings(sandbox={"enabled": False}))
    inner = (
        f"cd {shlex.quote(str(REPO))} && {shlex.quote(sys.executable)} -m core.cli run "
        f"--agent scout --task 'inner work' --cwd {shlex.quote(str(tmp_path))}"
    )
    llm_server.queue(
        Reply.tool("bash", {"command": inner}),
        Reply.answer("inner done"),
        Reply.answer("outer done"),
    )
    task = ["--agent", "worker", "--task", "start one"]
    code = main(["run", *task, "--cwd", str(tmp_path), "--approve", "all"])
    assert code == 0, capsys.readouterr().err
    records = {r.id: r for r in RunIndex().list()}
    assert len(records) == 2
    starts = [load_run(Path(r.path))[0] for r in records.values()]
    outer = next(s for s in starts if isinstance(s, RunStarted) and s.parent_run is None)
    child = next(s for s in starts if isinstance(s, RunStarted) and s.parent_run is not None)
    assert (child.parent_run, child.parent_step) == (outer.run_id, 0)
    record = records[child.run_id]
    assert record.origin is not None
    assert record.origin.describe() == f"started by run {outer.run_id}, step 1"


def test_a_run_two_levels_down_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PARENT_VARIABLE, "20260101-120000-abcdef:2:2")
    parent = current_parent()
    assert parent is not None and (parent.step, parent.depth) == (2, 2)
    runner = Runner(
        RunRequest(mode="single", steps=[StepSpec(agent="scout", task="x")], cwd=tmp_path),
        record=False,
    )
    with pytest.raises(NestedRunRefused, match="one level of nested runs"):
        runner.prepare()


def test_a_malformed_marker_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PARENT_VARIABLE, "nonsense")
    assert current_parent() is None
