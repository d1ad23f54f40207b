"""The strip above a run: what ran, how it is going, what it cost, and the run's actions.

::

    ● implement  add a --json flag to 'baton agents'          [Copy] [Export…] [Cancel]
      Running · 42 s · chain, step 2 of 3 · 7 turns ↑24k ↓3.1k $0.0840
      ~/src/baton  ·  started 10:14:05  ·  resumed from run …, at step 2  ·  goal=…
    ┃ Chain stopped at step 2 (planner): the model returned HTTP 500 three times

Everything shown is derived from the :class:`~core.record.run_state.RunState`; the header keeps no
state of its own besides what it last displayed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.model.cost import cost_reason
from core.model.words import counted
from core.record.run_names import run_name
from core.record.run_state import RunState
from gui.changes.run_changes import open_run_changes
from gui.run.usage_rollup import UsageRollup
from gui.theme import SEMIBOLD, SEVERITY_HUES, mix, set_font, set_tone, tint
from gui.widgets import Banner, ElidedLabel
from gui.widgets.run_status import StatusIcon, format_seconds, run_status_label, status_color
from gui.widgets.usage_charts import UsageBar, UsageCharts

COPY_LABEL = "Copy"
"""Short: the header fits an 800 px window; the tooltip says it copies Markdown."""
COPIED_MS = 1500
PROGRESS_KEPT = 170
"""Width (px) of the run's progress ("chain, step 2 of 3") kept while usage gives way."""
"""How long the copy button says "Copied ✓"."""
_PILL_HUES = {
    "running": SEVERITY_HUES["info"],
    "waiting": SEVERITY_HUES["warning"],
    "budget": SEVERITY_HUES["warning"],
    "ok": SEVERITY_HUES["ok"],
    "error": SEVERITY_HUES["error"],
}


def run_title(state: RunState) -> str:
    """The run's name as everywhere else (:func:`core.record.run_names.run_name`), or its id."""
    agents = [step.agent for step in state.steps]
    return run_name(state.mode, state.preset, state.args, agents) or state.run_id or "Run"


def display_status(state: RunState, live: bool) -> str:
    """The run's status word key: a replayed run that never finished is ``incomplete``; a
    running run with a step waiting for approval is ``waiting``."""
    if state.status == "error" and state.stopped_at_budget():
        return "budget"  # a cap did its job: not a failure
    if state.status != "running":
        return state.status
    if not live:
        return "incomplete"
    if any(step.phase == "waiting" for step in state.steps):
        return "waiting"
    return "running"


def progress_text(state: RunState) -> str:
    """``2/3 done, 1 running`` for a parallel run; ``chain, step 2 of 3`` for a chain
    (``chain of 3 steps`` once it completed)."""
    if state.mode == "parallel":
        return state.progress_line()
    if state.mode == "chain" and state.status == "ok":
        return f"chain of {counted(len(state.steps), 'step')}"
    if state.mode == "chain" and state.steps:
        reached = [s.index for s in state.steps if s.phase not in ("pending", "not_run")]
        current = (reached[-1] + 1) if reached else 0
        return f"chain, step {current} of {len(state.steps)}"
    return ""


def run_models(state: RunState) -> list[str]:
    """Every model the run's steps used, in step order, each once."""
    models: list[str] = []
    for step in state.steps:
        model = step.model or step.usage.model
        if model and model not in models:
            models.append(model)
    return models


def usage_text(state: RunState) -> str:
    """The run's usage line, naming every model its steps used (not only the latest)."""
    models = run_models(state)
    if len(models) < 2:
        return state.usage.line()
    return " ".join([state.usage.model_copy(update={"model": None}).line(), ", ".join(models)])


