"""Comparing two runs step by step: real runs against the scripted server, and
``baton runs compare`` as Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.config.settings import save_settings
from core.history.run_compare import compare_runs, output_diff
from core.history.run_reading import read_folded
from core.record.run_files import RunIndex
from tests.llm_server import LLMServer, Reply, Tokens


@pytest.fixture
def two_runs(
    llm_server: LLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[str, str]:
    """The same chain twice: step 1 answers alike, step 2 edits a file once and differently."""
    save_settings(llm_server.settings())
    (tmp_path / "a.txt").write_text("one\n", encoding="utf-8")
    chain = ["--chain", "scout=look", "worker=change a.txt", "--cwd", str(tmp_path)]
    llm_server.queue(
        Reply.answer("found a.txt", tokens=Tokens(100, 10)),
        Reply.tool("read", {"path": "a.txt"}, tokens=Tokens(200, 20)),
        Reply.answer("Done.\nkept one", tokens=Tokens(300, 30)),
    )
    assert main(["run", *chain]) == 0
    (first,) = (r.id for r in RunIndex().list())
    llm_server.queue(
        Reply.answer("found a.txt", tokens=Tokens(100, 10)),
        Reply.tool("write", {"path": "b.txt", "content": "two\n"}, tokens=Tokens(200, 20)),
        Reply.answer("Done.\nwrote two", tokens=Tokens(500, 50)),
    )
    assert main(["run", *chain, "--approve", "all"]) == 0
    capsys.readouterr()
    (second,) = (r.id for r in RunIndex().list() if r.id != first)
    return first, second


def _states(first: str, second: str) -> tuple[object, object]:
    index = RunIndex()
    paths = [Path(index.get(run_id).path) for run_id in (first, second)]  # type: ignore[union-attr]
    return read_folded(paths[0]).state, read_folded(paths[1]).state


def test_steps_are_paired_and_differences_named(two_runs: tuple[str, str]) -> None:
    left, right = _states(*two_runs)
    comparison = compare_runs(left, right)  # type: ignore[arg-type]
    same, changed = comparison.steps
    assert same.same_output and same.same_tools
    assert same.left is not None and same.left.tokens == 110
    assert not changed.same_output and not changed.same_tools
    assert changed.left is not None and changed.right is not None
    assert changed.left.tools == ["read: a.txt"]
    assert changed.right.tools == ["write: b.txt"]
    assert changed.left.files == [] and changed.right.files == ["b.txt +1 −0"]
    assert changed.left.tokens == 550 and changed.right.tokens == 770
    assert "-kept one\n+wrote two\n" in changed.output_diff
    assert changed.left.duration_s is not None and changed.left.duration_s >= 0


def test_cli_compare_prints_markdown(
    two_runs: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = two_runs
    assert main(["runs", "compare", first, second]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# Comparing {first} and {second}\n")
    assert "| Tokens | 660 | 880 |" in out
    step2 = out.split("## Step 2")[1]
    assert "| Tokens | 550 | 770 | +220 |" in step2
    assert "| Tool calls | 1 | 1 | different |" in step2
    assert "| Files changed | — | `b.txt +1 −0` | |" in step2  # a shadow checkpoint
    assert "-read: a.txt\n+write: b.txt" in step2
    assert "```diff\n" in step2 and "-kept one\n+wrote two" in step2
    assert "Output: identical." in out.split("## Step 2")[0]
    assert main(["runs", "compare", first, "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_a_step_only_one_run_has() -> None:
    from core.record.run_state import fold
    from tests.test_run_state import sample_run

    full = fold(sample_run())
    short = fold(sample_run())
    short.steps = short.steps[:1]
    comparison = compare_runs(full, short)
    assert comparison.steps[1].right is None
    assert comparison.steps[1].output_diff == ""


def test_output_diff_is_empty_for_equal_texts() -> None:
    assert output_diff("a\nb\n", "a\nb\n") == ""
    assert output_diff("a\n", "b\n").splitlines()[2:] == ["@@ -1 +1 @@", "-a", "+b"]


async def test_files_changed_come_from_the_checkpoints(
    llm_server: LLMServer, tmp_path: Path
) -> None:
    """A step that edits, writes and runs sed in a git repository: all three files listed,
    the one sed changed included (the tool calls alone would name two)."""
    from core.record.run_state import fold
    from tests.git_repos import make_repo, run_step, three_changes

    repo = make_repo(tmp_path / "repo")
    three_changes(llm_server)
    first = fold(await run_step(llm_server, repo))
    llm_server.queue(Reply.answer("Nothing to change."))
    second = fold(await run_step(llm_server, repo))
    [step] = compare_runs(first, second).steps
    assert step.left is not None and step.right is not None
    assert step.left.files == ["app.py +1 −1", "docs/new.md +1 −0", "notes.txt +1 −1"]
    assert step.right.files == []
