"""A dropped-and-retried model stream: the superseded attempt is marked in the run file and the
terminal, and left out of the Markdown export and of a parallel step's text."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.backends.openai_compat import OpenAICompatBackend
from core.history.run_export import run_to_markdown
from core.model.events import Retry, TextDelta
from core.record.run_files import load_run, run_file
from core.record.run_state import TextBlock, fold
from core.run.run_request import RunRequest, StepSpec
from core.run.runner import Runner
from core.terminal.output import TranscriptPrinter
from tests.llm_server import LLMServer, Reply, last_user_text

PARTIAL = "Half of an answer that"
WHOLE = "Half of an answer that is now complete."


def run(server: LLMServer, request: RunRequest) -> tuple[Runner, Callable[[], str]]:
    out = io.StringIO()
    runner = Runner(
        request,
        settings=server.settings(),
        listeners=[TranscriptPrinter(out)],
        backend_factory=lambda name: OpenAICompatBackend(retry_base_delay=0.001),
    )
    return runner, out.getvalue


async def test_a_retried_stream_is_marked_in_the_run_file_and_terminal_and_left_out_of_exports(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    llm_server.queue(Reply.dropped(PARTIAL, after=3), Reply.answer(WHOLE))
    runner, output = run(
        llm_server, RunRequest(mode="single", steps=[StepSpec("worker", "go")], cwd=tmp_path)
    )
    assert (await runner.run()).status == "ok"

    saved = load_run(run_file(runner.run_id))
    kinds = [e.type for e in saved if isinstance(e, TextDelta | Retry)]
    first_retry = kinds.index("retry")
    assert 0 < first_retry < len(kinds) - 1  # partial text, the retry, then the new attempt
    blocks = [i for i in fold(saved).steps[0].items if isinstance(i, TextBlock)]
    assert [b.superseded for b in blocks] == [True, False] and blocks[1].text == WHOLE

    printed = output()
    superseded = printed.index("the partial answer above is superseded")
    assert printed.index(blocks[0].text) < superseded < printed.index(WHOLE)

    markdown = run_to_markdown(saved)
    assert markdown.count(PARTIAL[:10]) == 1 and WHOLE in markdown
    assert "retry 1" in markdown


async def test_a_parallel_step_prints_only_the_attempt_that_counted(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    seen: Counter[str] = Counter()

    def respond(body: Any) -> Reply:
        task = last_user_text(body)
        seen[task] += 1
        if task == "a" and seen[task] == 1:
            return Reply.dropped(PARTIAL, after=3)
        return Reply.answer(WHOLE if task == "a" else "Task b is done.")

    llm_server.responder = respond
    steps = [StepSpec("worker", "a"), StepSpec("worker", "b")]
    runner, output = run(llm_server, RunRequest(mode="parallel", steps=steps, cwd=tmp_path))
    assert (await runner.run()).status == "ok"
    printed = output()
    assert printed.count(PARTIAL[:10]) == 1 and WHOLE in printed and "Task b is done." in printed
    assert "↻ retry 1" in printed
