"""The presets list: grouped by source like the agents list, drawn by the same delegate.

:class:`PresetList` is an :class:`gui.agent_list.AgentList` fed with preset rows instead of
agent rows, so selection by path, filtering, keyboard moves over group headers and the
two-line painting are shared. Presets that another one of the same name replaces (a user
preset overriding a built-in) are listed greyed at the end of their group, as agents are.

:func:`read_preset_files` reads every preset file of every folder (the catalog of
:func:`core.presets.discover_presets` keeps only the winners), so replaced and broken files
can still be opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.agents import Diagnostic, Source, list_definition_files
from core.presets import Preset, PresetCatalog, PresetError, parse_preset_text, preset_folders
from gui.agent_list import AgentList
from gui.agent_rows import GROUP_ORDER, SOURCE_LABELS, AgentEntry


@dataclass(frozen=True)
class PresetFile:
    path: Path
    source: Source
    preset: Preset | None
    """None when the file does not parse (its problem is in the catalog's diagnostics)."""


def read_preset_files(cwd: Path) -> list[PresetFile]:
    """Every preset file visible from ``cwd``, lowest precedence first."""
    found: list[PresetFile] = []
    ignored: list[Diagnostic] = []
    for folder, source in preset_folders(cwd, "both"):
        files = list_definition_files(folder, "*.yaml", ignored)
        files += list_definition_files(folder, "*.yml", ignored)
        for file in sorted(files):
            try:
                text = file.read_text(encoding="utf-8")
                preset: Preset | None = parse_preset_text(text, path=str(file), source=source)
            except (PresetError, OSError, UnicodeDecodeError):
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

    def set_presets(self, files: list[PresetFile], catalog: PresetCatalog) -> None:
        """Show ``files``, marking the ones ``catalog`` (the effective presets) replaces."""
        effective = {p.path for p in catalog.presets}
        winners = {p.key: p for p in catalog.presets}
        rows: dict[str, list[tuple[AgentEntry, str]]] = {source: [] for source in GROUP_ORDER}
        shadowed_rows: dict[str, list[tuple[AgentEntry, str]]] = {s: [] for s in GROUP_ORDER}
        for file in files:
            preset = file.preset
            if preset is None:
                entry = AgentEntry(
                    file.path.stem,
                    "Cannot be read: see Problems",
                    file.source,
                    str(file.path),
                    has_warnings=True,
                )
                rows[file.source].append((entry, str(file.path)))
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
                    preset.description or _summary(preset),
                    file.source,
                    str(file.path),
                    badge,
                )
                rows[file.source].append((entry, _tooltip(preset)))
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
