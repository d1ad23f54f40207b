"""A ``baton run`` typed by an agent: linked to the step that started it, one level at most."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import psutil
import pytest

from core.cli import main
from core.config.paths import data_dir
from core.config.settings import save_settings
from core.documents.store import DocumentStore
from core.model.events import RunStarted
from core.record.run_files import RunIndex, load_run
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.safety import step_shells
from core.safety.nesting import PARENT_VARIABLE, NestedRunRefused, current_parent
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


def _baton(arguments: str, *, prefix: str) -> str:
    """A ``baton`` command line as an agent would type it in bash, behind ``prefix``."""
    return (
        f"cd {shlex.quote(str(REPO))} && {prefix} {shlex.quote(sys.executable)} -m core.cli "
        f"{arguments}"
    )


@pytest.mark.parametrize(
    "prefix",
    ["env -u BATON_PARENT_RUN", "env BATON_PARENT_RUN=forged:0:0"],
    ids=["env-u", "forged-depth"],
)
def test_dropping_the_marker_does_not_escape_the_recursion_guard(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], prefix: str
) -> None:
    """The attack, with the sandbox off: each level strips (or forges) the environment marker
    before typing ``baton run``. The process tree still says who started it."""
    save_settings(llm_server.settings(sandbox={"enabled": False}))
    cwd = shlex.quote(str(tmp_path))
    deepest = _baton(f"run --agent scout --task deepest --cwd {cwd}", prefix=prefix)
    inner = _baton(f"run --agent worker --task inner --cwd {cwd} --approve all", prefix=prefix)
    llm_server.queue(
        Reply.tool("bash", {"command": inner}),  # the outer step starts a nested run
        Reply.tool("bash", {"command": deepest}),  # which tries to go one level deeper
        Reply.answer("inner done"),
        Reply.answer("outer done"),
    )
    code = main(
        ["run", "--agent", "worker", "--task", "outer", "--cwd", str(tmp_path), "--approve", "all"]
    )
    assert code == 0, capsys.readouterr().err
    refused = llm_server.requests[2].tool_messages[-1]["content"]
    assert "Baton allows agents one level of nested runs" in refused
    records = {r.id: r for r in RunIndex().list()}
    assert len(records) == 2  # the deepest run never started
    starts = [load_run(Path(r.path))[0] for r in records.values()]
    outer = next(s for s in starts if isinstance(s, RunStarted) and s.parent_run is None)
    child = next(s for s in starts if isinstance(s, RunStarted) and s.parent_run is not None)
    assert (child.parent_run, child.parent_step) == (outer.run_id, 0)


def test_a_document_edit_typed_by_an_agent_is_recorded_as_the_steps(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    save_settings(llm_server.settings(sandbox={"enabled": False}))
    doc = DocumentStore.default().create("notes", "a person's words")
    edit = _baton(
        f"docs edit {doc.id} --content 'the agent words'", prefix="env -u BATON_PARENT_RUN"
    )
    add = _baton("docs add --title planted --content x", prefix="env -u BATON_PARENT_RUN")
    llm_server.queue(Reply.tool("bash", {"command": f"({edit}) && {add}"}), Reply.answer("done"))
    code = main(
        ["run", "--agent", "worker", "--task", "t", "--cwd", str(tmp_path), "--approve", "all"]
    )
    assert code == 0, capsys.readouterr().err
    (record,) = RunIndex().list()
    store = DocumentStore.default()
    edited = store.history(doc.id)[-1].written_by
    assert (edited.run_id, edited.step, edited.agent) == (record.id, 0, "worker")
    assert edited.describe() == f"worker (run {record.id}, step 1)"
    (planted,) = [d for d in store.export() if d.title == "planted"]
    assert planted.provenance.run_id == record.id and not planted.provenance.by_person


def test_a_process_outside_any_step_has_no_parent() -> None:
    assert current_parent() is None


def test_a_record_left_by_an_ended_shell_does_not_match_a_reused_pid() -> None:
    """Records are keyed by pid *and* start time: a stale one (its shell ended, the pid now
    this process's parent) says nothing."""
    parent = os.getppid()
    folder = data_dir() / step_shells.FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    stale = {"started": 1.0, "run_id": "old", "step": 0, "agent": "a", "depth": 1}
    (folder / f"{parent}.json").write_text(json.dumps(stale), encoding="utf-8")
    assert step_shells.nearest_step_shell() is None
    live = {**stale, "started": psutil.Process(parent).create_time()}
    (folder / f"{parent}.json").write_text(json.dumps(live), encoding="utf-8")
    assert step_shells.nearest_step_shell() == step_shells.StepShell("old", 0, "a", 1)