class RunHeader(QWidget):
    """Title, status, elapsed, progress, totals and actions of one run. GUI thread only."""

    copyRequested = Signal()
    exportRequested = Signal()
    cancelRequested = Signal()
    rerunRequested = Signal()
    """Re-run: the same run again, from the start."""
    resumeRequested = Signal()
    """Resume: on from the first unfinished step, the finished ones reused."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RunHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._status = ""
        self._cancelling = False
        self.icon = StatusIcon("pending", 22)
        self.title = ElidedLabel("Waiting for the run to start…", Qt.TextElideMode.ElideRight)
        set_font(self.title, weight=SEMIBOLD, pixel_size=17)
        self.copy_button = QPushButton(COPY_LABEL)
        self.copy_button.setToolTip("Copy the whole run as Markdown")
        self.copy_button.clicked.connect(self.copyRequested)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save the run as a Markdown file")
        self.export_button.clicked.connect(self.exportRequested)
        self.charts_button = QPushButton("Usage")
        self.charts_button.setObjectName("UsageChartsButton")
        self.charts_button.setCheckable(True)
        self.charts_button.setToolTip("Tokens and cost per step, as bars")
        self.charts_button.toggled.connect(self._show_charts)
        self.charts: UsageCharts | None = None
        self.rollup: UsageRollup | None = None
        self._state: RunState | None = None
        self.changes_button = QPushButton("Changes…")
        self.changes_button.setObjectName("RunChangesButton")
        self.changes_button.setToolTip(
            "What the run's parallel tasks changed, together (they shared the folder, so the "
            "changes are not attributed per task), and restoring to before the run"
        )
        self.changes_button.clicked.connect(self._open_changes)
        self.changes_button.hide()  # a step's changes are in its pane; a parallel run's here
        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setToolTip("Run it again from the start, as a new run")
        self.rerun_button.clicked.connect(self.rerunRequested)
        self.rerun_button.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop every running step")
        self.cancel_button.clicked.connect(self._on_cancel)
        self.cancel_button.setEnabled(False)
        top = QHBoxLayout()
        top.setSpacing(10)
        top.addWidget(self.icon)
        top.addWidget(self.title, 1)
        top.addWidget(self.copy_button)
        top.addWidget(self.charts_button)
        top.addWidget(self.export_button)
        top.addWidget(self.changes_button)
        top.addWidget(self.rerun_button)
        top.addWidget(self.cancel_button)

        self.status = QLabel("")
        self.elapsed = QLabel("")
        # The details give way (elided, whole in the tooltip) rather than widen the window.
        # "chain, step 2 of 3" stays whole while the usage figures and the start time give way.
        self.progress = ElidedLabel(
            "", Qt.TextElideMode.ElideRight, prefer_full=True, keep=PROGRESS_KEPT
        )
        self.usage = ElidedLabel("", Qt.TextElideMode.ElideRight, prefer_full=True)
        self.usage.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Parameters and a linked run's origin ("resumed from run …, at step 2") elide rather
        # than widen the window: their full text stays in the tooltip.
        self.params = ElidedLabel("", Qt.TextElideMode.ElideRight, prefer_full=True)
        self.params.setObjectName("RunParams")
        self.params.setToolTip("The agents' parameter values this run used")
        self.params.hide()
        self.origin = ElidedLabel("", Qt.TextElideMode.ElideRight, prefer_full=True)
        self.origin.setObjectName("RunOrigin")
        self.origin.hide()
        self.folder = ElidedLabel("", prefer_full=True)
        self.started = ElidedLabel("", Qt.TextElideMode.ElideRight, prefer_full=True)
        for label in (
            self.elapsed,
            self.progress,
            self.usage,
            self.params,
            self.origin,
            self.folder,
            self.started,
        ):
            set_tone(label, "secondary")
        self._separators = [QLabel("·") for _ in range(3)]
        details = QHBoxLayout()
        details.setContentsMargins(32, 0, 0, 0)
        details.setSpacing(8)
        details.addWidget(self.status)
        for separator, label in zip(
            self._separators, (self.elapsed, self.progress, self.usage), strict=True
        ):
            set_tone(separator, "secondary")
            details.addWidget(separator)
            details.addWidget(label)
        details.addStretch(1)
        # Where, when and from what: the folder, the start, a linked run's origin, the
        # parameters, on a line of their own so that on a narrow window each keeps a readable
        # part (the start beside the figures was cut to "st…" at 800 px).
        where = QHBoxLayout()
        where.setContentsMargins(32, 0, 0, 0)
        where.setSpacing(8)
        where.addWidget(self.folder)
        where.addWidget(self.started)
        where.addWidget(self.origin)
        where.addWidget(self.params)
        where.addStretch(1)

        self.banner = Banner()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 10)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addLayout(details)
        layout.addLayout(where)
        self._layout = layout
        layout.addWidget(self.banner)

    # ---------------------------------------------------------------- public API

    def _show_charts(self, shown: bool) -> None:
        """Per-step bars and the per-agent roll-up, built the first time they are asked for."""
        if shown and self.charts is None:
            self.charts = UsageCharts("step")
            self.rollup = UsageRollup()
            self._layout.insertWidget(self._layout.indexOf(self.banner), self.charts)
            self._layout.insertWidget(self._layout.indexOf(self.banner), self.rollup)
        if self.charts is not None and self.rollup is not None:
            self.charts.setVisible(shown)
            self.rollup.setVisible(shown)
            if shown and self._state is not None:
                self.charts.set_bars(step_bars(self._state))
                self.rollup.set_state(self._state)

    def update_from(self, state: RunState, *, live: bool, elapsed: float) -> None:
        self._state = state
        if self.charts is not None and self.charts.isVisible():
            self.charts.set_bars(step_bars(state))
        if self.rollup is not None and self.rollup.isVisible():
            self.rollup.set_state(state)
        self.title.set_full_text(run_title(state) if state.steps else self.title.full_text())
        status = display_status(state, live)
        if status != self._status:
            self._status = status
            self._show_status(status)
        if state.status != "running" and self._cancelling:
            self._cancelling = False
            self.cancel_button.setText("Cancel")
        self.cancel_button.setEnabled(live and state.status == "running" and not self._cancelling)
        # Only a run going on here can be cancelled: an ended one gives its room to the title.
        self.cancel_button.setVisible(live and state.status == "running")
        self.set_elapsed(elapsed)
        self._set_part(1, self.progress, progress_text(state))
        line = usage_text(state)
        self._set_part(2, self.usage, line)
        reason = cost_reason(state.usage.cost, state.usage.priced)
        if reason:  # "$—" or "≥$…": say why
            self.usage.setToolTip(f"{line}\n{reason}")
        params = ", ".join(f"{name}={value}" for name, value in state.params.items())
        if params != self.params.full_text().removeprefix("·  "):
            self.params.set_full_text(f"·  {params}" if params else "")
            self.params.setVisible(bool(params))
        self.folder.set_full_text(home_relative(state.cwd))
        origin = f"·  {state.origin}" if state.origin else ""
        if origin != self.origin.full_text():
            self.origin.set_full_text(origin)
            self.origin.setVisible(bool(origin))
        started = state.started_at[:19].replace("T", " ")
        self.started.set_full_text(f"·  started {started}" if started else "")
        finished = state.status != "running" and bool(state.steps)
        self.rerun_button.setVisible(finished and state.status == "ok")
        self.changes_button.setVisible(any(c.kind == "run" for c in state.checkpoints))
        if state.error and state.status != "running":
            failed = state.status == "error" and not state.stopped_at_budget()
            kind = "error" if failed else "info"
            if self.banner.message() != state.error or self.banner.kind() != kind:
                self.banner.show_message(kind, state.error, self._recovery_actions(state))
        elif not self.banner.isHidden():
            self.banner.hide()

    def _recovery_actions(self, state: RunState) -> list[tuple[str, Callable[[], None]]]:
        """A failed or cancelled run offers to go on where it stopped, or to start over."""
        actions: list[tuple[str, Callable[[], None]]] = []
        unfinished = next((s.index for s in state.steps if s.phase != "ok"), None)
        if unfinished is not None and (unfinished > 0 or state.mode != "chain"):
            actions.append((f"Resume from step {unfinished + 1}", self.resumeRequested.emit))
        actions.append(("Re-run", self.rerunRequested.emit))
        return actions

    def set_elapsed(self, seconds: float) -> None:
        self._set_part(0, self.elapsed, format_seconds(seconds) if self._status else "")

    def status_text(self) -> str:
        return self.status.text()

    def flash_copied(self) -> None:
        """Confirm a copy on the button itself, then restore its label."""
        self.copy_button.setText("Copied ✓")
        QTimer.singleShot(COPIED_MS, self, lambda: self.copy_button.setText(COPY_LABEL))

    # ---------------------------------------------------------------- private

    def _set_part(self, index: int, label: QLabel, text: str) -> None:
        if isinstance(label, ElidedLabel):
            if label.full_text() != text:
                label.set_full_text(text)
        elif label.text() != text:
            label.setText(text)
        label.setVisible(bool(text))
        self._separators[index].setVisible(bool(text))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._status:
            self._show_status(self._status)  # the pill's tint follows light ↔ dark

    def _show_status(self, status: str) -> None:
        palette = self.palette()
        hue = _PILL_HUES.get(status)
        if hue is None:
            background = mix(
                palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.1
            )
        else:
            background = tint(palette, hue, 0.18)
        color = status_color(palette, status)
        self.status.setText(run_status_label(status))
        self.status.setStyleSheet(
            f"background: {background.name()}; color: {color.name()}; border-radius: 9px;"
            " padding: 1px 9px; font-weight: 600;"
        )
        icon_phase = {"incomplete": "aborted", "budget": "aborted"}.get(status, status)
        self.icon.set_phase(icon_phase)

    def _open_changes(self) -> None:
        if self._state is not None:
            open_run_changes(self.window(), self._state.run_id)

    def _on_cancel(self) -> None:
        self._cancelling = True
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling…")
        self.cancelRequested.emit()


def step_bars(state: RunState) -> list[UsageBar]:
    """One bar per step: its usage and how long it took."""
    return [
        UsageBar(
            f"{step.index + 1} {step.agent}",
            step.usage,
            step.finished - step.started
            if step.started is not None and step.finished is not None
            else None,
        )
        for step in state.steps
    ]


def home_relative(path: str) -> str:
    """``/home/ann/code/app`` → ``~/code/app``: shorter, and what people recognise."""
    home = str(Path.home())
    if path == home or path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path
