"""The big runs the performance benchmarks feed Baton, built as the runner would emit them.

* :func:`flood` — exactly N events of a 3-step chain: text deltas of a few characters,
  thinking, and bash calls streaming a line per chunk (a long agent session);
* :func:`big_output` — one bash call printing 5 MB in 80-byte chunks (a build log);
* :func:`long_answer` — one step answering 2 MB of Markdown in small deltas.

:func:`write_run` saves events as a run file, the way ``core.record.run_files.RunWriter`` lays them
out.
Deterministic, so figures from two runs compare.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from core.model.events import (
    Event,
    PlannedStep,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    event_to_json,
)

RUN_ID = "run-bench"
CWD = "/home/dev/src/project"
PARAGRAPH = "The function `load` reads **settings** and validates them; see below. "


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def tick(self, seconds: float = 0.001) -> float:
        self.now = round(self.now + seconds, 4)
        return self.now


def _start(agents: list[str]) -> RunStarted:
    steps = [PlannedStep(agent=a, task=f"{a} task", cwd=CWD) for a in agents]
    return RunStarted(
        run_id=RUN_ID,
        mode="chain" if len(agents) > 1 else "single",
        steps=steps,
        cwd=CWD,
        started_at="2026-12-03T10:00:00+00:00",
    )


def _step_started(step: int, agent: str, clock: _Clock) -> StepStarted:
    return StepStarted(
        run_id=RUN_ID, step=step, ts=clock.tick(), agent=agent, task=f"{agent} task", cwd=CWD
    )


def _step_finished(step: int, clock: _Clock, output: str = "done") -> StepFinished:
    return StepFinished(run_id=RUN_ID, step=step, ts=clock.tick(), status="ok", output=output)


def _bash(step: int, number: int, chunks: list[str], result: str, clock: _Clock) -> list[Event]:
    call = f"call_{number:05d}"
    events: list[Event] = [
        ToolCallStarted(
            run_id=RUN_ID,
            step=step,
            ts=clock.tick(),
            call_id=call,
            tool="bash",
            arguments={"command": f"pytest -q tests/t{number}.py"},
        )
    ]
    events += [
        ToolCallOutput(run_id=RUN_ID, step=step, ts=clock.tick(), call_id=call, chunk=chunk)
        for chunk in chunks
    ]
    events.append(
        ToolCallFinished(
            run_id=RUN_ID, step=step, ts=clock.tick(), call_id=call, status="ok", result=result
        )
    )
    return events


def _session(step: int, count: int, clock: _Clock) -> Iterator[Event]:
    """``count`` events of one step's work: answer text, thinking, test runs, in turns."""
    emitted, turn = 0, 0
    while emitted < count:
        turn += 1
        left = count - emitted
        if turn % 4 == 0 and left >= 22:
            lines = [f"tests/t{turn}.py::test_{n} PASSED\n" for n in range(20)]
            batch = _bash(step, step * 100_000 + turn, lines, "20 passed", clock)
        elif turn % 4 == 1:
            text = PARAGRAPH * 2
            batch = [
                ThinkingDelta(run_id=RUN_ID, step=step, ts=clock.tick(), text=text[i : i + 20])
                for i in range(0, len(text), 20)
            ]
        else:
            text = f"\n\n### Part {turn}\n\n" + PARAGRAPH * 3
            batch = [
                TextDelta(run_id=RUN_ID, step=step, ts=clock.tick(), text=text[i : i + 8])
                for i in range(0, len(text), 8)
            ]
        batch = batch[:left]
        emitted += len(batch)
        yield from batch


def flood(total: int) -> list[Event]:
    """Exactly ``total`` events: a 3-step chain of deltas, thinking and streamed bash calls."""
    clock = _Clock()
    agents = ["scout", "planner", "worker"]
    events: list[Event] = [_start(agents)]
    content = total - 2 - 2 * len(agents)
    for step, agent in enumerate(agents):
        share = content // 3 if step < 2 else content - 2 * (content // 3)
        events.append(_step_started(step, agent, clock))
        events += _session(step, share, clock)
        events.append(_step_finished(step, clock))
    events.append(RunFinished(run_id=RUN_ID, ts=clock.tick(), status="ok"))
    return events


def big_output(size: int = 5_000_000, chunk: int = 80) -> list[Event]:
    """One bash call whose output is ``size`` bytes streamed in ``chunk``-byte pieces; the
    result is the last 50 KB, as Baton's bash tool hands the model."""
    clock = _Clock()
    line = "x" * (chunk - 9)
    chunks = [f"{n % 10**7:07d} {line}\n" for n in range(size // chunk)]
    events: list[Event] = [_start(["worker"]), _step_started(0, "worker", clock)]
    events += _bash(0, 1, chunks, "".join(chunks)[-50_000:] + "\nexit code 0", clock)
    events += [
        _step_finished(0, clock, "Built."),
        RunFinished(run_id=RUN_ID, ts=clock.tick(), status="ok"),
    ]
    return events


def long_answer(text: str, delta: int = 40) -> list[Event]:
    """One step answering ``text`` in ``delta``-character pieces."""
    clock = _Clock()
    events: list[Event] = [_start(["planner"]), _step_started(0, "planner", clock)]
    events += [
        TextDelta(run_id=RUN_ID, step=0, ts=clock.tick(), text=text[i : i + delta])
        for i in range(0, len(text), delta)
    ]
    events += [
        _step_finished(0, clock, text),
        RunFinished(run_id=RUN_ID, ts=clock.tick(), status="ok"),
    ]
    return events


def write_run(events: list[Event], path: Path, run_id: str = RUN_ID) -> Path:
    """Save ``events`` as a run file, under ``run_id`` (several runs in one history)."""
    ours, theirs = f'"run_id":"{RUN_ID}"', f'"run_id":"{run_id}"'
    with open(path, "w", encoding="utf-8") as file:
        for event in events:
            file.write(event_to_json(event).replace(ours, theirs, 1) + "\n")
    return path
