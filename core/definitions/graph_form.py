"""The graph form of presets (``mode: graph``; architecture: "Graph pipelines").

A graph preset names its steps and says what each waits for (``after:``), when it runs
(``when:``), which steps repeat together (``loop:``), where a person decides (``gate:``) and
which step is tried several times (``best_of:``). The file lists loop members nested under
their ``loop:`` item; :func:`flatten_graph_steps` turns that into the flat step list every
preset has (so code that reads ``preset.steps`` keeps working) plus the loop groups.

:func:`dependencies` resolves what each step waits for, with the defaults people expect (the
item listed before; a loop's name stands for its last members), and :func:`check_graph` refuses,
with the line (and column, for conditions) of the file, what cannot run: unknown names, cycles
outside loops, steps that can never start (a cycle, or a ``when:`` no outcome makes true, and
what waits only for such steps), conditions that read a step that does not run before them,
and more than eight steps at once in one wave.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.definitions.conditions import (
    STRUCTURED_ATTRIBUTES,
    ConditionError,
    parse_condition,
)

MAX_WAVE = 8
MAX_LOOP_ITERATIONS = 10
MAX_BEST_OF = 8
NODE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
STEP_REF = re.compile(r"\{step\.([A-Za-z_][\w-]*)\}")


class GraphFormError(ValueError):
    """A graph preset that cannot run; ``line``/``column`` are 1-based where known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


class GateSpec(BaseModel):
    """``gate:`` on a step: a person decides before it starts (``gate: true`` for defaults)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str = "Continue?"
    timeout: float | None = Field(default=None, gt=0)
    """Seconds to wait for a person; then ``default`` is taken."""
    default: Literal["continue", "stop"] = "stop"


class BestOfSpec(BaseModel):
    """``best_of:`` on a step: ``n`` attempts in ``n`` worktrees; the ``judge`` step (or the
    person, when none is named) picks the one whose changes are kept."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(ge=2, le=MAX_BEST_OF)
    judge: str | None = None


class PresetStep(BaseModel):
    """One step of a preset. The graph fields (``name`` … ``loop``) mean something only in
    ``mode: graph``; the other modes refuse them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str = Field(min_length=1)
    task: str
    cwd: str | None = None
    model: str | None = None
    name: str | None = None
    after: list[str] | None = None
    """What this step waits for; None: the item listed before; ``[]``: nothing."""
    when: str | None = None
    gate: GateSpec | None = None
    best_of: BestOfSpec | None = None
    loop: str | None = None
    """The loop group this step is a member of (set from the file's nesting)."""

    @field_validator("gate", mode="before")
    @classmethod
    def _gate_shorthand(cls, value: Any) -> Any:
        if value is True:
            return {}
        if value is False:
            return None
        return value

    @field_validator("best_of", mode="before")
    @classmethod
    def _best_of_shorthand(cls, value: Any) -> Any:
        return {"n": value} if isinstance(value, int) and not isinstance(value, bool) else value

    @property
    def graph_fields(self) -> list[str]:
        fields = ("name", "after", "when", "gate", "best_of", "loop")
        return [name for name in fields if getattr(self, name) is not None]


class LoopSpec(BaseModel):
    """A group of steps repeated ``until`` holds, at most ``max_iterations`` times."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    members: list[str] = Field(min_length=1)
    until: str
    max_iterations: int = Field(default=3, ge=1, le=MAX_LOOP_ITERATIONS)
    after: list[str] | None = None


@dataclass(frozen=True)
class GraphShape:
    """A graph preset's steps and loops as a run request carries them (steps in the same
    order as the request's, so step ``i`` of the run is node ``steps[i].name``)."""

    steps: tuple[PresetStep, ...]
    loops: tuple[LoopSpec, ...] = ()


# ----------------------------------------------------------------------------- reading


def flatten_graph_steps(data: Mapping[str, Any]) -> dict[str, Any]:
    """The preset data with loop items replaced by their members (each marked with its
    loop) and the groups under ``loops``; raises :class:`GraphFormError` on a malformed item."""
    items = data.get("steps")
    if not isinstance(items, list):
        return dict(data)
    steps: list[Any] = []
    loops: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("loop"), dict) and "agent" not in item:
            if len(item) != 1:
                extra = ", ".join(sorted(str(key) for key in item if key != "loop"))
                raise GraphFormError(f"a loop item holds only 'loop:' (found also {extra})")
            body = dict(item["loop"])
            members = body.pop("steps", None)
            if not isinstance(members, list) or not members:
                raise GraphFormError(f"loop '{body.get('name', '?')}' needs steps: a list")
            names = []
            for member in members:
                if not isinstance(member, dict) or "loop" in member:
                    raise GraphFormError(
                        f"loop '{body.get('name', '?')}': loops do not nest; each member is a step"
                    )
                steps.append({**member, "loop": body.get("name")})
                names.append(member.get("name"))
            loops.append({**body, "members": names})
        else:
            if isinstance(item, dict) and "loop" in item:
                raise GraphFormError(
                    "'loop:' is an item of its own (- loop: {name, until, steps}), not a step field"
                )
            steps.append(item)
    flat = dict(data)
    flat["steps"] = steps
    flat["loops"] = loops
    return flat


