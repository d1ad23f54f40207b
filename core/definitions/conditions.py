"""Conditions of graph presets: ``when:`` and ``until:`` (architecture: "Graph pipelines").

A small expression language read by a hand-written parser — never ``eval`` — because the text
comes from a preset file, which may come from a checkout nobody has read::

    check.count(critical) == 0 and check.count(major) == 0
    review.max_severity >= major or not review.passed
    scout.status == done

References are ``NAME.status`` (done | failed | skipped | stopped), ``NAME.max_severity``
(``none`` when nothing was found), ``NAME.count(SEVERITY)`` and ``NAME.passed``; literals are
numbers and words; comparisons ``== != < <= > >=`` (severities ordered info < minor < major <
critical), ``and``, ``or``, ``not`` and parentheses. Types are checked when the text is parsed
(a severity compared with a number is an error at its column), so a condition that loads can
always be evaluated.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

SEVERITY_ORDER = ("none", "info", "minor", "major", "critical")
STATUS_WORDS = ("done", "failed", "skipped", "stopped")
ATTRIBUTES = ("status", "max_severity", "count", "passed")
STRUCTURED_ATTRIBUTES = ("max_severity", "count", "passed")
"""Attributes that read a step's structured result (its agent must declare ``output:``)."""
MAX_OUTCOMES_TRIED = 10_000
"""How much :meth:`Condition.could_hold` tries: combinations of the read steps' statuses
times the references read in each (a usual condition: a few dozen)."""

ValueType = Literal["bool", "number", "severity", "status", "word"]


class ConditionError(ValueError):
    """A condition that does not parse; ``column`` is 0-based in the condition text."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


@dataclass(frozen=True)
class StepResult:
    """What a condition can see of a step: how it ended and its structured answer."""

    status: Literal["done", "failed", "skipped", "stopped"]
    structured: Mapping[str, Any] | None = None


# ----------------------------------------------------------------------------- the tree


@dataclass(frozen=True)
class Ref:
    step: str
    attribute: str
    argument: str | None
    column: int


@dataclass(frozen=True)
class Literal_:
    value: str | float | bool
    column: int


@dataclass(frozen=True)
class Compare:
    left: Node
    op: str
    right: Node
    column: int


@dataclass(frozen=True)
class BoolOp:
    op: Literal["and", "or"]
    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    operand: Node


Node = Ref | Literal_ | Compare | BoolOp | Not


@dataclass(frozen=True)
class Condition:
    """A parsed condition: its text, its tree and the steps it reads."""

    text: str
    tree: Node

    def refs(self) -> list[Ref]:
        found: list[Ref] = []

        def walk(node: Node) -> None:
            if isinstance(node, Ref):
                found.append(node)
            elif isinstance(node, Compare):
                walk(node.left)
                walk(node.right)
            elif isinstance(node, BoolOp):
                for part in node.parts:
                    walk(part)
            elif isinstance(node, Not):
                walk(node.operand)

        walk(self.tree)
        return found

    def steps(self) -> list[str]:
        """The step names read, in order, each once."""
        return list(dict.fromkeys(ref.step for ref in self.refs()))

    def holds(self, results: Mapping[str, StepResult]) -> bool:
        """Evaluate against the results by step name; a step without a result counts as
        ``skipped`` with nothing found."""
        return bool(_evaluate(self.tree, results))

    def could_hold(self, statuses: Mapping[str, Collection[str]]) -> bool:
        """Whether some outcome of the steps read makes this hold: each step ending with one
        of ``statuses[name]`` (none given: it has not run, so ``skipped``), and a step that
        ran with any structured result. False means no run can make it true — what
        validation refuses a ``when:`` for (:func:`core.definitions.graph_form.check_graph`).
        A condition with too many outcomes to try (a hostile file's) is assumed to hold."""
        names = self.steps()
        choices = [sorted(statuses.get(name) or ("skipped",)) for name in names]
        tries = math.prod(len(choice) for choice in choices) * len(self.refs())
        if tries > MAX_OUTCOMES_TRIED:
            return True
        for world in itertools.product(*choices):
            if _maybe(self.tree, dict(zip(names, world, strict=True))) is not False:
                return True
        return False


# ----------------------------------------------------------------------------- tokens

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<op>==|!=|<=|>=|<|>)|(?P<punct>[().])"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_-]*))"
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    column: int


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            column = position + len(text[position:]) - len(text[position:].lstrip())
            raise ConditionError(f"unexpected character {text[column]!r}", column)
        kind = match.lastgroup or "word"
        tokens.append(_Token(kind, match.group(kind), match.start(kind)))
        position = match.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


