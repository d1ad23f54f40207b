"""Agent files written for the pi-subagents extension load, keep their meaning, and run.

One test per pi-subagents field; ``output: research.md`` end to end (the answer also lands in
the file, in the step's working folder); and the attacks an ``output`` file name invites (a
path out of the folder, a symlinked folder, a symlink at the name)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from core.backends.base import StepContext
from core.backends.claude_cli import build_command
from core.backends.pi_cli import build_argv
from core.definitions.agents import AgentDefinition, discover_agents, parse_agent_text
from core.model.errors import RunError
from core.model.events import OutputFileWritten, StepFinished
from core.record.run_files import load_run, run_file
from core.record.run_state import RunState
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.terminal.output import TranscriptPrinter
from tests.llm_server import LLMServer, Reply
from tests.step_contexts import step_context

RESEARCHER = """---
name: researcher
description: Researches a question and writes research.md
tools: read, grep, find, ls
model: claude-sonnet-4-5
thinking: high
skills: safe-bash, web-research
systemPromptMode: replace
inheritProjectContext: false
inheritSkills: false
defaultReads: context.md
defaultProgress: true
output: research.md
---
You are a researcher. Answer with your findings.
"""


def parse(front: str, body: str = "Body.") -> AgentDefinition:
    return parse_agent_text(f"---\nname: a\ndescription: d\n{front}\n---\n{body}\n", path="a.md")


def notes(agent: AgentDefinition) -> dict[int | None, str]:
    return {p.line: p.message for p in agent.problems if p.severity == "info"}


def context(agent: AgentDefinition, folder: Path) -> StepContext:
    # a trusted folder: what the agent's own fields decide
    return step_context(agent, folder, project_trusted=True)


# ---------------------------------------------------------------- one test per field


def test_a_pi_subagents_file_loads_without_an_error(tmp_path: Path) -> None:
    agents = tmp_path / ".pi" / "agents"
    agents.mkdir(parents=True)
    (agents / "researcher.md").write_text(RESEARCHER, encoding="utf-8")
    catalog = discover_agents(tmp_path, "project")
    researcher = catalog.get("researcher")
    assert researcher is not None and researcher.error is None
    assert [d.severity for d in catalog.diagnostics if d.path.endswith("researcher.md")] == [
        "info"
    ] * 3  # inheritSkills, defaultReads, defaultProgress not used


def test_output_file_name_means_write_the_answer_there() -> None:
    agent = parse("output: research.md")
    assert agent.error is None
    assert agent.output_file == "research.md" and agent.output is None
    assert parse("output: reports/summary.md").output_file == "reports/summary.md"


def test_output_review_and_schema_keep_meaning_structured_results() -> None:
    review = parse("output: review")
    assert review.output is not None and review.output.kind == "review"
    assert review.output_file is None
    schema = parse("output: {schema: {type: object}}")
    assert schema.output is not None and schema.output.kind == "schema"


def test_output_false_means_no_file() -> None:
    agent = parse("output: false")
    assert agent.error is None and agent.output_file is None and agent.output is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("../outside.md", "leaves the working folder"),
        ("/etc/cron.d/evil", "absolute path"),
        ("reports/../../x.md", "leaves the working folder"),
        ("C:\\\\Windows\\\\x.md", "absolute path"),
        ("reports/", "names a folder"),
    ],
)
def test_an_output_file_outside_the_folder_lists_the_agent_with_an_error(
    value: str, reason: str
) -> None:
    agent = parse(f'output: "{value}"')
    assert agent.error is not None and reason in agent.error.message
    assert agent.error.line == 4
    assert agent.output_file is None


def test_thinking_is_the_reasoning_effort() -> None:
    assert parse("thinking: high").reasoning_effort == "high"
    assert parse("thinking: xhigh").reasoning_effort == "xhigh"
    odd = parse("thinking: enormous")
    assert odd.reasoning_effort is None and odd.error is None
    assert any("not one of off, minimal" in p.message for p in odd.problems)


def test_skills_are_read_without_a_note() -> None:
    agent = parse("skills: safe-bash, web-research")
    assert agent.skills == ("safe-bash", "web-research")
    assert notes(agent) == {}
    assert parse("skill: [tmux]").skills == ("tmux",)  # pi-subagents' singular spelling


def test_inherit_project_context_is_read() -> None:
    assert parse("inheritProjectContext: false").inherit_project_context is False
    assert parse("inheritProjectContext: true").inherit_project_context is True
    assert parse("").inherit_project_context is None
    assert parse("context: false").inherit_project_context is False  # Baton's own spelling
    assert parse("context: false\ninheritProjectContext: true").inherit_project_context is False


def test_system_prompt_mode_is_read() -> None:
    assert parse("systemPromptMode: replace").system_prompt_mode == "replace"
    assert parse("systemPromptMode: append").system_prompt_mode == "append"
    odd = parse("systemPromptMode: merge")
    assert odd.system_prompt_mode is None and odd.error is None


@pytest.mark.parametrize(
    "field",
    [
        "inheritSkills: true",
        "defaultReads: context.md",
        "defaultProgress: true",
        "interactive: true",
    ],
)
def test_pi_subagents_fields_baton_does_not_use_are_notes(field: str) -> None:
    agent = parse(field)
    assert agent.error is None
    (note,) = notes(agent).values()
    assert note.endswith("is not used by Baton")


def test_an_unknown_field_is_a_note_never_a_reason_to_drop_the_agent() -> None:
    agent = parse("favouriteColour: teal\nnested: {deep: [1, 2]}")
    assert agent.error is None
    assert notes(agent) == {
        4: "'favouriteColour' is not a field Baton knows; it is not used",
        5: "'nested' is not a field Baton knows; it is not used",
    }


# ---------------------------------------------------------------- honoured by the backends


def test_pi_gets_thinking_context_files_and_the_prompt_mode(tmp_path: Path) -> None:
    agent = parse_agent_text(RESEARCHER)
    prompt = tmp_path / "prompt.md"
    argv = build_argv("pi", context(agent, tmp_path), ["read"], prompt)
    assert argv[argv.index("--thinking") + 1] == "high"
    assert "--no-context-files" in argv
    assert argv[argv.index("--system-prompt") + 1] == str(prompt)
    assert "--append-system-prompt" not in argv

    plain = build_argv("pi", context(parse(""), tmp_path), ["read"], prompt)
    assert "--thinking" not in plain and "--no-context-files" not in plain
    assert plain[plain.index("--append-system-prompt") + 1] == str(prompt)


def test_claude_code_gets_the_prompt_mode(tmp_path: Path) -> None:
    """The body travels in a private file either way; the flag says replace or append."""
    prompt = tmp_path / "prompt.md"
    ctx = context(parse("systemPromptMode: replace"), tmp_path)
    replace = build_command("claude", ctx, prompt)
    assert replace[replace.index("--system-prompt-file") + 1] == str(prompt)
    assert not any(a.startswith("--append-system-prompt") for a in replace)
    append = build_command("claude", context(parse(""), tmp_path), prompt)
    assert append[append.index("--append-system-prompt-file") + 1] == str(prompt)
    assert not any("Body." in a for a in replace + append)  # never on the command line


# ---------------------------------------------------------------- a run


def write_agent(project: Path, text: str) -> None:
    agents = project / ".pi" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "researcher.md").write_text(text, encoding="utf-8")


async def run(server: LLMServer, project: Path) -> Runner:
    runner = Runner(
        RunRequest(
            mode="single",
            steps=[StepSpec(agent="researcher", task="What is in the box?")],
            cwd=project,
            trust_project=True,
        ),
        settings=server.settings(),
    )
    await runner.run()
    return runner


async def test_a_pi_subagents_file_with_an_output_file_runs_and_its_file_appears(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    write_agent(project, RESEARCHER)
    llm_server.queue(Reply.answer("## Findings\n\nThe box holds **marbles**."))
    runner = await run(llm_server, project)

    assert runner.result is not None and runner.result.status == "ok"
    written = project / "research.md"
    assert written.read_text(encoding="utf-8") == "## Findings\n\nThe box holds **marbles**.\n"
    request = llm_server.requests[0]
    assert request.body["reasoning_effort"] == "high"  # thinking: high
    assert request.messages[0]["content"] == "You are a researcher. Answer with your findings."
    events = load_run(run_file(runner.run_id))
    (event,) = [e for e in events if isinstance(e, OutputFileWritten)]
    assert (event.step, event.path, event.error) == (0, str(written), None)
    # written before the step's end, so the step's recorded changes include it
    finished = next(e for e in events if isinstance(e, StepFinished))
    assert events.index(event) < events.index(finished)
    state = RunState()
    for e in events:
        state.apply(e)
    assert state.steps[0].output_file == event


async def test_a_failed_step_writes_no_output_file(llm_server: LLMServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_agent(project, RESEARCHER)
    llm_server.queue(Reply.error(400, "bad request"))
    runner = await run(llm_server, project)
    assert runner.result is not None and runner.result.status == "error"
    assert not (project / "research.md").exists()


async def test_an_output_file_in_a_subfolder_is_created_there(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    write_agent(project, RESEARCHER.replace("output: research.md", "output: notes/r.md"))
    llm_server.queue(Reply.answer("Done."))
    await run(llm_server, project)
    assert (project / "notes" / "r.md").read_text(encoding="utf-8") == "Done.\n"


async def test_attack_a_symlinked_folder_cannot_carry_the_file_out(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    outside.mkdir()
    write_agent(project, RESEARCHER.replace("output: research.md", "output: notes/r.md"))
    os.symlink(outside, project / "notes")  # the checkout ships a link out of itself
    llm_server.queue(Reply.answer("Payload."))
    runner = await run(llm_server, project)

    assert list(outside.iterdir()) == []
    assert runner.result is not None and runner.result.status == "ok"  # the answer is kept
    (event,) = [e for e in load_run(run_file(runner.run_id)) if isinstance(e, OutputFileWritten)]
    assert event.error == "'notes/r.md' would be written outside the working folder"


async def test_attack_a_symlink_at_the_name_is_replaced_not_followed(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    write_agent(project, RESEARCHER)
    os.symlink(victim, project / "research.md")
    llm_server.queue(Reply.answer("Payload."))
    await run(llm_server, project)

    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not (project / "research.md").is_symlink()
    assert (project / "research.md").read_text(encoding="utf-8") == "Payload.\n"


async def test_attack_an_agent_whose_output_leaves_the_folder_does_not_run(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    write_agent(project, RESEARCHER.replace("output: research.md", "output: ../escape.md"))
    catalog = discover_agents(project, "project")
    assert catalog.get("researcher") is not None  # listed, with its error
    runner = Runner(
        RunRequest(
            mode="single",
            steps=[StepSpec(agent="researcher", task="t")],
            cwd=project,
            trust_project=True,
        ),
        settings=llm_server.settings(),
    )
    with pytest.raises(RunError, match="leaves the working folder"):
        await runner.run()
    assert llm_server.requests == []
    assert not (tmp_path / "escape.md").exists()


def test_the_terminal_says_where_the_answer_was_also_written() -> None:
    out = io.StringIO()
    printer = TranscriptPrinter(out)
    printer(OutputFileWritten(run_id="r", step=0, ts=1.0, path="/p/research.md"))
    printer(
        OutputFileWritten(run_id="r", step=1, ts=2.0, path="/p/x.md", error="'x.md' is a folder")
    )
    assert out.getvalue() == (
        "  answer also written to /p/research.md\n  ! answer not written: 'x.md' is a folder\n"
    )
