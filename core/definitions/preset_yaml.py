"""Editing a preset file's steps in place: the YAML stays the truth, comments and all.

The Presets view's step editor (add, remove, connect steps; agent, task, ``when:``, ``gate:``)
does not keep a model of its own that it writes out: every change is made to the file's YAML
document, round-tripped by ruamel.yaml, so comments, key order, quoting and block scalars the
person wrote survive an edit, and the result goes back into the text editor, where the usual
validation and atomic save apply (architecture: "Definitions"). A document ruamel.yaml cannot
read is refused with the reason, and the person edits the text instead.

Steps are addressed by their *path*: ``(3,)`` is the fourth item of ``steps:``, ``(1, 0)`` the
first step of the loop that is the second item — the shape of the graph form, where a loop's
steps sit under its ``loop:`` item.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import LiteralScalarString

StepPath = tuple[int, ...]
EDITABLE = ("name", "agent", "task", "after", "when", "gate")
"""The step fields the form edits; others (``model``, ``cwd``, ``best_of``…) are kept as
written."""


class PresetYAMLError(ValueError):
    """The document cannot be edited by the form (the reason is for the person)."""


@dataclass(frozen=True)
class StepFields:
    """One step as the form shows it."""

    path: StepPath
    name: str
    """``name:`` as written ("" for the unnamed steps of single/parallel/chain presets)."""
    agent: str
    task: str
    after: tuple[str, ...] | None
    """None: the default (the item listed before)."""
    when: str
    gate: bool
    question: str
    loop: str | None
    """The loop this step repeats in, if any."""

    def label(self) -> str:
        """How the step list names it: ``check`` or, unnamed, ``step 2``."""
        return self.name or f"step {self.path[-1] + 1}"


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long task onto several lines
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


class PresetDocument:
    """One preset file's YAML, editable step by step. Not thread-safe (one editor owns it)."""

    def __init__(self, text: str) -> None:
        try:
            data = _yaml().load(text)
        except YAMLError as error:
            raise PresetYAMLError(f"the YAML does not parse: {error}") from error
        if not isinstance(data, CommentedMap):
            raise PresetYAMLError("the file is not a mapping of preset fields")
        steps = data.get("steps")
        if steps is None:
            steps = CommentedSeq()
            data["steps"] = steps
        if not isinstance(steps, CommentedSeq):
            raise PresetYAMLError("'steps' is not a list")
        self._data = data
        self._steps = steps

    # -- reading -------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return str(self._data.get("mode", "single"))

    def is_graph(self) -> bool:
        return self.mode == "graph"

    def steps(self) -> list[StepFields]:
        """Every step, loops' members in place, in file order."""
        found: list[StepFields] = []
        for index, item in enumerate(self._steps):
            if not isinstance(item, CommentedMap):
                continue
            loop = item.get("loop")
            if isinstance(loop, CommentedMap):
                members = loop.get("steps")
                if isinstance(members, CommentedSeq):
                    for inner, member in enumerate(members):
                        if isinstance(member, CommentedMap):
                            found.append(_fields((index, inner), member, str(loop.get("name", ""))))
                continue
            found.append(_fields((index,), item, None))
        return found

    def names(self) -> list[str]:
        """Every step's and loop's name: what ``after:`` may say."""
        names = [s.name for s in self.steps() if s.name]
        for item in self._steps:
            if isinstance(item, CommentedMap) and isinstance(item.get("loop"), CommentedMap):
                names.append(str(item["loop"].get("name", "")))
        return [n for n in names if n]

    def text(self) -> str:
        out = StringIO()
        _yaml().dump(self._data, out)
        return out.getvalue()

    # -- editing -------------------------------------------------------------------------

    def set_field(self, path: StepPath, key: str, value: Any) -> None:
        """Set (or, with None / "" / False / an empty gate, remove) one field of a step.

        ``after`` takes a list of names (None: the default); ``gate`` takes ``True``, a
        question (str) or None/False for no gate. Fields already written keep their place.
        """
        if key not in EDITABLE:
            raise PresetYAMLError(f"the form does not edit '{key}'")
        step = self._step(path)
        if key == "after":
            if value is None:
                step.pop("after", None)
            else:
                seq = CommentedSeq(list(value))
                seq.fa.set_flow_style()  # after: [a, b], as people write it
                _put(step, "after", seq)
        elif key == "gate":
            if not value:
                step.pop("gate", None)
            elif value is True:
                _put(step, "gate", True)
            else:
                gate = step.get("gate")
                if isinstance(gate, CommentedMap):
                    gate["question"] = str(value)
                else:
                    mapping = CommentedMap(question=str(value))
                    mapping.fa.set_flow_style()
                    _put(step, "gate", mapping)
        elif value in (None, "") and key in ("name", "when"):
            step.pop(key, None)
        else:
            _put(step, key, _styled(step.get(key), str(value)))

    def add_step(self, agent: str, task: str, name: str | None = None) -> StepPath:
        """Append a step at the end of ``steps:`` (named in graph mode); returns its path."""
        step = CommentedMap()
        if name:
            step["name"] = name
        step["agent"] = agent
        step["task"] = task
        self._steps.append(step)
        return (len(self._steps) - 1,)

    def remove_step(self, path: StepPath) -> None:
        """Remove a step; other steps' ``after:`` lists forget its name (an empty list would
        mean "no predecessor", which is not what they said, so the field goes)."""
        name = str(self._step(path).get("name", ""))
        container = self._container(path)
        del container[path[-1]]
        if not name:
            return
        for item in self.steps():
            if item.after is not None and name in item.after:
                rest = [n for n in item.after if n != name]
                self.set_field(item.path, "after", rest or None)

    def free_name(self, stem: str = "step") -> str:
        taken = set(self.names())
        number = 1
        while f"{stem}-{number}" in taken:
            number += 1
        return f"{stem}-{number}"

    # -- private -------------------------------------------------------------------------

    def _container(self, path: StepPath) -> CommentedSeq:
        if len(path) == 1:
            return self._steps
        loop = self._steps[path[0]]["loop"]
        members = loop["steps"]
        if not isinstance(members, CommentedSeq):
            raise PresetYAMLError("a loop's 'steps' is not a list")
        return members

    def _step(self, path: StepPath) -> CommentedMap:
        try:
            step = self._container(path)[path[-1]]
        except (IndexError, KeyError, TypeError) as error:
            raise PresetYAMLError(f"no step at {path}") from error
        if not isinstance(step, CommentedMap):
            raise PresetYAMLError("that step is not a mapping")
        return step


