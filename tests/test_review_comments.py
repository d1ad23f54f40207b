"""Review comments → a follow-up step: the task text (pure) and, end to end against the
scripted server, what the follow-up step's request carries."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.model.errors import RunError
from core.model.events import Event, RunStarted, StepFinished
from core.record.run_files import RunIndex, load_run
from core.run.review_comments import ReviewComment, follow_up_request, follow_up_task, output_path
from core.run.runner import Runner
from tests.llm_server import LLMServer, Reply

COMMENTS = [
    ReviewComment("src/auth.py", 12, "    retries = 0", "Start at 1: the first try counts."),
    ReviewComment(
        output_path(0),
        3,
        "- use a global lock\n- cache forever",
        "No global state, please.",
        end_line=4,
    ),
]


def test_the_task_lists_path_line_code_and_comment_for_each() -> None:
    task = follow_up_task(COMMENTS)
    assert task.startswith("A reviewer left 2 comments on the previous step's work.")
    assert (
        "## Comment 1: src/auth.py, line 12\n\n```\n    retries = 0\n```\n\n"
        "Start at 1: the first try counts.\n"
    ) in task
    assert (
        "## Comment 2: step 1 output, line 3-4\n\n```\n- use a global lock\n- cache forever\n"
        "```\n\nNo global state, please.\n"
    ) in task
    assert task.endswith("## The previous step's answer\n\n{previous}\n")
    assert "{previous}" not in follow_up_task(COMMENTS, with_previous=False)


def test_code_with_fences_keeps_its_own_fence() -> None:
    task = follow_up_task([ReviewComment("README.md", 1, "```py", "a fence")])
    assert "````\n```py\n````" in task


def test_no_comments_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one comment"):
        follow_up_task([])


@pytest.fixture
def reviewed_run(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> list[Event]:
    save_settings(llm_server.settings())
    llm_server.queue(Reply.answer("found it"), Reply.answer("1. step one\n2. use a global lock"))
    chain = ["--chain", "scout=look", "planner=plan from {previous}"]
    assert main(["run", *chain, "--cwd", str(tmp_path)]) == 0
    capsys.readouterr()
    (record,) = RunIndex().list()
    return list(load_run(Path(record.path)))


async def test_follow_up_request_reaches_the_server_with_every_comment(
    llm_server: LLMServer, reviewed_run: list[Event]
) -> None:
    events = reviewed_run
    parent = events[0]
    assert isinstance(parent, RunStarted)
    comments = [
        ReviewComment(output_path(1), 2, "2. use a global lock", "No global state."),
        ReviewComment("src/auth.py", 12, "    retries = 0", "Start at 1."),
    ]
    request = follow_up_request(events, 1, comments)
    assert [s.agent for s in request.steps] == ["scout", "planner", "planner"]
    assert sorted(request.reused) == [0, 1]
    llm_server.queue(Reply.answer("fixed"))
    runner = Runner(request, settings=llm_server.settings())
    result = await runner.run()
    assert result.status == "ok"
    assert len(llm_server.requests) == 3  # one new request: steps 1 and 2 were reused
    sent = llm_server.requests[2].user_text
    for comment in comments:
        assert f"{comment.path}, line {comment.line}" in sent
        assert comment.code in sent
        assert comment.text in sent
    assert "1. step one\n2. use a global lock" in sent  # the answer under review, for context
    child = load_run(RunIndex().get(runner.run_id).path)  # type: ignore[union-attr,arg-type]
    started = child[0]
    assert isinstance(started, RunStarted) and started.lineage is not None
    assert (started.lineage.run_id, started.lineage.step, started.lineage.kind) == (
        parent.run_id,
        2,
        "follow_up",
    )
    finished = [e for e in child if isinstance(e, StepFinished)]
    assert [f.reused_from for f in finished] == [parent.run_id, parent.run_id, None]


def test_another_agent_and_a_step_in_the_middle(reviewed_run: list[Event]) -> None:
    request = follow_up_request(reviewed_run, 0, COMMENTS, agent="worker")
    assert [s.agent for s in request.steps] == ["scout", "worker"]
    assert list(request.reused) == [0]
    assert request.mode == "chain"
    with pytest.raises(RunError, match="has steps 1 to 2"):
        follow_up_request(reviewed_run, 5, COMMENTS)


def test_a_failed_step_cannot_be_followed_up(reviewed_run: list[Event]) -> None:
    broken = [
        e.model_copy(update={"status": "error"})
        if isinstance(e, StepFinished) and e.step == 0
        else e
        for e in reviewed_run
    ]
    with pytest.raises(RunError, match=r"step 1 of run .* did not finish ok"):
        follow_up_request(broken, 1, COMMENTS)


def test_a_comment_on_diff_lines_names_the_file_line_and_code() -> None:
    from core.run.review_comments import diff_texts
    from core.workspace.patch_lines import parse_patch

    patch = (
        "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n"
        "@@ -10,3 +10,3 @@\n context line\n-colour: red\n+colour: blue\n size: big\n"
    )
    [text] = diff_texts(parse_patch(patch))
    assert text.path == "notes.txt"
    assert text.text.split("\n") == [
        "@@ -10,3 +10,3 @@",
        " context line",
        "-colour: red",
        "+colour: blue",
        " size: big",
    ]
    added = text.comment(4, 4, "Blue is wrong.")
    assert (added.path, added.line, added.end_line, added.code) == (
        "notes.txt",
        11,
        None,
        "colour: blue",
    )
    removed = text.comment(3, 3, "Keep red.")  # a removed line: its old number
    assert (removed.line, removed.code) == (11, "colour: red")
    several = text.comment(1, 5, "All of it.")  # the hunk header is not code
    assert (several.line, several.end_line) == (10, 12)
    assert several.code == "context line\ncolour: red\ncolour: blue\nsize: big"


def test_a_comment_on_an_answer_uses_its_own_lines() -> None:
    from core.run.review_comments import ReviewText

    answer = ReviewText("step 1 output", "one\ntwo\nthree")
    comment = answer.comment(2, 3, "Why?")
    assert (comment.line, comment.end_line, comment.code) == (2, 3, "two\nthree")