# ----------------------------------------------------------------------------- shape


def _items(steps: Sequence[PresetStep], loops: Sequence[LoopSpec]) -> list[str]:
    """Top-level item names in file order (a loop once, where its first member is)."""
    items: list[str] = []
    for step in steps:
        item = step.loop if step.loop is not None else step.name
        if item is not None and item not in items:
            items.append(item)
    return items


def _exits(loop: LoopSpec, inner: Mapping[str, list[str]]) -> list[str]:
    waited_on = {name for member in loop.members for name in inner.get(member, [])}
    return [member for member in loop.members if member not in waited_on] or [loop.members[-1]]


def dependencies(steps: Sequence[PresetStep], loops: Sequence[LoopSpec]) -> dict[str, list[str]]:
    """What each step (by name) waits for, names of loops resolved to their last members.
    Unknown names are kept as written (:func:`check_graph` reports them)."""
    by_loop = {loop.name: loop for loop in loops}
    items = _items(steps, loops)
    item_after: dict[str, list[str]] = {}
    for position, item in enumerate(items):
        loop = by_loop.get(item)
        explicit = loop.after if loop is not None else _step(steps, item).after
        default = [items[position - 1]] if position else []
        item_after[item] = list(explicit) if explicit is not None else default
    inner: dict[str, list[str]] = {}
    for loop in loops:
        for position, member in enumerate(loop.members):
            step = _step(steps, member)
            if step.after is not None:
                inner[member] = [n for n in step.after if n in loop.members]
            else:
                inner[member] = [loop.members[position - 1]] if position else []

    def resolve(names: list[str]) -> list[str]:
        out: list[str] = []
        for name in names:
            loop = by_loop.get(name)
            for resolved in _exits(loop, inner) if loop is not None else [name]:
                if resolved not in out:
                    out.append(resolved)
        return out

    deps: dict[str, list[str]] = {}
    for step in steps:
        name = step.name or ""
        if step.loop is None:
            deps[name] = resolve(item_after.get(name, []))
            continue
        loop = by_loop[step.loop]
        own = resolve(list(step.after)) if step.after is not None else list(inner.get(name, []))
        if not inner.get(name):  # an entry of its loop also waits for what the loop waits for
            own += [n for n in resolve(item_after.get(loop.name, [])) if n not in own]
        deps[name] = own
    return deps


def _step(steps: Sequence[PresetStep], name: str) -> PresetStep:
    return next(step for step in steps if step.name == name)


def waves(deps: Mapping[str, list[str]]) -> dict[str, int]:
    """Each step's wave: 0 for roots, else one after its latest predecessor (no cycles).
    Iterative: a hostile file's ten-thousand-step chain must not exhaust the stack."""
    level: dict[str, int] = {}
    for start in deps:
        stack = [start]
        while stack:
            name = stack[-1]
            if name in level:
                stack.pop()
                continue
            waiting = [p for p in deps.get(name, []) if p in deps and p not in level]
            if waiting and not (set(waiting) & set(stack)):
                stack.extend(waiting)
                continue
            known = [level[p] for p in deps.get(name, []) if p in level]
            level[name] = 1 + max(known, default=-1)
            stack.pop()
    return level


