"""Running a graph preset (``mode: graph``; architecture: "Graph pipelines").

The scheduler walks the preset's *items* — steps outside loops and whole loops — as soon as
what each waits for has ended, at most four steps at once, and hands every step to the
runner's own step execution (:class:`StepRunner`, the same code chains use: checkpoints,
cancel, budgets, time limits). What is particular to graphs lives here:

* **hand-offs** — ``{previous}`` (the one predecessor's answer, or all under their names),
  ``{outputs}`` (each predecessor's answer under its name), ``{step.NAME}`` (that step's
  latest answer), each capped on its own (:func:`core.run.handoff.hand_off`);
* **conditions** — a step whose ``when:`` is false is ``step_skipped`` with the condition; a
  step waiting only for steps that failed or were skipped is skipped saying so;
* **loops** — members run in order each iteration; ``until`` is checked after each; at
  ``max_iterations`` the loop ends ``max_iterations`` with what is left, and the run goes on;
* **gates** — :mod:`core.run.gates` asks a person before a gated step: continue, edit the
  hand-off, send the previous step (or loop) back with a note, or stop;
* **best of N** — N attempts in N worktrees; the judge step's answer (``#2``) or the person
  picks; the winner's changes are staged in the run's folder once the steps after the judge
  are let through (or the run ends), the other worktrees removed.

Every execution has its own step index: a node's first at the node's position in the
preset, loop iterations and attempts after the planned ones, so each has its own pane and its
own lines in the run file, labelled with ``node``, ``iteration`` and ``branch``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from core.definitions.conditions import (
    SEVERITY_ORDER,
    StepResult,
    parse_condition,
    severity_counts,
)
from core.definitions.graph_form import (
    STEP_REF,
    GraphShape,
    LoopSpec,
    PresetStep,
    ancestors,
    dependencies,
)
from core.model.events import (
    BestOfPicked,
    Event,
    GateWaiting,
    Log,
    LoopFinished,
    LoopIterationStarted,
    StepFinished,
    StepSkipped,
    StepStarted,
    WorktreeInfo,
)
from core.run.gates import PERSON_OPTIONS, GateAnswer, GateAsker, Gates, GateUnanswerable
from core.run.handoff import hand_off
from core.run.run_preparation import PreparedStep
from core.workspace.worktrees import (
    WorktreeError,
    create_worktree,
    discard_worktree,
    merge_worktree,
)

MAX_CONCURRENT_STEPS = 4
MAX_SEND_BACKS = 5
Outcome = Literal["ok", "error", "aborted"]
Status = Literal["done", "failed", "skipped", "stopped"]


@dataclass(frozen=True)
class StepLabel:
    """How an execution is named in events and run files."""

    node: str
    iteration: int | None = None
    branch: str | None = None
    occurrence: int = 1
    """The how-manieth execution of this node, iteration and branch (a send-back runs one
    again): not in events, counted again from them (:func:`execution_keys`)."""

    @property
    def key(self) -> str:
        """``node``, ``node@2`` (a loop's second iteration), ``node#3`` (an attempt),
        ``node~2`` (its second execution): what resume and re-run reuse results by."""
        key = self.node if self.iteration is None else f"{self.node}@{self.iteration}"
        if self.branch is not None:
            key += f"#{self.branch.rsplit('#', 1)[-1]}"
        return key if self.occurrence == 1 else f"{key}~{self.occurrence}"


def execution_keys(events: Sequence[Event]) -> dict[int, str]:
    """Each step index of a saved graph run with its execution key (:attr:`StepLabel.key`),
    counted in the order the executions started — the order a new run meets them in."""
    seen: dict[tuple[str, int | None, str | None], int] = {}
    keys: dict[int, str] = {}
    for event in events:
        if isinstance(event, StepStarted) and event.node is not None and event.step is not None:
            where = (event.node, event.iteration, event.branch)
            seen[where] = seen.get(where, 0) + 1
            label = StepLabel(event.node, event.iteration, event.branch, seen[where])
            keys[event.step] = label.key
    return keys


class StepRunner(Protocol):
    """The runner's step execution (:meth:`core.run.runner.Runner._run_labelled_step`)."""

    def __call__(
        self, index: int, step: PreparedStep, task: str, label: StepLabel
    ) -> Awaitable[StepFinished]: ...


@dataclass
class NodeResult:
    status: Status
    output: str = ""
    structured: dict[str, object] | None = None
    index: int | None = None


@dataclass
class _Attempts:
    node: str
    infos: list[WorktreeInfo] = field(default_factory=list)
    branches: list[str] = field(default_factory=list)
    winner: int | None = None


def _status_of(finished: StepFinished) -> Status:
    return {"ok": "done", "error": "failed", "aborted": "stopped"}[finished.status]  # type: ignore[return-value]


class GraphRun:
    """One graph run's scheduling; :meth:`run` returns the run's outcome and error."""

    def __init__(
        self,
        shape: GraphShape,
        steps: list[PreparedStep],
        *,
        run_step: StepRunner,
        emit: Callable[[Event], None],
        now: Callable[[], float],
        cancel: asyncio.Event,
        gates: Gates,
        gate_asker: GateAsker | None,
        run_id: str,
        handoff_limit: int,
        run_file: Path | None,
        reused: Sequence[str] = (),
        reused_gates: Mapping[str, tuple[str, str | None]] | None = None,
        reused_send_backs: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.shape = shape
        self.steps = steps
        self._run_step = run_step
        self._emit = emit
        self._now = now
        self._cancel = cancel
        self._gates = gates
        self._asker = gate_asker
        self.run_id = run_id
        self._limit = handoff_limit
        self._run_file = run_file
        self.deps = dependencies(shape.steps, shape.loops)
        self.position = {step.name or "": i for i, step in enumerate(shape.steps)}
        self.loops = {loop.name: loop for loop in shape.loops}
        self.results: dict[str, NodeResult] = {}
        self.attempts: dict[str, _Attempts] = {}
        self._judged: dict[str, str] = {
            s.best_of.judge: s.name or "" for s in shape.steps if s.best_of and s.best_of.judge
        }
        self._pending_keeps: dict[str, _Attempts] = {}
        self._capped_texts: dict[int, tuple[str, str]] = {}
        self._loop_last: dict[str, tuple[str, NodeResult]] = {}
        """Each loop's latest answer (the last member that ran): what comes after it gets."""
        self._loop_results: dict[str, NodeResult] = {}
        self._iteration: dict[str, int] = {}
        self._next_index = len(steps)
        self._used_first: set[str] = set()
        self._occurrences: dict[tuple[str, int | None, str | None], int] = {}
        self.reused: set[str] = set(reused)
        """Execution keys the parent run finished (resume, re-run): their gates are not
        asked again."""
        self._reused_gates = dict(reused_gates or {})
        self._reused_send_backs = {
            node: list(notes) for node, notes in (reused_send_backs or {}).items()
        }
        """The parent's send-backs at gates outside loops, by node: made again, in order,
        before the gate (their executions reused), so what follows gets what the person
        let through, not what they sent back."""
        self._slots = asyncio.Semaphore(MAX_CONCURRENT_STEPS)
        self._stopped: str | None = None
        self._unanswerable: str | None = None
        self._failures: list[str] = []

    # ------------------------------------------------------------------------ the walk

    def _unit(self, node: str) -> str:
        step = self.shape.steps[self.position[node]]
        return step.loop or node

    def _units(self) -> dict[str, set[str]]:
        units: dict[str, set[str]] = {}
        for step in self.shape.steps:
            name = step.name or ""
            unit = self._unit(name)
            before = units.setdefault(unit, set())
            before.update(self._unit(p) for p in self.deps.get(name, []))
            before.discard(unit)
        return units

    async def run(self) -> tuple[Outcome, str | None]:
        units = self._units()
        finished = {unit: asyncio.Event() for unit in units}

        async def one(unit: str) -> None:
            try:
                for before in units[unit]:
                    await finished[before].wait()
                if not self._halted:
                    if unit in self.loops:
                        await self._run_loop(self.loops[unit])
                    else:
                        await self._run_node(unit, None)
            finally:
                finished[unit].set()

        await asyncio.gather(*(one(unit) for unit in units))
        await self._settle_attempts()
        if self._cancel.is_set():
            return "aborted", "the run was cancelled"
        if self._unanswerable is not None:
            return "error", self._unanswerable
        if self._stopped is not None:
            return "aborted", self._stopped
        if self._failures:
            return "error", "; ".join(self._failures)
        return "ok", None

    @property
    def _halted(self) -> bool:
        return self._cancel.is_set() or self._stopped is not None or bool(self._unanswerable)

    # ------------------------------------------------------------------------ one node

    def _step(self, node: str) -> PresetStep:
        return self.shape.steps[self.position[node]]

    def _waited_for(self, node: str) -> list[tuple[str, NodeResult]]:
        """What ``node`` waits for, a loop it comes after standing as one (its status, its
        last answer), not as the members that happened to run last."""
        own_loop = self._step(node).loop
        found: dict[str, NodeResult] = {}
        for before in self.deps.get(node, []):
            loop = self._step(before).loop
            if loop is not None and loop != own_loop:
                found[loop] = self._loop_results.get(loop, NodeResult("skipped"))
            else:
                found[before] = self.results.get(before, NodeResult("skipped"))
        return list(found.items())

    def _skip_reason(self, node: str, iteration: int | None) -> tuple[str | None, str] | None:
        """Why ``node`` does not run now (condition text or None, reason), or None to run."""
        step = self._step(node)
        waited = self._waited_for(node)
        if step.when is None:
            bad = [(n, r) for n, r in waited if r.status != "done"]
            failed = [(n, r) for n, r in bad if r.status in ("failed", "stopped")]
            if failed:
                name, result = failed[0]
                word = "failed" if result.status == "failed" else "was stopped"
                return None, f"it waits for '{name}', which {word}"
            if waited and len(bad) == len(waited):
                return None, "nothing it waits for ran"
            return None
        condition = parse_condition(step.when)
        read = set(condition.steps())
        for name, result in waited:  # a failure the condition does not look at still blocks
            if result.status in ("failed", "stopped") and name not in read:
                word = "failed" if result.status == "failed" else "was stopped"
                return None, f"it waits for '{name}', which {word}"
        seen = {
            name: StepResult(result.status, result.structured)
            for name, result in self.results.items()
        }
        if condition.holds(seen):
            return None
        return step.when, "the condition is false"

    async def _run_node(self, node: str, iteration: int | None, note: str | None = None) -> None:
        if self._halted:
            return
        skip = self._skip_reason(node, iteration)
        index = self._index_for(node)
        if skip is not None:
            condition, reason = skip
            self._emit(
                StepSkipped(
                    run_id=self.run_id,
                    step=index,
                    ts=self._now(),
                    node=node,
                    condition=condition,
                    reason=reason,
                    iteration=iteration,
                )
            )
            self.results[node] = NodeResult("skipped", index=index)
            return
        previous, handed = self._handoffs(node, iteration)
        step = self._step(node)
        sent_back = 0
        if step.gate is not None and iteration is None:
            sent_back = await self._send_back_as_before(node)
            if self._halted:
                return
            if sent_back:
                previous, handed = self._handoffs(node, iteration)
        if step.gate is not None and StepLabel(node, iteration).key not in self.reused:
            passed = await self._gate(node, index, previous, handed, iteration, sent_back)
            if passed is None:
                return
            previous, handed = passed
        await self._keep_settled_attempts(node)
        if step.best_of is not None:
            await self._run_best_of(node, index, previous, handed)
            return
        label = StepLabel(node, iteration)
        await self._execute(node, index, label, previous, handed, note)

    async def _execute(
        self,
        node: str,
        index: int,
        label: StepLabel,
        previous: str | None,
        handed: dict[str, str],
        note: str | None,
        cwd: Path | None = None,
    ) -> StepFinished:
        prepared = self.steps[self.position[node]]
        if cwd is not None:
            prepared = dataclasses.replace(prepared, cwd=cwd)
        where = (label.node, label.iteration, label.branch)
        self._occurrences[where] = self._occurrences.get(where, 0) + 1
        label = dataclasses.replace(label, occurrence=self._occurrences[where])
        task = prepared.task_with("" if previous is None else previous, handed)  # as a chain's
        if note:
            task += f"\n\nA person sent this back to you with a note:\n{note}"
        async with self._slots:
            finished = await self._run_step(index, prepared, task, label)
        if label.branch is None:
            self.results[node] = NodeResult(
                _status_of(finished), finished.output, finished.structured, index
            )
            if finished.status == "error":
                self._failures.append(f"step '{node}' failed: {finished.error or 'error'}")
            if node in self._judged and finished.status == "ok":
                await self._judge_picked(self._judged[node], finished)
        return finished

    def _index_for(self, node: str) -> int:
        if node not in self._used_first:
            self._used_first.add(node)
            return self.position[node]
        index = self._next_index
        self._next_index += 1
        return index

    # ------------------------------------------------------------------------ hand-offs

    def _capped(self, index: int | None, text: str) -> str:
        """``text`` (the answer of step ``index``) as one input is handed on: capped on its
        own, the whole kept once per step however many steps it goes to."""
        number = (index or 0) + 1
        memo = self._capped_texts.get(number)
        if memo is not None and memo[0] is text:
            return memo[1]
        capped = hand_off(
            text, limit=self._limit, run_id=self.run_id, step_number=number, run_file=self._run_file
        )
        self._capped_texts[number] = (text, capped)
        return capped

    def _answers(self, node: str) -> list[tuple[str, str]]:
        """A predecessor's answers as hand-offs: one, or each attempt's under its name."""
        attempts = self.attempts.get(node)
        if attempts is not None and attempts.winner is None:
            done = [(b, self.results.get(b, NodeResult("skipped"))) for b in attempts.branches]
            return [(b, self._capped(r.index, r.output)) for b, r in done if r.status == "done"]
        result = self.results.get(node)
        if result is None or result.status != "done":
            return []
        return [(node, self._capped(result.index, result.output))]

    def _handoffs(self, node: str, iteration: int | None) -> tuple[str | None, dict[str, str]]:
        """``{previous}`` and the other hand-offs the step's task names (only those: each
        costs a cap, and a long answer a file)."""
        step = self._step(node)
        sources = list(self.deps.get(node, []))
        answers: list[tuple[str, str]] = []
        loop = self.loops.get(step.loop or "")
        entry = loop is not None and not [p for p in sources if p in loop.members]
        if loop is not None and entry and (iteration or 1) > 1 and loop.name in self._loop_last:
            name, result = self._loop_last[loop.name]
            answers = [(name, self._capped(result.index, result.output))]
        else:
            for source, waited in self._waited_for(node):
                if source in self.loops:
                    last = self._loop_last.get(source)
                    if waited.status == "done" and last is not None:
                        answers.append((last[0], self._capped(last[1].index, last[1].output)))
                else:
                    answers += self._answers(source)
        outputs = "\n\n".join(f"## {name}\n\n{text}" for name, text in answers)
        previous = answers[0][1] if len(answers) == 1 else outputs if answers else None
        handed = {"outputs": outputs}
        template = self.steps[self.position[node]].spec.task  # a re-run may have changed it
        for name in set(STEP_REF.findall(template)):
            named = self.results.get(name)
            # A step that did not finish (failed, skipped, not run yet) hands nothing on: its
            # placeholder becomes empty, never text a model would take for a form to fill in.
            handed[f"step.{name}"] = (
                self._capped(named.index, named.output)
                if named is not None and named.status == "done"
                else ""
            )
        return previous, handed

    # ------------------------------------------------------------------------ loops

    async def _run_loop(self, loop: LoopSpec, note: str | None = None, extra: bool = False) -> None:
        start = self._iteration.get(loop.name, 0)
        last = start + 1 if extra else loop.max_iterations
        until = parse_condition(loop.until)
        iteration = start
        for iteration in range(start + 1, last + 1):
            if self._halted:
                break
            self._iteration[loop.name] = iteration
            self._emit(
                LoopIterationStarted(
                    run_id=self.run_id, ts=self._now(), loop=loop.name, iteration=iteration
                )
            )
            for member in self._member_order(loop):
                await self._run_node(member, iteration, note if member == loop.members[0] else None)
                result = self.results.get(member)
                if result is not None and result.status != "skipped":
                    self._loop_last[loop.name] = (member, result)
                if result is not None and result.status in ("failed", "stopped"):
                    self._loop_finished(
                        loop,
                        iteration,
                        "aborted" if result.status == "stopped" else "error",
                        f"'{member}' {result.status}",
                    )
                    return
            if self._halted:
                break
            seen = {name: StepResult(r.status, r.structured) for name, r in self.results.items()}
            if until.holds(seen):
                self._loop_finished(
                    loop, iteration, "converged", f"done after {_iterations(iteration)}"
                )
                return
        if self._halted:
            self._loop_finished(loop, iteration, "aborted", f"stopped in iteration {iteration}")
            return
        left = self._left(loop)
        self._loop_finished(
            loop, iteration, "max_iterations", f"stopped after {_iterations(iteration)}: {left}"
        )

    def _member_order(self, loop: LoopSpec) -> list[str]:
        order: list[str] = []
        pending = list(loop.members)
        while pending:
            for member in pending:
                inner = [p for p in self.deps.get(member, []) if p in loop.members]
                if all(p in order for p in inner):
                    order.append(member)
                    pending.remove(member)
                    break
            else:  # validation refuses cycles; never loop forever on a bad shape
                order += pending
                break
        return order

    def _left(self, loop: LoopSpec) -> str:
        """What still stops ``until`` from holding: the issues of the steps it reads."""
        counts: dict[str, int] = {}
        for name in parse_condition(loop.until).steps():
            result = self.results.get(name)
            for severity, count in severity_counts(result.structured if result else None).items():
                counts[severity] = counts.get(severity, 0) + count
        parts = [
            f"{counts[s]} {s}" for s in reversed(SEVERITY_ORDER) if s != "none" and counts.get(s)
        ]
        return f"{', '.join(parts)} left" if parts else f"{loop.until!r} still does not hold"

    def _loop_finished(
        self,
        loop: LoopSpec,
        iterations: int,
        status: Literal["converged", "max_iterations", "error", "aborted"],
        summary: str,
    ) -> None:
        ended: Status = {"error": "failed", "aborted": "stopped"}.get(status, "done")  # type: ignore[assignment]
        last = self._loop_last.get(loop.name)
        self._loop_results[loop.name] = NodeResult(ended, last[1].output if last else "")
        self._emit(
            LoopFinished(
                run_id=self.run_id,
                ts=self._now(),
                loop=loop.name,
                iterations=iterations,
                status=status,
                summary=summary,
            )
        )

    # ------------------------------------------------------------------------ gates

    async def _gate(
        self,
        node: str,
        index: int,
        previous: str | None,
        handed: dict[str, str],
        iteration: int | None,
        sent_back: int = 0,
    ) -> tuple[str | None, dict[str, str]] | None:
        """Ask the person; the hand-off to go on with, or None when the run stops here.
        ``sent_back``: how often the parent run sent it back (already made again)."""
        spec = self._step(node).gate
        assert spec is not None
        earlier = self._reused_gates.pop(node, None) if iteration is None else None
        if earlier is not None:
            decision, text = earlier
            self._log("info", f"the gate before '{node}' was answered before: {decision}")
            return (
                (text, {**handed, "outputs": text or ""})
                if decision == "edit"
                else (
                    previous,
                    handed,
                )
            )
        while True:
            waiting = GateWaiting(
                run_id=self.run_id,
                step=index,
                ts=self._now(),
                gate_id=self._gates.new_id(node),
                node=node,
                question=spec.question,
                handoff=previous or "",
                timeout_s=spec.timeout,
                default=spec.default,
                options=list(PERSON_OPTIONS),
            )
            answer = await self._ask(waiting)
            if answer is None:
                return None
            if answer.decision == "continue":
                return previous, handed
            if answer.decision == "edit":
                text = answer.text or ""
                return text, {**handed, "outputs": text}
            if answer.decision == "stop":
                self._stopped = f"stopped at the gate before '{node}'" + (
                    f" ({answer.by})" if answer.by != "person" else ""
                )
                return None
            if sent_back == MAX_SEND_BACKS:  # a sixth is not run: the run stops here
                self._stopped = (
                    f"stopped at the gate before '{node}': sent back {MAX_SEND_BACKS} times"
                )
                return None
            await self._send_back(node, answer.note or "")
            sent_back += 1
            if self._halted:
                return None
            previous, handed = self._handoffs(node, iteration)

    async def _send_back_as_before(self, node: str) -> int:
        """Send back what ``node``'s gate waits for as the parent run's person did (resume):
        what that ran is reused by its execution key, so what follows gets what they let
        through, not what they sent back. Returns how many times."""
        notes = self._reused_send_backs.pop(node, [])
        for number, note in enumerate(notes, start=1):
            self._log("info", f"the gate before '{node}' was sent back before: {note}")
            await self._send_back(node, note)
            if self._halted:
                return number
        return len(notes)

    async def _ask(self, waiting: GateWaiting) -> GateAnswer | None:
        try:
            return await self._gates.ask(waiting, self._asker, self._cancel)
        except GateUnanswerable as error:
            self._unanswerable = f"the gate before '{waiting.node}' needs a person: {error}"
            return None

    async def _send_back(self, node: str, note: str) -> None:
        """Run what ``node`` waits for again, with the person's note: a step once more, a
        loop one more iteration."""
        own_loop = self._step(node).loop
        units = (
            p if own_loop is not None and self._step(p).loop == own_loop else self._unit(p)
            for p in self.deps.get(node, [])
        )  # inside a loop, the step before (not the loop this gate is in) goes again
        for unit in dict.fromkeys(units):
            if unit in self.loops:
                await self._run_loop(self.loops[unit], note, extra=True)
            else:
                self._used_first.add(unit)
                loop = self._step(unit).loop
                iteration = self._iteration.get(loop) if loop is not None else None
                previous, handed = self._handoffs(unit, iteration)
                label = StepLabel(unit, iteration)
                await self._execute(unit, self._index_for(unit), label, previous, handed, note)

    # ------------------------------------------------------------------------ best of N

    async def _run_best_of(
        self, node: str, index: int, previous: str | None, handed: dict[str, str]
    ) -> None:
        spec = self._step(node).best_of
        assert spec is not None
        prepared = self.steps[self.position[node]]
        attempts = _Attempts(node)
        self.attempts[node] = attempts
        folders: list[Path] = []
        for number in range(1, spec.n + 1):
            try:
                info, folder = await create_worktree(prepared.cwd, f"{self.run_id}-{node}-{number}")
            except WorktreeError as error:
                self._failures.append(f"step '{node}': no worktree for attempt {number}: {error}")
                self.results[node] = NodeResult("failed", index=index)
                await self._discard(attempts.infos)
                attempts.infos.clear()
                return
            attempts.infos.append(info)
            attempts.branches.append(f"{node}#{number}")
            folders.append(folder)
        indexes = [index] + [self._index_for(node) for _ in range(spec.n - 1)]
        runs = [
            self._execute(
                node, indexes[k], StepLabel(node, None, branch), previous, handed, None, folders[k]
            )
            for k, branch in enumerate(attempts.branches)
        ]
        finished = await asyncio.gather(*runs)
        done = 0
        for branch, end, at in zip(attempts.branches, finished, indexes, strict=True):
            self.results[branch] = NodeResult(_status_of(end), end.output, end.structured, at)
            done += end.status == "ok"
        status: Status = "done" if done else "failed"
        if self._cancel.is_set():
            status = "stopped"
        self.results[node] = NodeResult(status, index=index)
        if not done:
            self._failures.append(f"step '{node}': every attempt failed")
            return
        if spec.judge is None:
            await self._person_picks(attempts)

    async def _person_picks(self, attempts: _Attempts) -> None:
        good = [
            b
            for b in attempts.branches
            if self.results.get(b, NodeResult("skipped")).status == "done"
        ]
        waiting = GateWaiting(
            run_id=self.run_id,
            step=self.results[attempts.node].index if attempts.node in self.results else None,
            ts=self._now(),
            gate_id=self._gates.new_id(attempts.node),
            node=attempts.node,
            question=f"Which attempt of '{attempts.node}' should be kept?",
            handoff="\n\n".join(f"## {b}\n\n{self.results[b].output}" for b in good),
            default="stop",
            options=good,
        )
        answer = await self._ask(waiting)
        if answer is None:
            return
        if answer.decision == "stop" or answer.text not in good:
            self._stopped = f"no attempt of '{attempts.node}' was picked"
            return
        self._picked(attempts, good.index(answer.text or "") + 1, answer.by)
        await self._keep(attempts)

    async def _judge_picked(self, node: str, judged: StepFinished) -> None:
        attempts = self.attempts.get(node)
        if attempts is None or attempts.winner is not None:
            return
        number = _winner_in(judged, node, len(attempts.branches))
        if (
            number is None
            or self.results.get(f"{node}#{number}", NodeResult("failed")).status != "done"
        ):
            self._emit(
                Log(
                    run_id=self.run_id,
                    ts=self._now(),
                    level="warning",
                    message=f"the judge named no finished attempt of '{node}': a person picks",
                )
            )
            await self._person_picks(attempts)
            return
        self._picked(attempts, number, "judge")
        self._pending_keeps[node] = attempts

    def _picked(self, attempts: _Attempts, number: int, by: str) -> None:
        attempts.winner = number
        branch = f"{attempts.node}#{number}"
        won = self.results[branch]
        self.results[attempts.node] = NodeResult("done", won.output, won.structured, won.index)
        self._emit(
            BestOfPicked(
                run_id=self.run_id,
                ts=self._now(),
                node=attempts.node,
                winner=branch,
                by="judge" if by == "judge" else "default" if by != "person" else "person",
            )
        )

    async def _keep_settled_attempts(self, node: str) -> None:
        """Keep the winners picked by judges this step comes after (its gate, if any, said
        continue: the winner's changes are wanted)."""
        if not self._pending_keeps:
            return
        before = ancestors(node, self.deps)
        for name, attempts in list(self._pending_keeps.items()):
            judge = self._step(name).best_of
            if judge is not None and judge.judge in before:
                del self._pending_keeps[name]
                await self._keep(attempts)

    async def _keep(self, attempts: _Attempts) -> None:
        """Stage the winner's changes in the run's folder; remove every attempt's worktree."""
        assert attempts.winner is not None
        winner = attempts.infos[attempts.winner - 1]
        others = [info for info in attempts.infos if info is not winner]
        try:
            said = await merge_worktree(
                winner, squash=True, message=f"{attempts.node}: attempt {attempts.winner}"
            )
            self._log("info", f"{attempts.node}#{attempts.winner} kept: {said}")
        except WorktreeError as error:
            self._failures.append(f"the winner of '{attempts.node}' could not be kept: {error}")
            others = attempts.infos
        await self._discard(others)
        attempts.infos = []

    async def _discard(self, infos: list[WorktreeInfo]) -> None:
        for info in infos:
            try:
                await discard_worktree(info)
            except WorktreeError as error:
                self._log("warning", f"could not remove the worktree {info.path}: {error}")

    async def _settle_attempts(self) -> None:
        """At the end: winners still waiting are kept when the run went well; attempts
        nobody picked (a stop, a failure, a cancel) are removed."""
        ok = not (self._halted or self._failures)
        for attempts in self.attempts.values():
            if attempts.infos and ok and attempts.winner is not None:
                await self._keep(attempts)
            elif attempts.infos:
                await self._discard(attempts.infos)
                self._log("info", f"the attempts of '{attempts.node}' were removed, none kept")
                attempts.infos = []

    def _log(self, level: Literal["info", "warning"], message: str) -> None:
        self._emit(Log(run_id=self.run_id, ts=self._now(), level=level, message=message))


def _iterations(count: int) -> str:
    return f"{count} iteration{'s' if count != 1 else ''}"


def _winner_in(judged: StepFinished, node: str, n: int) -> int | None:
    """The attempt the judge named: ``{"winner": 2}``, ``node#2``, ``#2``, or a lone number."""
    structured = judged.structured or {}
    value = structured.get("winner")
    if isinstance(value, int) and 1 <= value <= n:
        return value
    for pattern in (rf"{re.escape(node)}\s*#\s*(\d+)", r"#\s*(\d+)", r"\b(\d+)\b"):
        for match in re.finditer(pattern, judged.output):
            number = int(match.group(1))
            if 1 <= number <= n:
                return number
    return None
