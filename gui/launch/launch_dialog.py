"""The launch dialog: start a run from a preset or build one step by step (architecture: "The
window").

Two tabs share one set of options:

* **From a preset** — the presets of the working folder (built-in, user, project), each with
  its description and drawn steps; an arguments field (split like a shell: quotes group
  words) and a live preview of every step's task as the agent will receive it
  (:mod:`gui.launch.launch_preset_page`).
* **Build a run** — single, parallel or chain, with an agent and a task per step
  (:mod:`gui.launch.launch_steps`).

Below: the typed parameters of the agents involved (:mod:`gui.launch.params_form`), the working
folder, a model override with the model each step will use (:mod:`gui.launch.step_models`), the
backend and how this run's approvals are answered.

Nothing is checked twice: the dialog builds a :class:`core.run.run_request.RunRequest` and hands it
to
a *launcher* (the window's :class:`gui.run.run_controller.RunController`), which prepares a
:class:`core.run.runner.Runner` — the same checks as ``baton run``: agents exist, folders exist,
the project is trusted (asking with the trust dialog). Whatever goes wrong comes back as one
sentence shown in the dialog, which stays open so the person can fix it. Ctrl+Enter runs.

What can be known before pressing Run is shown at once, with Run disabled until it is fixed:
a preset or agent whose file has an error (the reason and ``file:line``), a preset naming an
agent that does not exist, and a step folder outside the working folder — that one needs the
person's explicit consent (a check box naming the folder), as ``--allow-outside-folder`` does
on the command line.

The dialog is not modal: a person may look something up in the Agents view while writing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QHideEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.config.settings import Settings, SettingsError, load_settings
from core.definitions import launch_checks
from core.definitions.agents import AgentCatalog, AgentDefinition, discover_agents
from core.definitions.params import ParamsError
from core.definitions.presets import Preset, discover_presets, required_argument_count
from core.model.errors import RunError
from core.run.run_request import RunRequest, StepSpec, request_from_preset
from gui.launch.budget_fields import BudgetFields
from gui.launch.launch_preset_page import PresetPage
from gui.launch.launch_steps import StepInput, StepsEditor
from gui.launch.params_form import ParamsForm
from gui.launch.step_models import StepModels
from gui.widgets import Banner

ApprovalMode = Literal["ask", "all", "deny"]
APPROVAL_CHOICES: list[tuple[ApprovalMode, str]] = [
    ("ask", "Ask me"),
    ("all", "Approve all"),
    ("deny", "Deny all"),
]
BACKENDS = [("", "Auto"), ("openai", "OpenAI-compatible"), ("pi", "pi"), ("claude", "Claude Code")]


class Launcher(Protocol):
    """What the dialog hands its request to (the window's run controller)."""

    async def launch(
        self, request: RunRequest, approvals: ApprovalMode, parent: QWidget | None
    ) -> object | None:
        """Start the run; None when the person cancelled (trust dialog). Raises RunError."""
        ...


class LaunchProblem(ValueError):
    """Something in the dialog's fields that stops a run before it is built."""


def sentence(message: str) -> str:
    """A core error message as a sentence: capital first letter, final full stop."""
    message = message.strip()
    if not message:
        return "Something went wrong."
    message = message[:1].upper() + message[1:]
    return message if message.endswith((".", "!", "?", ")")) else message + "."


@dataclass(frozen=True)
class LaunchInputs:
    """The dialog's fields, kept by the window between runs (a person re-running with a small
    change should not type everything again)."""

    tab: int
    preset: str | None
    args: str
    mode: str
    steps: tuple[StepInput, ...]
    model: str


class _SqueezedColumn(QVBoxLayout):
    """The dialog's body in its scroll area, squeezed to the room there is before it scrolls.

    A scroll area gives a body whose height depends on its width (wrapped labels) its preferred
    height for that width, so the dialog would scroll at its own default size; a column that
    does not report height-for-width gets the viewport, and no less than its minimum."""

    def hasHeightForWidth(self) -> bool:
        return False


class LaunchDialog(QDialog):
    """See the module docstring. GUI thread only."""

    launched = Signal(object)
    """The launcher started a run; the argument is what it returned (a run session)."""

    def __init__(
        self,
        launcher: Launcher,
        working_folder: Path,
        parent: QWidget | None = None,
        *,
        preset: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("LaunchDialog")
        self.setWindowTitle("New run")
        self.setModal(False)
        self.setSizeGripEnabled(True)
        self._launcher = launcher
        self._agents = AgentCatalog()
        self._task: asyncio.Future[None] | None = None
        self._blocked: str | None = None
        """Why Run is disabled right now (shown in the error banner), or None."""
        self._settings = _settings_or_default()
        self._launch_error = False
        self._build(working_folder)
        self._reload_catalogs()
        if preset is not None:
            self.select_preset(preset)
        screen = self.screen().availableGeometry()  # no larger than a small screen's room
        self.resize(min(860, screen.width() - 40), min(720, screen.height() - 40))
        # Typing goes somewhere visible at once: the preset list (type-ahead picks a preset),
        # or the arguments when a preset was chosen already.
        (self.args_edit if preset is not None else self.preset_list).setFocus()

    # -- building ------------------------------------------------------------------------

    def _build(self, working_folder: Path) -> None:
        self.tabs = QTabWidget()
        self.preset_page = PresetPage()
        self.preset_page.presetChanged.connect(self._preset_changed)
        self.preset_page.argumentsChanged.connect(self._update_preview)
        self.preset_page.argumentsChanged.connect(self._edited)
        # Short names for what people (and tests) reach for most.
        self.preset_list = self.preset_page.preset_list
        self.preset_chain = self.preset_page.chain
        self.args_edit = self.preset_page.args_edit
        self.preview = self.preset_page.preview
        self.tabs.addTab(self.preset_page, "From a preset")
        self.steps_editor = StepsEditor()
        self.steps_editor.changed.connect(self._inputs_changed)
        adhoc = QWidget()
        adhoc_layout = QVBoxLayout(adhoc)
        adhoc_layout.addWidget(self.steps_editor)
        self.tabs.addTab(adhoc, "Build a run")
        self.tabs.currentChanged.connect(lambda _i: self._inputs_changed())
        self.tabs.currentChanged.connect(lambda _i: self._show_estimate())

        self.params_form = ParamsForm()
        self.params_form.changed.connect(self._update_preview)
        self.params_box = QGroupBox("Parameters")
        params_layout = QVBoxLayout(self.params_box)
        params_layout.addWidget(self.params_form)
        self.params_box.hide()

        self.folder_edit = QLineEdit(str(working_folder))
        self.folder_edit.setObjectName("WorkingFolder")
        self.folder_edit.editingFinished.connect(self._reload_catalogs)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(browse)
        self.models = StepModels(self._settings, self)
        self.models.changed.connect(self._refresh_blocking)
        self.model_combo = self.models.override_combo
        self.backend_combo = QComboBox()
        for key, label in BACKENDS:
            self.backend_combo.addItem(label, key)
        self.approval_combo = QComboBox()
        self.approval_combo.setObjectName("ApprovalMode")
        for approval_key, label in APPROVAL_CHOICES:
            self.approval_combo.addItem(label, approval_key)
        self.approval_combo.setToolTip(
            "How tool calls that need approval are answered in this run. "
            "Tools your policy denies stay denied."
        )
        options = QGroupBox("Options")
        grid = QGridLayout(options)
        grid.setHorizontalSpacing(8)
        grid.addWidget(QLabel("Working folder"), 0, 0)
        grid.addLayout(folder_row, 0, 1, 1, 5)
        for column, (label, widget) in enumerate(
            (("Model", self.model_combo), ("Backend", self.backend_combo),
             ("Approvals", self.approval_combo))
        ):  # fmt: skip
            grid.addWidget(QLabel(label), 1, 2 * column)
            grid.addWidget(widget, 1, 2 * column + 1)
        grid.setColumnStretch(1, 3)
        grid.setColumnStretch(3, 1)
        grid.setColumnStretch(5, 1)
        self.step_models = self.models.label
        grid.addWidget(QLabel("Steps use"), 2, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.step_models, 2, 1, 1, 5)
        self.backend_combo.currentIndexChanged.connect(lambda _i: self._refresh_blocking())

        self.budget_fields = BudgetFields()
        budget_box = QGroupBox("Budget")
        QVBoxLayout(budget_box).addWidget(self.budget_fields)

        self.outside_check = QCheckBox()
        self.outside_check.setObjectName("AllowOutsideFolder")
        self.outside_check.toggled.connect(lambda _on: self._refresh_blocking())
        self.outside_check.hide()
        self.worktree_check = QCheckBox(
            "Work in a separate git worktree (branch baton/<run>; merge or discard afterwards)"
        )
        self.worktree_check.setObjectName("WorktreeIsolation")
        self.worktree_check.setToolTip(
            "Your checkout stays untouched until you merge; presets with isolation: worktree "
            "always do this"
        )
        self.error_banner = Banner()
        self.error_banner.setObjectName("LaunchError")
        hint = QLabel("Ctrl+Enter runs")
        hint.setObjectName("Secondary")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.reject)
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("RunButton")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        buttons = QHBoxLayout()
        buttons.addWidget(hint)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.run_button)

        # Everything above the buttons scrolls when the screen is short (800 × 600): the
        # dialog's content is taller than that, and Run must stay in reach.
        body = QWidget()
        body.setObjectName("LaunchBody")
        stack = _SqueezedColumn(body)
        stack.setContentsMargins(0, 0, 0, 0)
        stack.addWidget(self.tabs, 1)
        stack.addWidget(self.params_box)
        stack.addWidget(options)
        stack.addWidget(budget_box)
        stack.addWidget(self.outside_check)
        stack.addWidget(self.worktree_check)
        stack.addWidget(self.error_banner)
        scroll = QScrollArea()
        scroll.setObjectName("LaunchScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(body)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(self.run)

    # -- public API ----------------------------------------------------------------------

    def working_folder(self) -> Path:
        return Path(self.folder_edit.text().strip()).expanduser()

    def set_working_folder(self, folder: Path) -> None:
        self.folder_edit.setText(str(folder))
        self._reload_catalogs()

    def select_preset(self, name: str) -> bool:
        """Switch to the preset tab with ``name`` selected."""
        self.tabs.setCurrentIndex(0)
        return self.preset_page.select(name)

    def set_ad_hoc(self, mode: str, steps: list[StepInput]) -> None:
        """Switch to the "Build a run" tab with these steps (e.g. to edit a past run)."""
        self.tabs.setCurrentIndex(1)
        self.steps_editor.set_mode(mode)
        self.steps_editor.set_steps(steps)

    def current_preset(self) -> Preset | None:
        return self.preset_page.current()

    def inputs(self) -> LaunchInputs:
        """What the person filled in, to offer again next time the dialog opens."""
        preset = self.current_preset()
        return LaunchInputs(
            tab=self.tabs.currentIndex(),
            preset=preset.name if preset else None,
            args=self.args_edit.text(),
            mode=self.steps_editor.mode(),
            steps=tuple(self.steps_editor.steps()),
            model=self.model_combo.currentText(),
        )

    def restore(self, inputs: LaunchInputs) -> None:
        self.set_ad_hoc(inputs.mode, list(inputs.steps))
        if inputs.preset is not None:
            self.select_preset(inputs.preset)
            self.args_edit.setText(inputs.args)
        self.tabs.setCurrentIndex(inputs.tab)
        self.model_combo.setEditText(inputs.model)
        self._launch_error = False

    def approval_mode(self) -> ApprovalMode:
        mode: ApprovalMode = self.approval_combo.currentData()
        return mode

    def show_error(self, message: str) -> None:
        """A problem found when Run was pressed; it goes away at the next edit (Run checks
        again), unlike what blocks Run, which stays until it is fixed."""
        self.error_banner.show_message("error", sentence(message))
        self._launch_error = True

    def _edited(self) -> None:
        if self._launch_error and self._blocked is None:
            self.error_banner.hide()
        self._launch_error = False

    def error_text(self) -> str:
        return self.error_banner.message() if self.error_banner.isVisible() else ""

    def build_request(self) -> RunRequest:
        """The request the fields describe; raises :class:`LaunchProblem`, ParamsError or
        RunError with a sentence for the person."""
        folder = self.working_folder()
        if not self.folder_edit.text().strip() or not folder.is_dir():
            raise LaunchProblem(f"the working folder {folder} does not exist")
        if self._blocked is not None:
            raise LaunchProblem(self._blocked)
        params = self.params_form.validated()
        options: dict[str, Any] = {
            "model": self.models.override(),
            "backend": self.backend_combo.currentData() or None,
            "params": params,
            "allow_outside_folder": self.outside_check.isChecked(),
            "budget": self.budget_fields.budget(),
        }
        if self.worktree_check.isChecked():
            options["isolation"] = "worktree"
        if self.tabs.currentIndex() == 0:
            preset = self.current_preset()
            if preset is None:
                raise LaunchProblem("choose a preset, or build a run in the other tab")
            args = self._arguments()
            needed = required_argument_count(preset)
            if len(args) < needed:
                hint = f": {preset.argument_hint}" if preset.argument_hint else ""
                plural = "s" if needed != 1 else ""
                raise LaunchProblem(
                    f"“{preset.name}” needs {needed} argument{plural}{hint}. Type it in Arguments"
                )
            return request_from_preset(preset, args, folder, **options)
        steps: list[StepSpec] = []
        for number, step in enumerate(self.steps_editor.steps(), start=1):
            if not step.agent and not step.task.strip():
                continue
            if not step.agent:
                raise LaunchProblem(f"step {number}: choose an agent")
            if not step.task.strip():
                raise LaunchProblem(f"step {number}: write a task for {step.agent}")
            steps.append(StepSpec(agent=step.agent, task=step.task, cwd=step.cwd or None))
        if not steps:
            raise LaunchProblem("nothing to run: add a step with an agent and a task")
        mode = self.steps_editor.mode()
        return RunRequest(mode=mode, steps=steps, cwd=folder, **options)  # type: ignore[arg-type]

    def run(self) -> None:
        """Build the request and hand it to the launcher (Run button, Ctrl+Enter)."""
        if self._task is not None and not self._task.done():
            return
        try:
            request = self.build_request()
        except (LaunchProblem, ParamsError, RunError) as error:
            self.show_error(str(error))
            return
        self.error_banner.hide()
        self._task = asyncio.ensure_future(self._launch(request))

    def is_launching(self) -> bool:
        return self._task is not None and not self._task.done()

    # -- private -------------------------------------------------------------------------

    async def _launch(self, request: RunRequest) -> None:
        self.run_button.setEnabled(False)
        self.run_button.setText("Starting…")
        try:
            session = await self._launcher.launch(request, self.approval_mode(), self)
        except RunError as error:
            self.show_error(str(error))
            return
        finally:
            self.run_button.setEnabled(self._blocked is None)
            self.run_button.setText("Run")
        if session is None:
            self.error_banner.show_message("info", "Nothing was run.")
            return
        self.launched.emit(session)
        self.accept()

    def _arguments(self) -> list[str]:
        try:
            return self.preset_page.arguments()
        except ValueError as error:
            raise LaunchProblem(f"arguments: {error} (quotes must come in pairs)") from None

    def _reload_catalogs(self) -> None:
        folder = self.working_folder()
        if not folder.is_dir():
            return
        self._agents = discover_agents(folder, "both")
        self.steps_editor.set_agents(self._agents.names())
        self.preset_page.set_presets(discover_presets(folder, "both"), self._agents)

    def _step_models(self, steps: list[tuple[str, str]]) -> str | None:
        """Show each step's model; returns why a step cannot have one (Run stays off)."""
        preset = self.current_preset() if self.tabs.currentIndex() == 0 else None
        step_models = [s.model for s in preset.steps] if preset else [None] * len(steps)
        named = [(name, model) for (name, _folder), model in zip(steps, step_models, strict=False)]
        return self.models.describe(named, self._agents, self.backend_combo.currentData())

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.models.shown()

    def hideEvent(self, event: QHideEvent) -> None:
        self.models.hidden()
        super().hideEvent(event)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Working folder", self.folder_edit.text())
        if folder:
            self.set_working_folder(Path(folder))

    def _preset_changed(self) -> None:
        self.preset_page.describe(self._agents)
        preset = self.current_preset()
        self.budget_fields.set_budget(preset.budget if preset else None)
        self._show_estimate()
        self._inputs_changed()

    def _show_estimate(self) -> None:
        """Earlier runs of the chosen preset; a run built by hand has none to learn from."""
        preset = self.current_preset() if self.tabs.currentIndex() == 0 else None
        self.budget_fields.show_estimate_for(preset.name if preset else None)

    def _used_agents(self) -> list[AgentDefinition]:
        if self.tabs.currentIndex() == 0:
            preset = self.current_preset()
            names = [s.agent for s in preset.steps] if preset else []
        else:
            names = [s.agent for s in self.steps_editor.steps()]
        found = (self._agents.get(name) for name in names if name)
        return [agent for agent in found if agent is not None]

    def _inputs_changed(self) -> None:
        self._edited()
        self.params_form.set_agents(self._used_agents())
        self.params_box.setVisible(not self.params_form.is_empty())
        self._order_params()
        self._update_preview()
        self._refresh_blocking()

    def _order_params(self) -> None:
        """Put the parameter fields in the Tab order where they stand: after the run's inputs,
        before the options — they are built after Cancel and Run, so they would come last."""
        fields = [self.params_form.widget(name) for name in self.params_form.names()]
        if not fields:
            return
        before: QWidget = self.folder_edit
        while (
            before is self.folder_edit
            or before in fields
            or not before.focusPolicy() & (Qt.FocusPolicy.TabFocus)
        ):  # Qt orders only widgets Tab can reach
            previous = before.previousInFocusChain()
            if previous is None or previous is self.folder_edit:
                return
            before = previous
        for field in fields:
            QWidget.setTabOrder(before, field)
            before = field

    def _step_inputs(self) -> list[tuple[str, str]]:
        """(agent, folder) of each step the current tab describes."""
        if self.tabs.currentIndex() == 0:
            preset = self.current_preset()
            return [(s.agent, s.cwd or "") for s in preset.steps] if preset else []
        return [(s.agent, s.cwd) for s in self.steps_editor.steps()]

    def _refresh_blocking(self) -> None:
        """Show what stops the fields from running (disabling Run), or clear it."""
        steps = self._step_inputs()
        outside = launch_checks.outside_folders(self.working_folder(), steps)
        if outside:
            where = ", ".join(f"step {n} in {folder}" for n, folder in outside)
            self.outside_check.setText(f"Let a step work outside the working folder: {where}")
        else:
            self.outside_check.setChecked(False)
        self.outside_check.setVisible(bool(outside))
        blocked = None
        if self.tabs.currentIndex() == 0:
            blocked = self.preset_page.current_problem()
        blocked = blocked or launch_checks.agent_problem(steps, self._agents)
        models_problem = self._step_models(steps)  # shown whatever else blocks the run
        blocked = blocked or models_problem
        if blocked is None and outside and not self.outside_check.isChecked():
            blocked = (
                "a step works outside the working folder; tick the box above if that is intended"
            )
        was_blocked, self._blocked = self._blocked, blocked
        if blocked is not None:
            self.error_banner.show_message("error", sentence(blocked))
        elif was_blocked is not None:
            self.error_banner.hide()
        self.run_button.setEnabled(blocked is None and not self.is_launching())

    def _update_preview(self) -> None:
        self.preset_page.update_preview(self.params_form.values())


def _settings_or_default() -> Settings:
    """The user's settings; defaults when config.yaml cannot be read (Settings says why)."""
    try:
        return load_settings()
    except SettingsError:
        return Settings()