def _put(step: CommentedMap, key: str, value: Any) -> None:
    """Set ``key`` keeping its place; a new key goes after ``task`` (or at the end)."""
    if key in step:
        step[key] = value
        return
    keys = list(step.keys())
    anchor = "task" if key in ("after", "when", "gate") else "agent"
    position = keys.index(anchor) + 1 if anchor in keys else len(keys)
    if key == "name":
        position = 0
    step.insert(position, key, value)


def _styled(old: Any, new: str) -> str:
    """``new`` written the way the old value was (double-quoted, a ``|`` block…); text with
    line breaks as a ``|`` block, which reads like the task it is."""
    if isinstance(old, str) and type(old) is not str and ("\n" in new) == ("\n" in old):
        return type(old)(new)  # ruamel's quoted and block scalar types are str subclasses
    return LiteralScalarString(new) if "\n" in new else new


def _fields(path: StepPath, step: CommentedMap, loop: str | None) -> StepFields:
    after = step.get("after")
    gate = step.get("gate")
    question = ""
    if isinstance(gate, CommentedMap):
        question = str(gate.get("question", ""))
    return StepFields(
        path=path,
        name=str(step.get("name", "") or ""),
        agent=str(step.get("agent", "") or ""),
        task=str(step.get("task", "") or ""),
        after=tuple(str(a) for a in after) if isinstance(after, list) else None,
        when=str(step.get("when", "") or ""),
        gate=bool(gate),
        question=question,
        loop=loop,
    )