# ----------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def expect(self, text: str, what: str) -> _Token:
        token = self.take()
        if token.text != text:
            found = repr(token.text) if token.kind != "end" else "the end"
            raise ConditionError(f"expected {what}, found {found}", token.column)
        return token

    def parse(self) -> Node:
        if self.peek().kind == "end":
            raise ConditionError("the condition is empty", 0)
        tree = self.disjunction()
        token = self.peek()
        if token.kind != "end":
            raise ConditionError(f"unexpected {token.text!r}", token.column)
        return tree

    def disjunction(self) -> Node:
        parts = [self.conjunction()]
        while self.peek().text == "or":
            self.take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else BoolOp("or", tuple(parts))

    def conjunction(self) -> Node:
        parts = [self.negation()]
        while self.peek().text == "and":
            self.take()
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else BoolOp("and", tuple(parts))

    def negation(self) -> Node:
        if self.peek().text == "not":
            self.take()
            return Not(self.negation())
        return self.comparison()

    def comparison(self) -> Node:
        left = self.operand()
        token = self.peek()
        if token.kind != "op":
            return left
        self.take()
        right = self.operand()
        return Compare(left, token.text, right, token.column)

    def operand(self) -> Node:
        token = self.take()
        if token.text == "(":
            inner = self.disjunction()
            self.expect(")", "')'")
            return inner
        if token.kind == "number":
            return Literal_(float(token.text), token.column)
        if token.kind != "word" or token.text in ("and", "or", "not"):
            found = repr(token.text) if token.kind != "end" else "the end"
            raise ConditionError(f"expected a value, found {found}", token.column)
        if self.peek().text != ".":
            if token.text in ("true", "false"):
                return Literal_(token.text == "true", token.column)
            return Literal_(token.text, token.column)
        self.take()
        attribute = self.take()
        if attribute.text not in ATTRIBUTES:
            raise ConditionError(
                f"unknown attribute {attribute.text!r} (use {', '.join(ATTRIBUTES)})",
                attribute.column,
            )
        argument: str | None = None
        if attribute.text == "count":
            self.expect("(", "'(' after count")
            word = self.take()
            if word.text not in SEVERITY_ORDER[1:]:
                raise ConditionError(
                    f"count takes a severity ({', '.join(SEVERITY_ORDER[1:])})", word.column
                )
            argument = word.text
            self.expect(")", "')'")
        return Ref(token.text, attribute.text, argument, token.column)


# ----------------------------------------------------------------------------- types


def _type_of(node: Node) -> ValueType:
    if isinstance(node, Ref):
        return {
            "status": "status",
            "max_severity": "severity",
            "count": "number",
            "passed": "bool",
        }[node.attribute]  # type: ignore[return-value]
    if isinstance(node, Literal_):
        if isinstance(node.value, bool):
            return "bool"
        if isinstance(node.value, float):
            return "number"
        if node.value in SEVERITY_ORDER:
            return "severity"
        if node.value in STATUS_WORDS:
            return "status"
        return "word"
    if isinstance(node, Compare):
        left, right = _type_of(node.left), _type_of(node.right)
        if left != right:
            raise ConditionError(f"cannot compare a {left} with a {right}", node.column)
        if node.op not in ("==", "!=") and left not in ("number", "severity"):
            raise ConditionError(f"{left} values can only be compared with == or !=", node.column)
        return "bool"
    if isinstance(node, Not):
        _need_bool(node.operand)
        return "bool"
    for part in node.parts:
        _need_bool(part)
    return "bool"


