"""Run search: real runs against the scripted server, found by their task, answer, tool
arguments and tool results, in any script, through ``baton runs search`` and :class:`RunSearch`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.history.run_search import PASSAGE_CHARS, RunSearch
from core.record.run_files import RunIndex
from tests.llm_server import LLMServer, Reply
from tests.test_run_state import sample_run
from tests.test_runs_cli import save


@pytest.fixture
def searched_run(llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A two-step chain: the scout reads a file (Chinese text inside) and answers; the
    planner answers. Returns the run id."""
    save_settings(llm_server.settings())
    (tmp_path / "notes.md").write_text("登录功能 needs a retry budget\n", encoding="utf-8")
    llm_server.queue(
        Reply.tool("read", {"path": "notes.md"}),
        Reply.answer("The handler lives in auth_service.py"),
        Reply.answer("Plan: add exponential backoff"),
    )
    chain = ["--chain", "scout=look for the login code", "planner=plan from {previous}"]
    assert main(["run", *chain, "--cwd", str(tmp_path)]) == 0
    capsys.readouterr()
    (record,) = RunIndex().list()
    return record.id


def test_every_kind_of_passage_is_found_with_its_step_and_call(searched_run: str) -> None:
    search = RunSearch()
    [task] = search.search("login").hits
    assert (task.run_id, task.step, task.kind) == (searched_run, 0, "task")
    assert task.snippet == "look for the [login] code"
    # The planner's task was filled with the scout's answer: both are found, later first.
    handed_on, output = search.search("auth_service").hits
    assert (handed_on.step, handed_on.kind) == (1, "task")
    assert (output.step, output.kind, output.snippet) == (
        0,
        "output",
        "The handler lives in [auth]_[service].py",  # marked as Documents marks it
    )
    [result] = search.search("登录").hits  # two CJK characters: a word-index token
    assert (result.step, result.kind, result.tool) == (0, "result", "read")
    assert result.call_id
    assert "[登录]" in result.snippet
    [arguments] = search.search('"notes.md"').hits
    assert (arguments.kind, arguments.call_id) == ("arguments", result.call_id)
    assert arguments.where() == "step 1 · tool call (read)"
    [later] = search.search("backoff").hits
    assert (later.step, later.kind) == (1, "output")
    assert search.search("功能需要").hits == []  # CJK substring that is not there
    assert search.search("zebra").hits == []


def test_prefixes_and_all_terms(searched_run: str) -> None:
    search = RunSearch()
    hits = search.search("hand").hits  # a word prefix
    assert [(h.step, h.kind) for h in hits] == [(1, "task"), (0, "output")]
    assert len(search.search("handler auth").hits) == 2
    assert search.search("handler backoff").hits == []  # every term in one passage


def test_query_syntax_never_reaches_fts5(searched_run: str) -> None:
    search = RunSearch()
    for query in ['"', "AND", "a OR b", "NEAR(", "*", "-", "col:x", "'"]:
        search.search(query)  # no sqlite3.OperationalError


def test_cli_search_text_and_json(searched_run: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "search", "backoff"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"{searched_run}  step 2 · output",
        "    Plan: add exponential [backoff]",
    ]
    assert main(["runs", "search", "登录功能", "--json"]) == 0
    [hit] = json.loads(capsys.readouterr().out)
    assert (hit["run_id"], hit["step"], hit["kind"], hit["tool"]) == (
        searched_run,
        0,
        "result",
        "read",
    )
    assert main(["runs", "search", "nowhere"]) == 0
    assert capsys.readouterr().out == "No run mentions 'nowhere'.\n"


def test_older_runs_are_indexed_lazily_and_deleted_runs_forgotten() -> None:
    save(sample_run())  # recorded before any search: indexed by the first one
    search = RunSearch()
    [hit] = search.search("Found").hits
    assert (hit.run_id, hit.step, hit.kind) == ("r1", 0, "output")
    assert search.search("ls").hits[0].kind == "arguments"
    assert search.search("Looking").hits == []  # the retried attempt is not what it did
    RunIndex().delete("r1")
    assert search.search("Found").hits == []
    assert search.update() == 0


def test_a_run_indexed_again_replaces_its_passages(tmp_path: Path) -> None:
    events = sample_run()
    save(events)
    search = RunSearch()
    assert len(search.search("Found").hits) == 1
    assert search.update() == 0  # nothing new
    later = events[-1].model_copy(update={"ts": events[-1].ts + 5})
    save([*events[:-1], later])  # the same run imported again, ending later
    assert search.update() == 1
    assert len(search.search("Found").hits) == 1


def test_a_long_tool_result_is_indexed_by_its_head(tmp_path: Path) -> None:
    events = sample_run()
    huge = "x " * PASSAGE_CHARS + "tailword"
    events = [
        e.model_copy(update={"result": "headword " + huge}) if e.type == "tool_call_finished" else e
        for e in events
    ]
    save(events)
    search = RunSearch()
    assert search.search("headword").hits
    assert search.search("tailword").hits == []


def test_baton_run_indexes_its_run_as_it_ends(searched_run: str) -> None:
    """No catch-up needed: the run is in the index when ``baton run`` returns."""
    assert RunSearch().update() == 0
    assert RunSearch().search("backoff", update=False).hits[0].run_id == searched_run


def test_a_broken_index_file_says_how_to_rebuild_it(
    searched_run: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = RunSearch.default_path()
    for leftover in path.parent.glob(path.name + "*"):
        leftover.unlink()
    path.write_bytes(b"not a database" * 100)
    assert main(["runs", "search", "backoff"]) == 1
    err = capsys.readouterr().err
    assert "the search index failed" in err and str(path) in err
    path.unlink()
    assert main(["runs", "search", "backoff"]) == 0  # rebuilt from the run files
    assert "[backoff]" in capsys.readouterr().out
