"""The typed-parameters form of the launch dialog, generated from the agents' ``params:``.

An agent may declare typed inputs (``params:``, DESIGN §2); a run substitutes their values into
its tasks as ``{name}`` (:attr:`core.runner.RunRequest.params`). This form shows one field per
parameter of the agents a run uses — enum → combo box, number → double spin box, integer →
spin box, boolean → check box, string → line edit — with the defaults filled in.

Values are checked by a pydantic model built from the specs (:func:`params_model`), so the
rules live in one place and the error reads like every other validation message in Baton. A
string parameter without a default must be filled in: substituting an empty string into a
task would silently change what the agent is asked.

Two agents may declare the same name; the first declaration wins and the field's tooltip says
which agents use it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from core.agents import AgentDefinition, ParamSpec

_INT_LIMIT = 2_147_483_647
_FLOAT_LIMIT = 1e12


class ParamsError(ValueError):
    """Values that do not fit their specs; the message names each field."""


def collect_params(agents: Iterable[AgentDefinition]) -> dict[str, tuple[ParamSpec, list[str]]]:
    """Every parameter of ``agents``, in declaration order: name → (spec, agent names)."""
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


def _field(spec: ParamSpec) -> tuple[Any, Any, dict[str, Any]]:
    """(annotation, default, extra Field arguments) for one parameter; a default of ``...``
    makes the field required."""
    if spec.type == "enum":
        values = tuple(spec.values or ())
        annotation: Any = Literal[values]
        return annotation, str(spec.default) if spec.default is not None else values[0], {}
    if spec.type == "number":
        number = float(spec.default) if isinstance(spec.default, int | float) else 0.0
        return float, number, {}
    if spec.type == "integer":
        return int, int(spec.default) if isinstance(spec.default, int | float) else 0, {}
    if spec.type == "boolean":
        return bool, bool(spec.default) if spec.default is not None else False, {}
    if spec.default is None:
        return str, ..., {"min_length": 1}
    return str, str(spec.default), {}


def params_model(specs: dict[str, ParamSpec]) -> type[BaseModel]:
    """A pydantic model with one field per parameter. Parameter names may contain ``-``, so
    fields are named ``p0``, ``p1``… and carry the real name as their alias (errors then
    name the parameter as the user knows it)."""
    fields: dict[str, Any] = {}
    for position, (name, spec) in enumerate(specs.items()):
        annotation, default, extra = _field(spec)
        fields[f"p{position}"] = (annotation, Field(default, alias=name, **extra))
    return create_model("AgentParams", __config__=ConfigDict(extra="forbid"), **fields)


def validate_params(specs: dict[str, ParamSpec], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` checked and converted; raises :class:`ParamsError` with a readable reason."""
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
        clauses.append(f"parameter {name}: {message}")
    return "; ".join(clauses)


class ParamsForm(QWidget):
    """One field per parameter of the given agents. GUI thread only."""

    changed = Signal()
    """A value was edited (or the set of fields changed)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ParamsForm")
        self._specs: dict[str, ParamSpec] = {}
        self._widgets: dict[str, QWidget] = {}
        self._remembered: dict[str, Any] = {}
        self._layout = QFormLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)

    # -- public API ----------------------------------------------------------------------

    def set_agents(self, agents: Iterable[AgentDefinition]) -> None:
        """Show the parameters of ``agents``; values typed so far are kept by name."""
        self._remembered.update(self.values())
        params = collect_params(agents)
        specs = {name: spec for name, (spec, _users) in params.items()}
        if specs == self._specs:
            return
        while self._layout.rowCount():
            self._layout.removeRow(0)
        self._specs = specs
        self._widgets = {}
        for name, (spec, users) in params.items():
            widget = self._make_widget(name, spec)
            tip = spec.description or name
            widget.setToolTip(f"{tip}\nUsed by: {', '.join(users)} · in tasks as {{{name}}}")
            self._widgets[name] = widget
            label = QLabel(name)
            label.setToolTip(widget.toolTip())
            self._layout.addRow(label, widget)
        self.changed.emit()

    def is_empty(self) -> bool:
        return not self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    def widget(self, name: str) -> QWidget:
        return self._widgets[name]

    def values(self) -> dict[str, Any]:
        """The values as the widgets hold them (not yet validated)."""
        result: dict[str, Any] = {}
        for name, widget in self._widgets.items():
            if isinstance(widget, QComboBox):
                result[name] = widget.currentText()
            elif isinstance(widget, QDoubleSpinBox | QSpinBox):
                result[name] = widget.value()
            elif isinstance(widget, QCheckBox):
                result[name] = widget.isChecked()
            elif isinstance(widget, QLineEdit):
                result[name] = widget.text()
        return result

    def validated(self) -> dict[str, Any]:
        """Checked values for :attr:`RunRequest.params`; raises :class:`ParamsError`."""
        return validate_params(self._specs, self.values())

    # -- private -------------------------------------------------------------------------

    def _make_widget(self, name: str, spec: ParamSpec) -> QWidget:
        remembered = self._remembered.get(name)
        widget: QWidget
        if spec.type == "enum":
            combo = QComboBox()
            combo.addItems(spec.values or [])
            chosen = remembered if remembered in (spec.values or []) else spec.default
            if chosen is not None:
                combo.setCurrentText(str(chosen))
            combo.currentTextChanged.connect(self.changed)
            widget = combo
        elif spec.type == "number":
            spin = QDoubleSpinBox()
            spin.setRange(-_FLOAT_LIMIT, _FLOAT_LIMIT)
            spin.setDecimals(_decimals(spec.default))
            value = remembered if isinstance(remembered, int | float) else spec.default
            spin.setValue(float(value) if isinstance(value, int | float) else 0.0)
            spin.valueChanged.connect(self.changed)
            widget = spin
        elif spec.type == "integer":
            box = QSpinBox()
            box.setRange(-_INT_LIMIT, _INT_LIMIT)
            value = remembered if isinstance(remembered, int) else spec.default
            box.setValue(int(value) if isinstance(value, int | float) else 0)
            box.valueChanged.connect(self.changed)
            widget = box
        elif spec.type == "boolean":
            check = QCheckBox(spec.description)
            value = remembered if isinstance(remembered, bool) else spec.default
            check.setChecked(bool(value))
            check.toggled.connect(self.changed)
            widget = check
        else:
            line = QLineEdit()
            line.setPlaceholderText(spec.description or f"{{{name}}}")
            if isinstance(remembered, str):
                line.setText(remembered)
            elif spec.default is not None:
                line.setText(str(spec.default))
            line.textChanged.connect(self.changed)
            widget = line
        widget.setObjectName(f"param-{name}")
        return widget


def _decimals(default: object) -> int:
    """Enough decimals to show the default exactly (at least two, at most six)."""
    if isinstance(default, float):
        text = repr(default)
        if "." in text and "e" not in text:
            return max(2, min(6, len(text.split(".")[1])))
    return 2