def ancestors(name: str, deps: Mapping[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(deps.get(name, []))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(deps.get(current, []))
    return seen


# ----------------------------------------------------------------------------- checks


def _line_of_name(text: str, name: str) -> int | None:
    pattern = re.compile(rf"(?:^|[\s{{,-])name\s*:\s*['\"]?{re.escape(name)}['\"]?\s*(?:$|[,}}#])")
    for number, line in enumerate(text.split("\n"), start=1):
        if pattern.search(line):
            return number
    return None


def _where(text: str, needle: str) -> tuple[int | None, int | None]:
    """The 1-based line and column where ``needle`` is written in ``text``."""
    for number, line in enumerate(text.split("\n"), start=1):
        column = line.find(needle)
        if column >= 0:
            return number, column + 1
    return None, None


def check_graph(steps: Sequence[PresetStep], loops: Sequence[LoopSpec], text: str = "") -> None:
    """Refuse a graph that cannot run (see the module docstring); errors carry the line of
    ``text`` (the file) they concern."""
    _check_names(steps, loops, text)
    deps = dependencies(steps, loops)
    known = set(deps) | {loop.name for loop in loops}
    for step in steps:
        for name in step.after or []:
            if name not in known:
                raise GraphFormError(
                    f"step '{step.name}': after: names '{name}', which is no step or loop",
                    _line_of_name(text, step.name or ""),
                )
    for loop in loops:
        for name in loop.after or []:
            if name not in known:
                raise GraphFormError(
                    f"loop '{loop.name}': after: names '{name}', which is no step or loop",
                    _line_of_name(text, loop.name),
                )
    _check_cycles(deps, text)
    _check_loops_run_whole(steps, deps, text)
    _check_conditions(steps, loops, deps, text)
    _check_references(steps, deps, text)
    level = waves(deps)
    _check_reachable(steps, deps, level, text)
    width: dict[int, int] = {}
    for step in steps:
        wave = level[step.name or ""]
        width[wave] = width.get(wave, 0) + (step.best_of.n if step.best_of else 1)
        if width[wave] > MAX_WAVE:
            raise GraphFormError(
                f"more than {MAX_WAVE} steps would run at once (wave {wave + 1}, reaching "
                f"'{step.name}', counting best_of attempts); chain some of them with after:",
                _line_of_name(text, step.name or ""),
            )


def _check_names(steps: Sequence[PresetStep], loops: Sequence[LoopSpec], text: str) -> None:
    seen: set[str] = set()
    for number, step in enumerate(steps, start=1):
        if step.name is None:
            raise GraphFormError(
                f"step {number} ({step.agent}): every step of a graph needs a name:",
                None,
            )
        for name in [step.name] + [loop.name for loop in loops if loop.members[0] == step.name]:
            if not NODE_NAME.match(name):
                raise GraphFormError(
                    f"'{name}' is not a step name: use a-z, 0-9, '-' and '_', starting "
                    "with a letter",
                    _line_of_name(text, name),
                )
            if name in seen:
                raise GraphFormError(f"two items are named '{name}'", _line_of_name(text, name))
            seen.add(name)


def _check_cycles(deps: Mapping[str, list[str]], text: str) -> None:
    """Depth-first, with an explicit stack (a long chain must not exhaust Python's)."""
    state: dict[str, int] = {}
    for start in deps:
        if start in state:
            continue
        path: list[str] = []
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            name, at = stack.pop()
            if at == 0:
                state[name] = 1
                path.append(name)
            before = deps.get(name, [])
            if at < len(before):
                stack.append((name, at + 1))
                nxt = before[at]
                if state.get(nxt) == 1:
                    cycle = [*path[path.index(nxt) :], nxt]
                    raise GraphFormError(
                        "a cycle outside a loop: "
                        + " → ".join(reversed(cycle))
                        + " (steps that repeat go in a loop: with until: and max_iterations:)",
                        _line_of_name(text, name),
                    )
                if nxt in deps and nxt not in state:
                    stack.append((nxt, 0))
                continue
            state[name] = 2
            path.pop()


def _check_loops_run_whole(
    steps: Sequence[PresetStep], deps: Mapping[str, list[str]], text: str
) -> None:
    """A loop runs as a whole: nothing may wait for one of its members and be waited for by
    another (that step would have to run in the middle of every iteration)."""
    unit = {step.name or "": step.loop or step.name or "" for step in steps}
    units: dict[str, list[str]] = {}
    for name, before in deps.items():
        into = units.setdefault(unit[name], [])
        into += [unit[b] for b in before if b in unit and unit[b] != unit[name]]
    try:
        _check_cycles(units, text)
    except GraphFormError as error:
        raise GraphFormError(
            str(error).replace("a cycle outside a loop", "a loop runs as a whole, but")
            + "; a step outside a loop cannot come between its members",
            error.line,
        ) from None


def _condition_error(error: ConditionError, expression: str, text: str, what: str) -> None:
    line, column = _where(text, expression)
    if column is not None:
        column += error.column
    where = f" (column {column})" if column is not None else ""
    raise GraphFormError(f"{what} {error}{where}", line, column)


def _check_conditions(
    steps: Sequence[PresetStep],
    loops: Sequence[LoopSpec],
    deps: Mapping[str, list[str]],
    text: str,
) -> None:
    loop_of = {step.name: step.loop for step in steps}
    for step in steps:
        if step.when is None:
            continue
        try:
            condition = parse_condition(step.when)
        except ConditionError as error:
            _condition_error(error, step.when, text, f"step '{step.name}' when:")
            continue
        before = ancestors(step.name or "", deps)
        for name in condition.steps():
            same_loop = step.loop is not None and loop_of.get(name) == step.loop
            if name not in loop_of:
                raise GraphFormError(
                    f"step '{step.name}' when: reads '{name}', which is no step",
                    _where(text, step.when)[0],
                )
            if name not in before and not same_loop:
                raise GraphFormError(
                    f"step '{step.name}' when: reads '{name}', which does not run before it "
                    f"(add it to after:)",
                    _where(text, step.when)[0],
                )
    for loop in loops:
        try:
            condition = parse_condition(loop.until)
        except ConditionError as error:
            _condition_error(error, loop.until, text, f"loop '{loop.name}' until:")
            continue
        entry_before = set().union(*(ancestors(m, deps) for m in loop.members))
        for name in condition.steps():
            if name not in loop.members and name not in entry_before:
                raise GraphFormError(
                    f"loop '{loop.name}' until: reads '{name}', which is not in the loop "
                    "or before it",
                    _where(text, loop.until)[0],
                )


def _check_references(
    steps: Sequence[PresetStep], deps: Mapping[str, list[str]], text: str
) -> None:
    names = {step.name for step in steps}
    for step in steps:
        for name in STEP_REF.findall(step.task):
            if name not in names:
                raise GraphFormError(
                    f"step '{step.name}': {{step.{name}}} names no step",
                    _line_of_name(text, step.name or ""),
                )
        if step.best_of is not None and step.best_of.judge is not None:
            judge = step.best_of.judge
            if judge not in names or judge == step.name:
                raise GraphFormError(
                    f"step '{step.name}': judge '{judge}' is no other step",
                    _line_of_name(text, step.name or ""),
                )
            if step.name not in deps.get(judge, []):
                raise GraphFormError(
                    f"judge '{judge}' must run right after '{step.name}' (after: [{step.name}])",
                    _line_of_name(text, judge),
                )
            if step.loop is not None:
                raise GraphFormError(
                    f"step '{step.name}': best_of does not repeat inside a loop",
                    _line_of_name(text, step.name or ""),
                )


RAN = frozenset({"done", "failed", "stopped"})
NOT_RUN = frozenset({"skipped"})


def _check_reachable(
    steps: Sequence[PresetStep],
    deps: Mapping[str, list[str]],
    level: Mapping[str, int],
    text: str,
) -> None:
    """Refuse a step no run can start: its ``when:`` is false whatever the steps it reads end
    with (``a.status == skipped`` of a step that is never skipped; a loop's first step
    reading a member after it, which the first time has not run, so that neither ever
    runs), or it waits only for such steps.

    Each step is taken to be able to end every way it can — done, failed or stopped with any
    structured result once it runs; skipped when it has a condition or waits for anything
    — and what each can end with is widened until nothing changes (a loop's steps read their
    later members' previous iteration, or nothing the first time). So a step refused here
    is one no outcome of the agents could start, never one that merely seems unlikely."""
    order = sorted(steps, key=lambda step: level[step.name or ""])  # what a step reads first
    loop_of = {step.name or "": step.loop for step in steps}
    position = {step.name or "": number for number, step in enumerate(steps)}
    conditions = {s.name or "": parse_condition(s.when) for s in steps if s.when is not None}
    ends: dict[str, frozenset[str]] = {name: frozenset() for name in loop_of}

    def later_in_loop(step: PresetStep, name: str) -> bool:
        """A member of ``step``'s loop listed at or after it: read from the iteration before,
        or, the first time, not run yet."""
        same = step.loop is not None and loop_of.get(name) == step.loop
        return same and position[name] >= position[step.name or ""]

    def seen_by(step: PresetStep, name: str) -> frozenset[str]:
        return ends[name] | NOT_RUN if later_in_loop(step, name) else ends[name]

    def may_run(step: PresetStep) -> bool:
        name = step.name or ""
        condition = conditions.get(name)
        if condition is not None:  # a failure it waits for blocks it, but may not happen
            return condition.could_hold({read: seen_by(step, read) for read in condition.steps()})
        waited = deps.get(name, [])
        return not waited or any(
            (loop_of[before] is not None and loop_of[before] != step.loop)  # a loop ends done
            or "done" in ends[before]
            for before in waited
        )

    # Widened step by step: when what a step may end with grows, what reads it or waits for
    # it is looked at again (each grows at most twice: linear, however long a hostile file).
    by_name = {step.name or "": step for step in steps}
    affects: dict[str, set[str]] = {name: set() for name in by_name}
    for name in by_name:
        read = conditions[name].steps() if name in conditions else []
        for source in [*deps.get(name, []), *read]:
            affects[source].add(name)
    queue = deque(step.name or "" for step in order)
    queued = set(queue)
    while queue:
        name = queue.popleft()
        queued.discard(name)
        step = by_name[name]
        now = (RAN if may_run(step) else frozenset()) | (
            NOT_RUN if step.when is not None or deps.get(name) else frozenset()
        )
        if not now <= ends[name]:
            ends[name] |= now
            queue.extend(sorted(affects[name] - queued, key=level.__getitem__))
            queued |= affects[name]
    for step in order:
        name = step.name or ""
        if ends[name] & RAN:
            continue
        # The first that never runs has the false when: (a step without one never runs only
        # when all it waits for never run, and those come before it): only it is named.
        condition = conditions[name]
        reads = condition.steps()
        said = "is always false"
        if reads:
            said = f"is false however {', '.join(repr(read) for read in reads)} ends"
        later = [read for read in reads if later_in_loop(step, read)]
        if later:
            which = "it reads itself" if later[0] == name else f"'{later[0]}' comes after it"
            said += f" ({which} in the loop: the first time, that has not run)"
        raise GraphFormError(
            f"step '{name}' can never run: when: {condition.text!r} {said}",
            _where(text, condition.text)[0],
        )


def structured_condition_problems(
    steps: Sequence[PresetStep],
    loops: Sequence[LoopSpec],
    has_output: Mapping[str, bool],
) -> list[tuple[str, str]]:
    """``(name, message)`` for each condition reading a structured result (``max_severity``,
    ``count``, ``passed``) of a step whose agent declares no ``output:``; ``has_output`` maps
    agent names (casefolded) to whether they do. Unknown agents are reported elsewhere."""
    agent_of = {step.name: step.agent.casefold() for step in steps}
    problems: list[tuple[str, str]] = []
    sources = [(f"step '{s.name}' when:", s.name or "", s.when) for s in steps]
    sources += [(f"loop '{loop.name}' until:", loop.name, loop.until) for loop in loops]
    for label, owner, expression in sources:
        if expression is None:
            continue
        try:
            condition = parse_condition(expression)
        except ConditionError:
            continue
        for ref in condition.refs():
            agent = agent_of.get(ref.step)
            if (
                ref.attribute in STRUCTURED_ATTRIBUTES
                and agent is not None
                and has_output.get(agent) is False
            ):
                problems.append(
                    (
                        owner,
                        f"{label} reads {ref.step}.{ref.attribute}, but agent "
                        f"'{agent}' declares no output: (a structured result)",
                    )
                )
    return problems


def check_graph_fields_unused(steps: Sequence[PresetStep], mode: str) -> None:
    """Graph fields in a single/parallel/chain preset are refused, not silently ignored."""
    for number, step in enumerate(steps, start=1):
        if step.graph_fields:
            raise GraphFormError(
                f"step {number}: {', '.join(step.graph_fields)} belong to mode: graph, "
                f"not mode: {mode}"
            )
