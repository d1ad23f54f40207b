"""The parsed agent and preset files the GUI keeps between refreshes.

One cache per kind for the whole process: the Agents view, the Presets view (which reads the
agents its steps name) and the launch dialog read the same files, so each unchanged file is
parsed once, whichever of them reads it first (see :mod:`core.definitions.cache`).
"""

from __future__ import annotations

from core.definitions.agents import AgentDefinition, AgentFileError
from core.definitions.cache import ParseCache
from core.definitions.presets import Preset, PresetError

AGENT_FILES: ParseCache[AgentDefinition] = ParseCache((AgentFileError,))
PRESET_FILES: ParseCache[Preset] = ParseCache((PresetError,))
