"""Structured step results: an agent that declares its output shape answers in JSON.

An agent file may say ``output: review`` (Baton's built-in review shape: ``passed`` plus
``issues`` with a severity each) or ``output: {schema: <JSON Schema>}``. The answer's JSON is
taken from a fenced ````json`` block (the last one) or from the whole answer, validated — the
review shape with pydantic, a custom schema with ``jsonschema`` — and carried on
``step_finished`` as ``structured``; the next step's ``{previous}`` then receives the JSON.

Baton's own loop asks the model once more with the validation error when the answer does not
fit (:func:`repair_prompt`); CLI backends' answers are validated as they are.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.model.events import StepFinished

Severity = Literal["critical", "major", "minor", "info"]
SEVERITIES: tuple[Severity, ...] = ("critical", "major", "minor", "info")


class ReviewIssue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    severity: Severity
    description: str = Field(min_length=1)
    file: str | None = None
    line: int | None = Field(default=None, ge=1)


class Review(BaseModel):
    """``output: review``: did the work pass, and what is wrong with it, worst first."""

    model_config = ConfigDict(extra="forbid")

    passed: bool
    issues: list[ReviewIssue] = Field(default_factory=list)


class StructuredOutputError(ValueError):
    """An answer that is not valid JSON of the declared shape; ``str()`` says what is wrong
    in words a model (and a person) can act on."""


class OutputSpec(BaseModel):
    """What an agent's ``output:`` declares."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["review", "schema"]
    json_schema: dict[str, Any]

    @classmethod
    def parse(cls, value: Any) -> OutputSpec:
        """From the frontmatter value; raises ValueError saying what is accepted."""
        if value == "review":
            return cls(kind="review", json_schema=Review.model_json_schema())
        if isinstance(value, dict) and isinstance(value.get("schema"), dict):
            schema: dict[str, Any] = value["schema"]
            import jsonschema  # here, not at import: it costs ~45 ms of every start-up

            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as error:
                raise ValueError(
                    f"output schema is not a valid JSON Schema: {error.message}"
                ) from None
            return cls(kind="schema", json_schema=schema)
        raise ValueError("output must be 'review' or {schema: <a JSON Schema object>}")

    def instructions(self) -> str:
        """Appended to the system prompt so any model knows the expected shape."""
        schema = json.dumps(self.json_schema, indent=2, ensure_ascii=False)
        return (
            "\n\n## Output format\n"
            "End your final answer with one JSON object in a ```json fenced block that "
            f"follows this JSON Schema exactly:\n\n```json\n{schema}\n```\n"
        )

    def validate_answer(self, text: str) -> dict[str, Any]:
        """The answer's JSON object, validated; raises :class:`StructuredOutputError`."""
        data = extract_json(text)
        if self.kind == "review":
            try:
                return Review.model_validate(data).model_dump(exclude_none=True)
            except ValidationError as error:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}"
                    for e in error.errors()
                )
                raise StructuredOutputError(
                    f"the JSON does not fit the review shape: {problems}"
                ) from None
        import jsonschema

        validator = jsonschema.validators.validator_for(self.json_schema)(self.json_schema)
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
        if errors:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e.path) or 'answer'}: {e.message}" for e in errors[:5]
            )
            raise StructuredOutputError(f"the JSON does not fit the schema: {problems}")
        if not isinstance(data, dict):
            raise StructuredOutputError("the answer's JSON must be an object")
        return data


_FENCED = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON in an answer: the last fenced block that parses, else the whole text."""
    for block in reversed(_FENCED.findall(text)):
        try:
            return json.loads(block)
        except json.JSONDecodeError:
            continue
    try:
        return json.loads(text.strip())
    except json.JSONDecodeError:
        raise StructuredOutputError(
            "no JSON object was found (expected one in a ```json fenced block)"
        ) from None


def repair_prompt(error: StructuredOutputError) -> str:
    """The one follow-up Baton's own loop sends when an answer does not fit."""
    return (
        f"Your answer could not be used: {error}. Reply again with only the corrected JSON "
        "object in a ```json fenced block."
    )


def with_structure(spec: OutputSpec | None, finished: StepFinished) -> StepFinished:
    """A finished step checked against its agent's declared output: validated JSON attached,
    or — when the answer does not fit — the step failed with the reason (a chain must not hand
    on a half-formed verdict). Steps without a declaration pass unchanged."""
    if spec is None or finished.status != "ok" or finished.structured is not None:
        return finished
    try:
        structured = spec.validate_answer(finished.output)
    except StructuredOutputError as error:
        return finished.model_copy(
            update={"status": "error", "error": f"the answer is not the declared output: {error}"}
        )
    return finished.model_copy(update={"structured": structured})


def as_handoff(structured: dict[str, Any]) -> str:
    """What ``{previous}`` receives from a structured step: its JSON, readable."""
    return json.dumps(structured, indent=2, ensure_ascii=False)


def issue_counts(structured: dict[str, Any]) -> dict[Severity, int]:
    """Issues per severity of a review result (zeros kept, so headers line up)."""
    counts: dict[Severity, int] = dict.fromkeys(SEVERITIES, 0)
    for issue in structured.get("issues") or []:
        severity = issue.get("severity") if isinstance(issue, dict) else None
        if severity in counts:
            counts[severity] += 1
    return counts


def review_table(structured: dict[str, Any]) -> str:
    """A review result as Markdown: the verdict, then one row per issue, worst first."""
    counts = issue_counts(structured)
    verdict = "passed" if structured.get("passed") else "changes requested"
    summary = ", ".join(f"{n} {severity}" for severity, n in counts.items() if n) or "no issues"
    lines = [f"**Review: {verdict}** ({summary})", ""]
    issues = [i for i in structured.get("issues") or [] if isinstance(i, dict)]
    if not issues:
        return "\n".join(lines).rstrip() + "\n"
    lines += ["| Severity | Where | Issue |", "|---|---|---|"]
    order: dict[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}
    for issue in sorted(issues, key=lambda i: order.get(str(i.get("severity")), len(order))):
        where = str(issue.get("file") or "")
        if where and issue.get("line"):
            where += f":{issue['line']}"
        text = str(issue.get("description", "")).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {issue.get('severity', '')} | {where or '—'} | {text} |")
    return "\n".join(lines) + "\n"
