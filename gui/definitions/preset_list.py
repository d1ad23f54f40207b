"""The presets list: grouped by source like the agents list, drawn by the same delegate.

:class:`PresetList` is an :class:`gui.definitions.agent_list.AgentList` fed with preset rows
instead of
agent rows, so selection by path, filtering, keyboard moves over group headers and the
two-line painting are shared. Presets that another one of the same name replaces (a user
preset overriding a built-in) are listed greyed at the end of their group, as agents are. A
preset with an error (a file that does not load, a step naming an unknown agent) carries the
error mark and says why in its second line and tooltip: it is listed but cannot run.

:func:`read_preset_files` reads every preset file of every folder (the catalog of
:func:`core.definitions.presets.discover_presets` keeps only the winners), so replaced and broken
files
can still be opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.definitions.agents import Diagnostic, Source
from core.definitions.cache import ParseCache
from core.definitions.presets import (
    Preset,
    PresetCatalog,
    PresetError,
    preset_files,
    preset_folders,
    read_preset_file,
)
from gui.definitions.agent_list import AgentList
from gui.definitions.agent_rows import GROUP_ORDER, SOURCE_LABELS, AgentEntry, severity_mark


@dataclass(frozen=True)
class PresetFile:
    path: Path
    source: Source
    preset: Preset | None
    """None when the file does not parse (its problem is in the catalog's diagnostics)."""


def read_preset_files(cwd: Path, cache: ParseCache[Preset] | None = None) -> list[PresetFile]:
    """Every preset file visible from ``cwd``, lowest precedence first (parsed again only
    when changed, with a ``cache``)."""
    found: list[PresetFile] = []
    ignored: list[Diagnostic] = []
    for folder, source in preset_folders(cwd, "both"):
        for file in preset_files(folder, ignored):
            try:
                preset: Preset | None = read_preset_file(file, source, cache)
            except PresetError:
                preset = None
            found.append(PresetFile(file, source, preset))
    return found


def _summary(preset: Preset) -> str:
    joiner = " → " if preset.mode == "chain" else " + "
    return joiner.join(step.agent for step in preset.steps)


def _tooltip(preset: Preset) -> str:
    lines = [f"{preset.name} ({preset.mode})", preset.description, _summary(preset)]
    if preset.argument_hint:
        lines.append(f"Arguments: {preset.argument_hint}")
    lines.append(preset.path or "")
    return "\n".join(line for line in lines if line)


class PresetList(AgentList):
    """Grouped preset rows; :attr:`currentPathChanged` gives the file of the picked row."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("PresetList")

    def set_presets(
        self, files: list[PresetFile], catalog: PresetCatalog, problems: list[Diagnostic]
    ) -> None:
        """Show ``files``, marking the ones ``catalog`` (the effective presets) replaces and
        the ones ``problems`` (diagnostics by path) finds fault with."""
        by_path: dict[str, list[Diagnostic]] = {}
        for problem in problems:
            by_path.setdefault(problem.path, []).append(problem)
        effective = {p.path for p in catalog.presets}
        winners = {p.key: p for p in catalog.presets}
        rows: dict[str, list[tuple[AgentEntry, str]]] = {source: [] for source in GROUP_ORDER}
        shadowed_rows: dict[str, list[tuple[AgentEntry, str]]] = {s: [] for s in GROUP_ORDER}
        for file in files:
            preset = file.preset
            own = by_path.get(str(file.path), [])
            error = next((p for p in own if p.severity == "error"), None)
            if preset is None:
                reason = error.message if error else "see Problems"
                entry = AgentEntry(
                    file.path.stem,
                    f"Cannot run: {reason}",
                    file.source,
                    str(file.path),
                    mark="error",
                )
                rows[file.source].append((entry, f"Cannot run: {reason}\n{file.path}"))
                continue
            if str(file.path) in effective:
                badge = (
                    "overrides built-in"
                    if file.source != "builtin"
                    and any(
                        other.source == "builtin"
                        and other.preset
                        and other.preset.key == preset.key
                        for other in files
                    )
                    else ""
                )
                entry = AgentEntry(
                    preset.name,
                    f"Cannot run: {error.message}"
                    if error
                    else preset.description or _summary(preset),
                    file.source,
                    str(file.path),
                    badge,
                    mark=severity_mark(own),
                )
                tooltip = _tooltip(preset)
                if error:
                    tooltip = f"Cannot run: {error.message}\n{tooltip}"
                rows[file.source].append((entry, tooltip))
            else:
                winner = winners.get(preset.key)
                where = SOURCE_LABELS[winner.source].lower() if winner else "another"
                entry = AgentEntry(
                    preset.name,
                    preset.description,
                    file.source,
                    str(file.path),
                    f"replaced by {where}",
                    shadowed=True,
                )
                shadowed_rows[file.source].append((entry, _tooltip(preset)))
        groups = {
            source: (
                len(rows[source]),
                sorted(rows[source], key=lambda r: r[0].name.casefold()) + shadowed_rows[source],
            )
            for source in GROUP_ORDER
        }
        self._show_groups(groups, keep_scroll=False)