def _need_bool(node: Node) -> None:
    kind = _type_of(node)
    if kind != "bool":
        column = node.column if isinstance(node, Ref | Literal_) else 0
        raise ConditionError(f"a {kind} is not true or false: compare it with something", column)


def parse_condition(text: str) -> Condition:
    """Parse and type-check ``text``; raises :class:`ConditionError` with the column."""
    tree = _Parser(text).parse()
    _need_bool(tree)
    return Condition(text, tree)


# ----------------------------------------------------------------------------- evaluation


def _issues(structured: Mapping[str, Any] | None) -> list[str]:
    if not structured:
        return []
    issues = structured.get("issues")
    if not isinstance(issues, list):
        return []
    return [
        str(issue.get("severity"))
        for issue in issues
        if isinstance(issue, dict) and issue.get("severity") in SEVERITY_ORDER
    ]


def max_severity(structured: Mapping[str, Any] | None) -> str:
    found = _issues(structured)
    return max(found, key=SEVERITY_ORDER.index) if found else "none"


def severity_counts(structured: Mapping[str, Any] | None) -> dict[str, int]:
    counts: dict[str, int] = {}
    for severity in _issues(structured):
        counts[severity] = counts.get(severity, 0) + 1
    return counts


def _value(node: Node, results: Mapping[str, StepResult]) -> str | float | bool:
    if isinstance(node, Literal_):
        return node.value
    if isinstance(node, Ref):
        result = results.get(node.step, StepResult("skipped"))
        if node.attribute == "status":
            return result.status
        if node.attribute == "max_severity":
            return max_severity(result.structured)
        if node.attribute == "count":
            return float(severity_counts(result.structured).get(node.argument or "", 0))
        return bool(result.structured and result.structured.get("passed") is True)
    return _evaluate(node, results)


def _maybe_value(node: Node, world: Mapping[str, str]) -> str | float | bool | None:
    """A value in ``world`` (each step read with its status), None where a structured result
    is read of a step that ran: it could be anything."""
    if isinstance(node, Ref):
        status = world[node.step]
        if node.attribute != "status" and status != "skipped":
            return None
        return _value(node, {node.step: StepResult(status)})  # type: ignore[arg-type]
    if isinstance(node, Literal_):
        return node.value
    return _maybe(node, world)


def _maybe(node: Node, world: Mapping[str, str]) -> bool | None:
    """:func:`_evaluate` in three values: True, False, or None (it depends on a structured
    result). ``and``/``or``/``not`` as in Kleene's logic: ``False and unknown`` is False."""
    if isinstance(node, BoolOp):
        parts = [_maybe(part, world) for part in node.parts]
        decisive = node.op == "or"  # True decides an or, False an and
        if decisive in parts:
            return decisive
        return None if None in parts else not decisive
    if isinstance(node, Not):
        inner = _maybe(node.operand, world)
        return None if inner is None else not inner
    if isinstance(node, Compare):
        left, right = _maybe_value(node.left, world), _maybe_value(node.right, world)
        if left is None or right is None:
            return None
        return bool(_evaluate(Compare(Literal_(left, 0), node.op, Literal_(right, 0), 0), {}))
    value = _maybe_value(node, world)
    return None if value is None else bool(value)


def _evaluate(node: Node, results: Mapping[str, StepResult]) -> str | float | bool:
    if isinstance(node, BoolOp):
        values = (bool(_evaluate(part, results)) for part in node.parts)
        return all(values) if node.op == "and" else any(values)
    if isinstance(node, Not):
        return not _evaluate(node.operand, results)
    if isinstance(node, Compare):
        left, right = _value(node.left, results), _value(node.right, results)
        if isinstance(left, str) and left in SEVERITY_ORDER and isinstance(right, str):
            left, right = SEVERITY_ORDER.index(left), SEVERITY_ORDER.index(right)
        return bool(
            {
                "==": left == right,
                "!=": left != right,
                "<": left < right,  # type: ignore[operator]
                "<=": left <= right,  # type: ignore[operator]
                ">": left > right,  # type: ignore[operator]
                ">=": left >= right,  # type: ignore[operator]
            }[node.op]
        )
    return _value(node, results)
