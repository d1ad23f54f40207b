"""Which model a step will use, and why — decided once for the runner, the launch dialog and
``baton run``, so what the dialog promises is what runs.

The order: the run's override (``--model``, the dialog's Model box), the step's own model (a
preset step's ``model:``), the agent's ``model:``, then — for Baton's own loop only — the
configured default model, and last the provider's only model when it serves exactly one.
pi and Claude Code fall back to their own default models, so a step on them always has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.config.settings import Settings

ModelSource = Literal["run", "step", "agent", "default", "server", "cli", "none"]

SOURCE_WORDS: dict[ModelSource, str] = {
    "run": "chosen for this run",
    "step": "the step's model",
    "agent": "the agent's model",
    "default": "the default model",
    "server": "the server's only model",
    "cli": "the CLI's own default",
    "none": "no model",
}


@dataclass(frozen=True)
class ModelChoice:
    """A step's model (None: the CLI chooses, or nothing could) and where it came from."""

    model: str | None
    source: ModelSource

    def describe(self) -> str:
        """``qwen2.5:7b (the server's only model)``, ``pi's own default`` …"""
        if self.model is None:
            return SOURCE_WORDS[self.source]
        return f"{self.model} ({SOURCE_WORDS[self.source]})"


def configured_model(
    backend: str,
    settings: Settings,
    *,
    run_model: str | None = None,
    step_model: str | None = None,
    agent_model: str | None = None,
) -> ModelChoice:
    """The model the configuration names for a step; ``none`` when Baton's own loop has none
    configured (it then asks the provider, see :func:`choose_model`)."""
    for model, source in (
        (run_model, "run"),
        (step_model, "step"),
        (agent_model, "agent"),
    ):
        if model:
            return ModelChoice(model, source)  # type: ignore[arg-type]
    if backend != "openai":
        return ModelChoice(None, "cli")
    if settings.default_model:
        return ModelChoice(settings.default_model, "default")
    return ModelChoice(None, "none")


def choose_model(configured: ModelChoice, served: list[str] | None) -> ModelChoice:
    """``configured``, or the provider's only model when nothing was configured. ``served`` is
    the provider's model list (None: not known yet)."""
    if configured.source == "none" and served is not None and len(served) == 1:
        return ModelChoice(served[0], "server")
    return configured


def missing_model_problem(step_number: int, agent: str, served: list[str] | None) -> str:
    """Why a step of Baton's own loop has no model, and where to choose one."""
    if served is None:
        why = "no model is configured"
    elif not served:
        why = "the provider lists no models"
    else:
        why = f"the provider serves {len(served)} models"
    return (
        f"step {step_number} ({agent}) has no model: {why}; choose one in the Model box, in "
        "Settings ▸ Models, or with a 'model:' line in the agent file"
    )
