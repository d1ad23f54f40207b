"""The typed-parameters form of the launch dialog, generated from the agents' ``params:``.

An agent may declare typed inputs (``params:``, architecture: "File formats"); a run substitutes
their values into
its tasks as ``{name}`` (:attr:`core.run.run_request.RunRequest.params`). This form shows one field
per
parameter of the agents a run uses — enum → combo box, number → double spin box, integer →
spin box, boolean → check box, string → line edit — with the defaults filled in.

Values are checked by :func:`core.definitions.params.validate_params`, the same rules ``baton run
--param``
follows. Two agents may declare the same name; the first declaration wins and the field's
tooltip says which agents use it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from core.definitions.agents import AgentDefinition, ParamSpec
from core.definitions.params import collect_params, validate_params
from gui.widgets import PlainLabel

_INT_LIMIT = 2_147_483_647
_FLOAT_LIMIT = 1e12


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
            label = PlainLabel(name)
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
            spin.setRange(
                -_FLOAT_LIMIT if spec.min is None else spec.min,
                _FLOAT_LIMIT if spec.max is None else spec.max,
            )
            spin.setDecimals(_decimals(spec.default))
            value = remembered if isinstance(remembered, int | float) else spec.default
            spin.setValue(float(value) if isinstance(value, int | float) else 0.0)
            spin.valueChanged.connect(self.changed)
            widget = spin
        elif spec.type == "integer":
            box = QSpinBox()
            box.setRange(
                -_INT_LIMIT if spec.min is None else math.ceil(spec.min),
                _INT_LIMIT if spec.max is None else math.floor(spec.max),
            )
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
