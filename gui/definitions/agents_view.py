"""The Agents view: the grouped list and its problems on the left, the editor on the right.

The view owns the working folder's :class:`~core.definitions.agents.AgentCatalog` and re-reads it
whenever
the watched folders change (on a worker thread), after a save, and after New / Duplicate /
Delete. Only files changed since the last read are parsed again
(:mod:`gui.definitions.parse_caches`).

The list / editor / prompts machine it shares with the Presets view lives in
:class:`gui.definitions.definitions_view.DefinitionsView`; this module says what is particular to
agents:
discovery with shadowing, the New agent dialog (name, description, scope), copy names that are
free in the target folder, and the window state it remembers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Signal
from PySide6.QtWidgets import QWidget

from gui.definitions.agent_header import AgentHeader
from gui.definitions.agent_list import AgentList
from gui.definitions.agent_rows import SOURCE_LABELS
from gui.definitions.definitions_view import DefinitionsView
from gui.definitions.skills_panel import SkillsPanel
from gui.widgets.prompts import Prompts

if TYPE_CHECKING:
    # Start-up: the window's first view is built and painted before any agent is read, so
    # the agent model (pydantic, yaml) is imported by the first read, on the worker thread;
    # the helpers for files (platformdirs) and the editor's checks where they are first used.
    from core.definitions.agents import AgentCatalog, AgentDefinition
    from core.definitions.checks import Problem
    from core.definitions.skills import SkillCatalog
    from gui.definitions.new_agent_dialog import Scope


class AgentsView(DefinitionsView):
    """See the module docstring. All signals are emitted on the GUI thread."""

    catalogChanged = Signal()
    """The catalog was re-read (:attr:`catalog` is the new one)."""

    header: AgentHeader
    noun = "agent"
    new_tooltip = "New agent (Ctrl+N)"
    empty_icon = "nav-agents"
    empty_text = "Pick an agent on the left to read or edit it, or press Ctrl+N to create one."
    right_min_width = 320

    def __init__(
        self,
        prompts: Prompts,
        settings: QSettings,
        working_folder: Path | None = None,
        parent: QWidget | None = None,
        *,
        read_later: bool = False,
    ) -> None:
        """``read_later``: build the view without reading the agent files; the owner calls
        :meth:`read_in_background` when it wants them (the window's first view, once the
        window is painted: 1,000 files would hold up its first paint, and a worker thread
        still competes with the GUI thread for the interpreter);
        :attr:`catalogChanged` says when they are listed."""
        agent_list = AgentList()
        super().__init__(prompts, settings, working_folder, parent, agent_list, AgentHeader())
        self.agent_list = agent_list
        self.skills_panel = SkillsPanel()
        self.left_layout.insertWidget(self.left_layout.indexOf(self.diagnostics), self.skills_panel)
        self._read_catalog: AgentCatalog | None = None
        self._by_path: dict[str, AgentDefinition] = {}
        self._listed = False
        self._open_when_read: Path | None = None
        if not read_later:
            self.refresh()

    # -- public API ----------------------------------------------------------------------

    @property
    def catalog(self) -> AgentCatalog:
        return self._catalog

    @property
    def _catalog(self) -> AgentCatalog:
        """What the last read found; an empty catalog before the first one."""
        if self._read_catalog is None:
            from core.definitions.agents import AgentCatalog

            self._read_catalog = AgentCatalog()
        return self._read_catalog

    def read_in_background(self) -> None:
        """List the agent files on a worker thread (see ``read_later``)."""
        self._background.request()

    def is_read(self) -> bool:
        """False until the agent files were first read and listed (see ``read_later``)."""
        return self._listed

    def new_agent(self) -> None:
        from core.definitions import agent_files
        from gui.definitions.new_agent_dialog import ask_new_agent

        if not self.maybe_discard_changes():
            return
        every = [*self._catalog.agents, *self._catalog.shadowed]
        taken: dict[Scope, list[str]] = {
            "user": [a.name for a in every if a.source == "user"],
            "project": [a.name for a in every if a.source == "project"],
        }
        request = ask_new_agent(self.window(), self._working_folder, taken)
        if request is None:
            return
        self._create(request.path, agent_files.template(request.name, request.description))

    def save_state(self) -> None:
        self._settings.setValue("agents/splitter", self.splitter.saveState())
        self._settings.setValue("agents/problemsExpanded", self.diagnostics.is_expanded())
        path = self._editor.path() if self._editor is not None else None
        self._settings.setValue("agents/openFile", str(path) if path else "")

    def restore_state(self) -> None:
        state = self._settings.value("agents/splitter")
        if isinstance(state, QByteArray | bytes):
            self.splitter.restoreState(QByteArray(state))
        expanded = self._settings.value("agents/problemsExpanded", True)
        self.diagnostics.set_expanded(expanded not in (False, "false", "0", 0))
        last = self._settings.value("agents/openFile", "")
        if isinstance(last, str) and last and Path(last).is_file():
            # Also a file that failed to load: it was being fixed. Opened once listed: whether
            # it is a read-only built-in comes from the catalog.
            if self._listed:
                self.open_path(Path(last))
            else:
                self._open_when_read = Path(last)

    # -- DefinitionsView hooks -----------------------------------------------------------

    def _read(self, folder: Path) -> Callable[[], None]:
        from core.definitions.agents import discover_agents, find_project_root
        from core.definitions.skills import PROJECT_SKILL_DIRS, discover_skills
        from gui.definitions.parse_caches import AGENT_FILES

        catalog = discover_agents(folder, "both", AGENT_FILES)
        # Listed whether or not the project is trusted (like its agents); run only after.
        skills = discover_skills(find_project_root(folder, PROJECT_SKILL_DIRS))
        return lambda: self._show(catalog, skills)

    def _show(self, catalog: AgentCatalog, skills: SkillCatalog | None = None) -> None:
        """Show what a read found: the list, the problems, the skills, the open file."""
        if skills is not None:
            self.skills_panel.set_skills(skills)
            catalog.diagnostics.extend(skills.diagnostics)
        self._read_catalog = catalog
        self._by_path = {
            a.path: a for a in [*self._catalog.shadowed, *self._catalog.agents] if a.path
        }
        self.agent_list.set_catalog(self._catalog)
        self.diagnostics.set_diagnostics(self._catalog.diagnostics)
        self._rewatch()
        self._sync_open_file()
        self._listed = True
        if self._open_when_read is not None and self.editor.path() is None:
            self.open_path(self._open_when_read)  # unless the user opened another meanwhile
        self._open_when_read = None
        self.catalogChanged.emit()

    def _validate(self, text: str) -> list[Problem]:
        from core.definitions.checks import validate_agent_text

        return validate_agent_text(text)

    def _source_for(self, path: Path) -> str:
        agent = self._by_path.get(str(path))
        if agent is not None:
            return agent.source
        for folder in self._catalog.folders:  # a file that did not parse: by its folder
            if path.parent == folder.path:
                return folder.source
        return "user"

    def _name_for(self, path: Path) -> str | None:
        agent = self._by_path.get(str(path))
        return agent.name if agent else None

    def _show_header(self, path: Path, source: str) -> None:
        agent = self._by_path.get(str(path))
        override = ""
        if agent is not None and agent.overrides:
            below = self._by_path.get(agent.overrides)
            override = f"overrides {SOURCE_LABELS[below.source].lower()}" if below else "overrides"
        elif agent is not None and agent not in self._catalog.agents:
            winner = self._catalog.get(agent.name)
            if winner is not None:
                override = f"shadowed by {SOURCE_LABELS[winner.source].lower()}"
        self.header.show_agent(agent, str(path), source, override)

    def _copy_plan(self, path: Path, name: str) -> tuple[Path, str]:
        """A built-in's copy keeps its name when the user has none of that name (so it
        replaces the built-in); any other copy gets a name free in its folder."""
        from core.definitions import agent_files

        every = [a.name for a in [*self._catalog.agents, *self._catalog.shadowed]]
        if self._source_for(path) == "builtin":
            folder = agent_files.user_agents_dir()
            user_names = {a.key for a in self._by_path.values() if a.source == "user"}
            free = name.casefold() not in user_names
            target_stem = agent_files.file_stem(name)
            new_name = name if free else agent_files.copy_name(name, folder, every)
        else:
            folder = path.parent
            new_name = agent_files.copy_name(name, folder, every)
            target_stem = agent_files.file_stem(new_name)
        return agent_files.unique_path(folder, target_stem), new_name

    def _with_name(self, text: str, new_name: str) -> str:
        from core.definitions import agent_files

        return agent_files.with_name(text, new_name)

    def _new_clicked(self) -> None:
        self.new_agent()

    def _on_open_diagnostic(self, path: str, line: int) -> None:
        if Path(path).is_file():  # a problem may name a folder, or a file deleted since
            self.open_path(Path(path), line)

    def _rewatch(self) -> None:
        from core.config import paths
        from core.definitions import agent_files
        from core.definitions.agents import PROJECT_AGENT_DIRS

        root = self._catalog.project_root or self._working_folder
        may_appear = [
            paths.pi_agent_dir() / "agents",
            agent_files.user_agents_dir(),
            *(root / sub for sub in PROJECT_AGENT_DIRS),
        ]
        folders = [f.path for f in self._catalog.folders if f.source != "builtin"]
        self.watcher.watch(folders, may_appear)
