"""The launch dialog's models: the run's model override, and which model each step will use.

A step's model follows :mod:`core.config.model_choice` (the rule ``baton run`` applies too). A step
of
Baton's own loop with nothing configured uses the provider's only model, so the provider is
asked once, in the background, for the models it serves while the dialog is shown; until it
answers, such a step reads "asking the provider…". A step that can have no model is a reason
Run stays off, which :meth:`StepModels.describe` returns for the dialog to show.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QComboBox, QLabel

from core.backends.registry import backend_for
from core.config.model_choice import choose_model, configured_model, missing_model_problem
from core.config.provider_http import ProbeError, list_models
from core.config.settings import Settings
from core.definitions.agents import AgentCatalog
from core.safety.secrets import api_key_for


class StepModels(QObject):
    """The override combo box and the "Steps use" label, placed by the dialog. GUI thread
    only; the provider is asked on the GUI thread's asyncio loop."""

    # -- signals --------------------------------------------------------------------------

    changed = Signal()
    """The override was edited or the provider answered: the steps' models may differ now."""

    def __init__(self, settings: Settings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self._served: list[str] | None = None
        """The provider's models once asked (None: not known), for steps with no model."""
        self._listing: asyncio.Task[None] | None = None
        self.override_combo = QComboBox()
        self.override_combo.setObjectName("ModelOverride")
        self.override_combo.setEditable(True)
        self.label = QLabel()
        self.label.setObjectName("StepModels")
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._fill_override()
        self.override_combo.currentTextChanged.connect(lambda _t: self.changed.emit())

    # -- public API -----------------------------------------------------------------------

    def override(self) -> str | None:
        """The model chosen for this run, or None (each agent's own)."""
        return self.override_combo.currentText().strip() or None

    def describe(
        self, steps: list[tuple[str, str | None]], agents: AgentCatalog, run_backend: str | None
    ) -> str | None:
        """Show the model of each step (agent name, the step's own model); returns why a step
        cannot have one, or None. Steps naming no known agent are left out."""
        lines: list[str] = []
        problem: str | None = None
        for number, (name, step_model) in enumerate(steps, start=1):
            agent = agents.get(name) if name else None
            if agent is None:
                continue
            backend = backend_for(agent, run_backend, self._settings)
            configured = configured_model(
                backend,
                self._settings,
                run_model=self.override(),
                step_model=step_model,
                agent_model=agent.model,
            )
            choice = choose_model(configured, self._served)
            text = choice.describe()
            if choice.source == "cli":
                text = f"{backend}'s own default model"
            elif choice.source == "none":
                if self._settings.provider() is None:
                    text = "no model provider is configured"
                    problem = problem or (
                        "no model provider is configured: add one in Settings, or set "
                        "OPENAI_BASE_URL, or choose the pi or Claude Code backend"
                    )
                elif self._served is None:
                    text = "the provider's model (asking the provider…)"
                else:
                    text = "no model"
                    problem = problem or missing_model_problem(number, agent.name, self._served)
            lines.append(f"{number}. {agent.name} — {text}")
        self.label.setText("\n".join(lines) or "—")
        return problem

    def shown(self) -> None:
        """The dialog is shown: ask the provider, unless it answered or is being asked."""
        if self._served is None and (self._listing is None or self._listing.done()):
            self._ask_provider()

    def hidden(self) -> None:
        """The dialog is hidden: stop asking (asked again when shown, if it never answered)."""
        if self._listing is not None:
            self._listing.cancel()

    # -- private --------------------------------------------------------------------------

    def _fill_override(self) -> None:
        self.override_combo.addItem("")
        settings = self._settings
        default = settings.default_model
        line_edit = self.override_combo.lineEdit()
        if line_edit is not None:
            line_edit.setPlaceholderText(
                f"each agent's own model, else {default}" if default else "each agent's own model"
            )
        names = [settings.default_model, *settings.model_aliases]
        for name in dict.fromkeys(n for n in names if n):
            self.override_combo.addItem(name)

    def _ask_provider(self) -> None:
        provider = self._settings.provider()
        if provider is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no asyncio loop drives this window (a bare test)

        async def ask() -> None:
            try:
                served = await list_models(provider.base_url, api_key_for(provider))
            except ProbeError:
                served = []
            self._served = served
            combo = self.override_combo
            combo.addItems([m for m in served if combo.findText(m) < 0])
            self.changed.emit()

        self._listing = loop.create_task(ask())
