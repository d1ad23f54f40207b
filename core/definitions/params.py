"""Typed agent parameters (``params:``): which a run uses, and checking the values given.

The same rules serve the launch dialog's form and ``baton run --param NAME=VALUE``: a pydantic
model built from the specs (:func:`params_model`) checks and converts the values, so a value
typed on the command line (always a string) is read the way the form's widget would hold it
(``"3"`` for an integer, ``"yes"`` for a boolean), and the error reads like every other
validation message in Baton — an enum names its allowed values, a range its bounds.

A string parameter without a default must be given: substituting an empty string into a task
would silently change what the agent is asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from core.definitions.agents import AgentDefinition, ParamSpec


class ParamsError(ValueError):
    """Values that do not fit their specs; the message names each parameter."""


def collect_params(agents: Iterable[AgentDefinition]) -> dict[str, tuple[ParamSpec, list[str]]]:
    """Every parameter of ``agents``, in declaration order: name → (spec, agent names).
    Two agents may declare the same name; the first declaration wins."""
    found: dict[str, tuple[ParamSpec, list[str]]] = {}
    for agent in agents:
        for name, spec in agent.params.items():
            if name in found:
                users = found[name][1]
                if agent.name not in users:
                    users.append(agent.name)
            else:
                found[name] = (spec, [agent.name])
    return found


def _bounds(spec: ParamSpec) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    if spec.min is not None:
        bounds["ge"] = spec.min
    if spec.max is not None:
        bounds["le"] = spec.max
    return bounds


def _field(spec: ParamSpec) -> tuple[Any, Any, dict[str, Any]]:
    """(annotation, default, extra Field arguments) for one parameter; a default of ``...``
    makes the field required."""
    if spec.type == "enum":
        values = tuple(spec.values or ())
        annotation: Any = Literal[values]
        return annotation, str(spec.default) if spec.default is not None else values[0], {}
    if spec.type == "number":
        number = float(spec.default) if isinstance(spec.default, int | float) else 0.0
        return float, number, _bounds(spec)
    if spec.type == "integer":
        whole = int(spec.default) if isinstance(spec.default, int | float) else 0
        return int, whole, _bounds(spec)
    if spec.type == "boolean":
        return bool, bool(spec.default) if spec.default is not None else False, {}
    if spec.default is None:
        return str, ..., {"min_length": 1}
    return str, str(spec.default), {}


def params_model(specs: dict[str, ParamSpec]) -> type[BaseModel]:
    """A pydantic model with one field per parameter. Parameter names may contain ``-``, so
    fields are named ``p0``, ``p1``… and carry the real name as their alias (errors then
    name the parameter as the user knows it). Defaults are validated too: a default outside
    its own range is reported, not sent."""
    fields: dict[str, Any] = {}
    for position, (name, spec) in enumerate(specs.items()):
        annotation, default, extra = _field(spec)
        fields[f"p{position}"] = (annotation, Field(default, alias=name, **extra))
    config = ConfigDict(extra="forbid", validate_default=True)
    return create_model("AgentParams", __config__=config, **fields)


def validate_params(specs: dict[str, ParamSpec], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` checked and converted, defaults filled in; raises :class:`ParamsError`."""
    if not specs and not values:
        return {}  # most agents declare none: no model to build (a batch checks every item)
    try:
        model = params_model(specs).model_validate(values)
    except ValidationError as error:
        raise ParamsError(_describe(error)) from None
    return model.model_dump(by_alias=True)


def _describe(error: ValidationError) -> str:
    """``parameter topic: enter a value; parameter words: …`` (one clause per problem)."""
    clauses = []
    for problem in error.errors():
        name = ".".join(str(part) for part in problem["loc"]) or "value"
        message = "enter a value" if problem["type"] == "string_too_short" else problem["msg"]
        if problem["type"] == "missing":
            message = "enter a value"
        clauses.append(f"parameter {name}: {message}")
    return "; ".join(clauses)


def run_params(agents: Sequence[AgentDefinition], given: Mapping[str, Any]) -> dict[str, Any]:
    """A run's values: ``given`` checked against every agent of the run that declares the
    name, defaults filled in. A name no agent declares is refused (a typo would otherwise
    leave ``{name}`` in the task unnoticed)."""
    declared = collect_params(agents)
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ParamsError(
            f"unknown parameter {', '.join(map(repr, unknown))}: the agents of this run "
            f"declare {', '.join(declared) or 'none'}"
        )
    return validate_params({name: spec for name, (spec, _) in declared.items()}, dict(given))


def step_params(
    agent: AgentDefinition, own: Mapping[str, Any], run_values: Mapping[str, Any]
) -> dict[str, Any]:
    """One step's values for its agent: the step's own (``--param STEP.NAME=…``) over the
    run's, checked against the agent's specs."""
    unknown = sorted(set(own) - set(agent.params))
    if unknown:
        raise ParamsError(
            f"unknown parameter {', '.join(map(repr, unknown))} "
            f"(declared: {', '.join(agent.params) or 'none'})"
        )
    given = {name: run_values[name] for name in agent.params if name in run_values}
    return validate_params(agent.params, {**given, **own})


def split_shown(
    shown: Mapping[str, Any], step_count: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The inverse of :func:`params_shown`: (run-wide values, each step's own values), so a
    re-run gets the values a run used."""
    run_wide: dict[str, Any] = {}
    per_step: list[dict[str, Any]] = [{} for _ in range(step_count)]
    for key, value in shown.items():
        number, dot, name = key.partition(".")
        if dot and number.isdigit() and 1 <= int(number) <= step_count:
            per_step[int(number) - 1][name] = value
        else:
            run_wide[key] = value
    return run_wide, per_step


def params_shown(steps: Sequence[tuple[AgentDefinition, Mapping[str, Any]]]) -> dict[str, Any]:
    """The values a run used, for its header and run file: ``name`` when every step that
    declares it used the same value, else ``N.name`` (1-based step) per step."""
    by_name: dict[str, list[tuple[int, Any]]] = {}
    for number, (agent, values) in enumerate(steps, 1):
        for name in agent.params:
            by_name.setdefault(name, []).append((number, values[name]))
    shown: dict[str, Any] = {}
    for name, uses in by_name.items():
        if len({repr(value) for _number, value in uses}) == 1:
            shown[name] = uses[0][1]
        else:
            shown.update({f"{number}.{name}": value for number, value in uses})
    return shown
