"""The submitting machine's provider settings, carried to a remote batch worker.

A person starts a batch with their settings and their shell: ``OPENAI_BASE_URL``, a provider's
key variable, a key in their keyring. A worker on a cluster has an environment of its own, and
items must not quietly go to whatever endpoint the cluster's machines happen to name. So the
supervisor captures its provider world once per batch (:func:`capture`) and every worker puts
it in place before running an item (:meth:`ProviderWorld.apply`): each provider variable then
holds the submitter's value, or is unset when the submitter's is; the worker's own values are
never read.

The keys themselves travel (as a local Ray's workers always inherited them), but only in
memory, in the call that starts an item, never in the batch record or a run file; a key kept
in the submitter's keyring travels the same way, under a variable of its own, since the
worker's keyring is not the person's. :func:`repr` of a world names variables, never values.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from core.config.settings import Settings
from core.safety.environment import CLAUDE_PROVIDER_KEYS, PI_PROVIDER_KEYS, known_key_names

PROVIDER_VARIABLES = (
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL",
    *PI_PROVIDER_KEYS,
    *CLAUDE_PROVIDER_KEYS,
)
"""Variables that choose an endpoint or hold a key for one of Baton's backends."""

KEYRING_VARIABLE = "BATON_BATCH_{index}_API_KEY"
"""Where a keyring-held key of the submitter's ``index``-th provider waits on the worker (named
like a key, so tools' environments are scrubbed of it)."""


@dataclass(frozen=True)
class ProviderWorld:
    """The settings every item runs with and the provider variables as the submitter has them
    (None: unset there, so unset on the worker too)."""

    settings: Settings
    environment: Mapping[str, str | None] = field(repr=False)

    def __repr__(self) -> str:
        given = sorted(name for name, value in self.environment.items() if value is not None)
        return f"ProviderWorld(variables={given})"

    def apply(self, environ: os._Environ[str] | dict[str, str] | None = None) -> Settings:
        """Put the submitter's provider variables in this process's environment (or
        ``environ``), replacing the worker's own; the settings to run items with."""
        target = os.environ if environ is None else environ
        for name, value in self.environment.items():
            if value is None:
                target.pop(name, None)
            else:
                target[name] = value
        return self.settings


def capture(settings: Settings, environ: Mapping[str, str] | None = None) -> ProviderWorld:
    """The submitter's provider world: ``settings`` with keyring keys turned into variables,
    and every provider variable's value here (or None)."""
    source = os.environ if environ is None else environ
    names = {*PROVIDER_VARIABLES, *known_key_names(settings)}
    environment: dict[str, str | None] = {name: source.get(name) for name in sorted(names)}
    providers = []
    for index, provider in enumerate(settings.providers):
        key_here = provider.api_key_env and (source.get(provider.api_key_env) or "").strip()
        if provider.api_key_in_keyring and not key_here:
            from core.safety.secrets import api_key_for  # keyring is imported lazily there

            variable = KEYRING_VARIABLE.format(index=index)
            environment[variable] = api_key_for(provider)
            provider = provider.model_copy(
                update={"api_key_env": variable, "api_key_in_keyring": False}
            )
        providers.append(provider)
    return ProviderWorld(settings.model_copy(update={"providers": providers}), environment)
