"""Review comments → a follow-up step.

A person selects lines of a step's output (or of a diff) and comments on them; "Send comments"
runs one more step that gets every comment: where it is (path, line), the line(s) commented on
and what the person said. The follow-up is a run of its own, built like a re-run
(:mod:`core.run.rerun`): the reviewed step and the chain steps before it are *reused* from the
saved run (no request is sent for them, their results are handed on as saved), and the new
step comes right after the reviewed one, so its ``{previous}`` is the answer under review. The
new run is linked to the reviewed one (:class:`core.model.events.Lineage`, kind ``follow_up``).

:func:`follow_up_task` is pure: the GUI only collects comments, the core writes the task.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.model.errors import RunError
from core.model.events import Event, Lineage, RunStarted, StepFinished
from core.run.rerun import request_from_run
from core.run.run_request import RunRequest, StepSpec
from core.workspace.patch_lines import FilePatch, PatchLine

OUTPUT_PATH = "step {n} output"
"""The ``path`` of a comment on a step's answer rather than on a file."""


@dataclass(frozen=True)
class ReviewComment:
    path: str
    """The file commented on, or :data:`OUTPUT_PATH` for a step's answer."""
    line: int
    """First line commented on, from 1."""
    code: str
    """The line(s) commented on, as shown."""
    text: str
    """What the person said."""
    end_line: int | None = None
    """Last line, when several were selected."""

    @property
    def lines(self) -> str:
        """``12`` or ``12-14``."""
        return (
            str(self.line)
            if not self.end_line or self.end_line == self.line
            else (f"{self.line}-{self.end_line}")
        )


@dataclass(frozen=True)
class ReviewText:
    """A text that can be commented on, line by line: a step's answer, or one file's diff.

    ``numbers[i]`` is the file's line number of shown line ``i`` (0-based; None for a hunk
    header) and ``code[i]`` its code without the diff marker; both empty for an answer, whose
    shown lines are its lines."""

    path: str
    text: str
    numbers: tuple[int | None, ...] = ()
    code: tuple[str, ...] = ()

    def comment(self, first: int, last: int, text: str) -> ReviewComment:
        """The comment ``text`` on shown lines ``first``..``last`` (from 1): its line is the
        file's (the new side; the old side for a removed line), its code the lines' text."""
        rows = range(first - 1, last)
        if not self.numbers:
            code = self.text.split("\n")[first - 1 : last]
            return ReviewComment(
                self.path, first, "\n".join(code), text, last if last > first else None
            )
        numbers = [n for i in rows if i < len(self.numbers) and (n := self.numbers[i]) is not None]
        code = [self.code[i] for i in rows if i < len(self.numbers) and self.numbers[i] is not None]
        line = numbers[0] if numbers else 0
        end = numbers[-1] if numbers and numbers[-1] != line else None
        return ReviewComment(self.path, line, "\n".join(code), text, end)


def diff_texts(files: list[FilePatch]) -> list[ReviewText]:
    """One commentable text per changed file of a patch (:mod:`core.workspace.patch_lines`): its
    diff
    as shown (``+``/``-``/space markers, hunk headers), with each line's file line number."""
    return [lines_text(f.path, f.lines) for f in files if not f.binary and f.lines]


def lines_text(path: str, lines: Sequence[PatchLine | None]) -> ReviewText:
    """Patch lines as shown — a whole file's diff, a page of it, or one side of a side-by-side
    view (None: the blank beside a change) — with each line's file line number (the new side;
    the old side for a removed line; none for a hunk header or a blank)."""
    marks = {"added": "+", "removed": "-", "context": " "}
    shown = [
        "" if line is None else marks[line.kind] + line.text if line.kind in marks else line.text
        for line in lines
    ]
    numbers = tuple(
        (line.new if line.kind != "removed" else line.old)
        if line is not None and line.kind in marks
        else None
        for line in lines
    )
    code = tuple("" if line is None else line.text for line in lines)
    return ReviewText(path, "\n".join(shown), numbers, code)


def output_path(step_index: int) -> str:
    """The comment ``path`` of step ``step_index``'s (0-based) answer."""
    return OUTPUT_PATH.format(n=step_index + 1)


def follow_up_task(comments: list[ReviewComment], *, with_previous: bool = True) -> str:
    """The follow-up step's task: each comment with path, line, the code line(s) and the text.

    ``with_previous`` appends the reviewed answer (``{previous}``, filled in by the runner),
    so the agent sees what the comments are about even when it did not write it."""
    if not comments:
        raise ValueError("a follow-up needs at least one comment")
    count = len(comments)
    out = [
        f"A reviewer left {count} comment{'s' if count != 1 else ''} on the previous step's "
        "work. Address every comment: change what it asks for, or say why not.",
        "",
    ]
    for number, comment in enumerate(comments, 1):
        code = comment.code.rstrip("\n")
        fence = "```"
        while fence in code:
            fence += "`"
        out += [
            f"## Comment {number}: {comment.path}, line {comment.lines}",
            "",
            fence,
            code,
            fence,
            "",
            comment.text.strip(),
            "",
        ]
    if with_previous:
        out += ["## The previous step's answer", "", "{previous}"]
    return "\n".join(out).rstrip() + "\n"


def follow_up_request(
    events: list[Event],
    step_index: int,
    comments: list[ReviewComment],
    *,
    agent: str | None = None,
) -> RunRequest:
    """A run that reuses the saved run up to step ``step_index`` (0-based; that step must
    have finished ok) and adds a step — by the reviewed step's agent unless ``agent`` is
    given — whose task is :func:`follow_up_task`. A chain keeps the steps before the reviewed
    one; a parallel or single run keeps only the reviewed task."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    if started is None:
        raise RunError("this file has no run_started event: it cannot be followed up")
    if not 0 <= step_index < len(started.steps):
        raise RunError(f"run {started.run_id} has steps 1 to {len(started.steps)}")
    finished = {e.step: e for e in events if isinstance(e, StepFinished) and e.step is not None}
    keep = range(step_index + 1) if started.mode == "chain" else [step_index]
    not_ok = [i + 1 for i in keep if finished.get(i) is None or finished[i].status != "ok"]
    if not_ok:
        raise RunError(
            f"step {not_ok[0]} of run {started.run_id} did not finish ok, so it cannot be "
            "reused; resume or re-run it first"
        )
    request = request_from_run(started)
    kept = [request.steps[i] for i in keep]
    reviewed = request.steps[step_index]
    follow = StepSpec(
        agent=agent or reviewed.agent,
        task=follow_up_task(comments),
        cwd=reviewed.cwd,
        params=dict(reviewed.params),
    )
    return replace(
        request,
        mode="chain",
        steps=[*kept, follow],
        reused={new: finished[old] for new, old in enumerate(keep)},
        lineage=Lineage(run_id=started.run_id, step=len(kept), kind="follow_up"),
    )
