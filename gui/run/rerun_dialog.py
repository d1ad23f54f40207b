"""Re-run from a step: the step's task, agent, model and backend, editable before the new run
starts. The steps before it are copied from the saved run
(:func:`core.run.rerun.rerun_from_request`), so only this step and the later ones send requests.

Opened with ``open()`` (window-modal, no nested event loop): runs keep going while the person
edits. The task shown is the step's planned template, ``{previous}`` still open, as the run
planned it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from core.config.settings import SettingsError, load_settings
from core.definitions.agents import discover_agents
from core.model.errors import RunError
from core.model.events import PlannedStep, RunStarted
from core.model.words import step_range
from core.record.run_files import load_run
from core.run.rerun import rerun_from_request
from core.run.run_request import RunRequest
from gui.launch.launch_dialog import BACKENDS, sentence


@dataclass(frozen=True)
class RerunChoice:
    """What the person changed; None: as the saved run had it (a backend chosen afresh)."""

    task: str | None
    agent: str | None
    model: str | None
    backend: str | None


class RerunDialog(QDialog):
    """See the module docstring. GUI thread only."""

    def __init__(
        self,
        step: int,
        planned: PlannedStep,
        agents: list[str],
        models: list[str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("RerunDialog")
        self.setWindowTitle(f"Re-run from step {step + 1}")
        note = QLabel(
            f"{step_range(1, step)} {'is' if step == 1 else 'are'} reused from this run (no "
            f"requests); step {step + 1} and the later ones run again."
            if step
            else "Every step runs again."
        )
        note.setWordWrap(True)
        note.setObjectName("Secondary")
        self.task = QPlainTextEdit(planned.task)
        self.task.setObjectName("RerunTask")
        self.agent = QComboBox()
        self.agent.setObjectName("RerunAgent")
        self.agent.addItems(sorted({*agents, planned.agent}, key=str.casefold))
        self.agent.setCurrentText(planned.agent)
        self.model = QComboBox()
        self.model.setObjectName("RerunModel")
        self.model.setEditable(True)
        self.model.addItems(list(dict.fromkeys(m for m in [planned.model or "", *models])))
        self.model.setCurrentText(planned.model or "")
        self.backend = QComboBox()
        self.backend.setObjectName("RerunBackend")
        for key, label in BACKENDS:
            self.backend.addItem(label, key)
        self.backend.setToolTip(
            f"Step {step + 1} ran on {planned.backend}; Auto chooses as a new run would. "
            "A backend chosen here runs this step and the later ones."
        )
        self._planned = planned
        form = QFormLayout()
        form.addRow("Task", self.task)
        form.addRow("Agent", self.agent)
        form.addRow("Model", self.model)
        form.addRow("Backend", self.backend)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("Re-run", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.resize(560, 380)

    def choice(self) -> RerunChoice:
        planned = self._planned
        task = self.task.toPlainText()
        agent = self.agent.currentText()
        model = self.model.currentText().strip() or None
        return RerunChoice(
            task=task if task != planned.task else None,
            agent=agent if agent != planned.agent else None,
            model=model if model != planned.model else None,
            backend=self.backend.currentData() or None,
        )


def ask_rerun_from(
    parent: QWidget,
    path: Path,
    step: int,
    start: Callable[[RunRequest], object],
    problem: Callable[[str], None],
) -> RerunDialog | None:
    """Open the dialog for ``step`` of the run saved at ``path``; on "Re-run", ``start`` the
    new run. What cannot be re-run from there (not a chain, an earlier step that failed) is
    said through ``problem`` before anything is asked."""
    try:
        events = load_run(path)
        rerun_from_request(events, step + 1)  # can it be re-run from here at all?
    except OSError as error:
        problem(f"Could not read the run file {path}: {error.strerror or error}")
        return None
    except RunError as error:
        problem(sentence(str(error)))
        return None
    started = next(e for e in events if isinstance(e, RunStarted))
    agents = discover_agents(Path(started.cwd), "both").names()
    try:
        settings = load_settings()
        models = [m for m in (settings.default_model, *settings.model_aliases) if m]
    except SettingsError:
        models = []
    dialog = RerunDialog(step, started.steps[step], agents, models, parent)

    def accepted() -> None:
        chosen = dialog.choice()
        try:
            request = rerun_from_request(
                events,
                step + 1,
                task=chosen.task,
                agent=chosen.agent,
                model=chosen.model,
                backend=chosen.backend,
            )
        except RunError as error:
            problem(sentence(str(error)))
            return
        start(request)

    dialog.accepted.connect(accepted)
    dialog.finished.connect(dialog.deleteLater)
    dialog.open()
    return dialog
