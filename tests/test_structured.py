"""Structured step results: declared in the agent file, asked for, validated, repaired once,
carried on step_finished and handed on as JSON — against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.definitions.agents import parse_agent_text
from core.definitions.structured import (
    OutputSpec,
    StructuredOutputError,
    extract_json,
    issue_counts,
)
from core.history.run_export import run_to_markdown
from core.model.events import StepFinished
from core.record.run_files import load_run, run_file
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from tests.llm_server import LLMServer, Reply

REVIEW = {
    "passed": False,
    "issues": [
        {"severity": "major", "description": "No test for --json", "file": "cli.py", "line": 3},
        {"severity": "minor", "description": "Typo in help"},
    ],
}


def _answer(data: object) -> str:
    return f"Changes requested: two problems.\n\n```json\n{json.dumps(data)}\n```"


def _agent_file(folder: Path, name: str, output: str) -> None:
    agents = folder / ".pi" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: d\ntools: read\noutput: {output}\n---\nReview.\n",
        encoding="utf-8",
    )


def test_the_review_shape_is_validated_from_a_fenced_block() -> None:
    spec = OutputSpec.parse("review")
    assert spec.validate_answer(_answer(REVIEW)) == REVIEW
    assert issue_counts(REVIEW) == {"critical": 0, "major": 1, "minor": 1, "info": 0}
    with pytest.raises(StructuredOutputError, match=r"issues\.0\.severity"):
        spec.validate_answer(
            _answer({"passed": True, "issues": [{"severity": "awful", "description": "x"}]})
        )


def test_a_custom_schema_is_checked_with_json_schema() -> None:
    spec = OutputSpec.parse(
        {
            "schema": {
                "type": "object",
                "required": ["score"],
                "properties": {"score": {"type": "integer", "maximum": 10}},
            }
        }
    )
    assert spec.validate_answer('{"score": 7}') == {"score": 7}
    with pytest.raises(StructuredOutputError, match="score: 11 is greater than the maximum"):
        spec.validate_answer('```json\n{"score": 11}\n```')


def test_no_json_at_all_says_where_it_was_expected() -> None:
    with pytest.raises(StructuredOutputError, match="fenced block"):
        extract_json("Looks fine to me.")


def test_a_bad_output_declaration_lists_the_agent_with_an_error() -> None:
    agent = parse_agent_text("---\nname: a\ndescription: d\noutput: 42\n---\nx\n")
    assert agent.error is not None
    assert "output must be a file name" in agent.error.message
    assert agent.error.line == 4
    bad_schema = parse_agent_text(
        "---\nname: a\ndescription: d\noutput: {schema: {type: 12}}\n---\nx\n"
    )
    assert bad_schema.error is not None and "not a valid JSON Schema" in bad_schema.error.message


def test_any_other_text_is_a_file_name_not_a_structured_result() -> None:
    agent = parse_agent_text("---\nname: a\ndescription: d\noutput: yes-please\n---\nx\n")
    assert agent.error is None
    assert agent.output is None and agent.output_file == "yes-please"


def test_the_built_in_reviewer_declares_the_review_shape(tmp_path: Path) -> None:
    from core.definitions.agents import discover_agents

    reviewer = discover_agents(tmp_path, "both").get("reviewer")
    assert reviewer is not None and reviewer.output is not None
    assert reviewer.output.kind == "review"


async def _run(server: LLMServer, cwd: Path, *steps: StepSpec) -> Runner:
    runner = Runner(
        RunRequest(mode="chain", steps=list(steps), cwd=cwd, trust_project=True),
        settings=server.settings(),
    )
    await runner.run()
    return runner


def _finished(runner: Runner) -> list[StepFinished]:
    """The step_finished events as the run file has them."""
    return [e for e in load_run(run_file(runner.run_id)) if isinstance(e, StepFinished)]


async def test_a_review_answer_becomes_structured_and_the_next_step_gets_json(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    _agent_file(tmp_path, "auditor", "review")
    llm_server.queue(Reply.answer(_answer(REVIEW)), Reply.answer("Fixed both."))
    runner = await _run(
        llm_server,
        tmp_path,
        StepSpec(agent="auditor", task="Review it"),
        StepSpec(agent="worker", task="Fix these:\n{previous}"),
    )
    assert runner.result is not None and runner.result.status == "ok"
    system = llm_server.requests[0].messages[0]["content"]
    assert "## Output format" in system and '"severity"' in system
    assert len(llm_server.requests) == 2  # valid at once: no repair request
    assert [f.structured for f in _finished(runner)] == [REVIEW, None]
    handed = llm_server.requests[1].user_text
    assert json.loads(handed.removeprefix("Fix these:\n")) == REVIEW


async def test_an_invalid_answer_gets_exactly_one_repair_request(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    _agent_file(tmp_path, "auditor", "review")
    llm_server.queue(Reply.answer("All good, ship it."), Reply.answer(_answer(REVIEW)))
    runner = await _run(llm_server, tmp_path, StepSpec(agent="auditor", task="Review it"))
    assert runner.result is not None and runner.result.status == "ok"
    assert len(llm_server.requests) == 2
    assert "could not be used: no JSON object was found" in llm_server.requests[1].user_text


async def test_two_invalid_answers_fail_the_step_with_the_reason(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    _agent_file(tmp_path, "auditor", "review")
    llm_server.queue(Reply.answer("nope"), Reply.answer('{"passed": "maybe"}'))
    runner = await _run(llm_server, tmp_path, StepSpec(agent="auditor", task="Review it"))
    assert runner.result is not None and runner.result.status == "error"
    assert len(llm_server.requests) == 2
    assert "even after one correction" in (runner.result.error or "")


async def test_the_markdown_export_shows_the_review_as_a_table(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    _agent_file(tmp_path, "auditor", "review")
    llm_server.queue(Reply.answer(_answer(REVIEW)))
    runner = await _run(llm_server, tmp_path, StepSpec(agent="auditor", task="Review it"))
    markdown = run_to_markdown(load_run(run_file(runner.run_id)))
    assert "**Review: changes requested** (1 major, 1 minor)" in markdown
    assert "| major | cli.py:3 | No test for --json |" in markdown
    assert markdown.index("| major |") < markdown.index("| minor |")
