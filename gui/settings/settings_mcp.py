"""Settings ▸ MCP: the MCP servers Baton's own loop may use, the user's and one project's.

The user's servers are ``<config>/mcp.json``, the project's its ``.mcp.json`` (Claude Code's
schema: :mod:`core.config.mcp_servers`); both are edited here as drafts and written when the
dialog saves, dropped on Cancel, like the rules. Each server has an "on in this project" box:
switching a server off is kept in Baton's config, never in the checkout. A project's servers
run only once the project is trusted, which the list says.

**Test connection** starts the server as a run would (sandboxed, scrubbed environment) and
lists its tools. It runs in a worker thread with its own event loop, so a server that takes its
time to start never freezes the window; the answer comes back as a queued signal.
"""

from __future__ import annotations

import asyncio
import shlex
import threading
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.config.mcp_servers import (
    SERVER_NAME,
    McpServer,
    ServerEntry,
    disabled_in,
    project_file,
    read_server_file,
    replace_servers,
    set_enabled,
    user_file,
)
from core.config.settings import Settings
from core.safety.redaction import Redactor
from core.safety.trust import TrustStore
from core.tools.mcp_hub import McpServerError, ServerTools, confinement_for, probe
from gui import theme
from gui.settings.settings_pages import MARGINS, Page
from gui.theme import icons
from gui.widgets import PlainLabel

_ROLE = Qt.ItemDataRole.UserRole
USER = "user"
PROJECT = "project"


class McpPage(Page):
    """A tree (user servers, the project's servers), an editor below, Test connection."""

    tested = Signal(str, object)
    """(server name, :class:`ServerTools` or an error sentence), from the worker thread."""

    def __init__(self, trust_store: TrustStore | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self._trust = trust_store or TrustStore()
        self.project: Path | None = None
        self._servers: dict[str, dict[str, McpServer]] = {USER: {}, PROJECT: {}}
        self._loaded_project: dict[str, McpServer] = {}
        self._off: set[str] = set()
        self._threads: list[threading.Thread] = []
        note = QLabel(
            "Servers an agent may use with mcp: [name] or tools: [mcp__name__tool] in its "
            "frontmatter; none is offered by default. Every call is approved like any tool. "
            "Stdio servers run in the bash sandbox; a project's servers only once the project "
            "is trusted."
        )
        note.setWordWrap(True)
        note.setObjectName("Secondary")
        self.tree = QTreeWidget()
        self.tree.setObjectName("McpServers")
        self.tree.setHeaderLabels(["Server", "Kind", "Command or URL", "On here"])
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.currentItemChanged.connect(self._selected)
        self.tree.itemChanged.connect(self._switched)

        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("McpName")
        self.name_edit.setPlaceholderText("github")
        self.kind_combo = QComboBox()
        self.kind_combo.setObjectName("McpKind")
        self.kind_combo.addItem("stdio (a command)", "stdio")
        self.kind_combo.addItem("streamable HTTP (a URL)", "http")
        self.kind_combo.currentIndexChanged.connect(self._kind_changed)
        self.target_edit = QLineEdit()
        self.target_edit.setObjectName("McpTarget")
        self.target_edit.setFont(theme.monospace_font())
        self.extra_edit = QPlainTextEdit()
        self.extra_edit.setObjectName("McpExtra")
        self.extra_edit.setFont(theme.monospace_font())
        self.extra_edit.setFixedHeight(3 * self.extra_edit.fontMetrics().lineSpacing() + 12)
        self.network_box = QCheckBox("Network inside the sandbox")
        self.network_box.setChecked(True)
        self.where_combo = QComboBox()
        self.where_combo.setObjectName("McpWhere")
        self.where_combo.addItem("for me (mcp.json)", USER)
        self.where_combo.addItem("for this project (.mcp.json)", PROJECT)
        self.error_label = PlainLabel()
        self.error_label.setObjectName("Secondary")
        self.error_label.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        kind_row = QHBoxLayout()
        kind_row.addWidget(self.kind_combo)
        kind_row.addWidget(self.where_combo)
        kind_row.addStretch(1)
        form.addRow("Kind", kind_row)
        # On a line of its own: beside the two choices it made the dialog wider than 800 px.
        form.addRow("", self.network_box)
        self.target_label = QLabel("Command")
        form.addRow(self.target_label, self.target_edit)
        self.extra_label = QLabel("Environment")
        form.addRow(self.extra_label, self.extra_edit)

        self.add_button = QPushButton(icons.icon("add"), "Add")
        self.add_button.clicked.connect(self.add_server)
        self.update_button = QPushButton("Update")
        self.update_button.clicked.connect(self.update_server)
        self.remove_button = QPushButton(icons.icon("delete"), "Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self.test_selected)
        self.project_button = QPushButton("Project…")
        self.project_button.clicked.connect(self._choose_project)
        self.test_result = PlainLabel()
        self.test_result.setObjectName("McpTestResult")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tested.connect(self._show_test)
        for edit in (self.name_edit, self.target_edit):
            edit.textChanged.connect(self._enable)
        self.extra_edit.textChanged.connect(self._enable)

        buttons = QHBoxLayout()
        buttons.addWidget(self.project_button)
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.update_button)
        buttons.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.addWidget(note)
        layout.addWidget(self.tree, 1)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addLayout(buttons)
        layout.addWidget(self.test_result)
        self._kind_changed()

    # -- page protocol ---------------------------------------------------------------------

    def load(self, settings: Settings) -> None:
        """Servers live in their own files, not in config.yaml."""
        self._servers[USER] = dict(read_server_file(user_file()).servers)
        self._load_project()
        self._rebuild()

    def contribute(self, data: dict[str, Any]) -> None:
        """MCP servers are not part of config.yaml."""

    def apply(self) -> None:
        """Write the user's file, the project's (if changed) and the switches (on save)."""
        replace_servers(user_file(), self._servers[USER])
        if self.project is not None:
            if self._servers[PROJECT] != self._loaded_project:
                replace_servers(project_file(self.project), self._servers[PROJECT])
                self._loaded_project = dict(self._servers[PROJECT])
            before = disabled_in(self.project)
            for name in before ^ self._off:
                set_enabled(self.project, name, name not in self._off)

    # -- public API ------------------------------------------------------------------------

    def select_project(self, folder: Path | None) -> None:
        """Show the servers of the project at ``folder`` (the window's project)."""
        self.project = folder.resolve() if folder is not None else None
        self._load_project()
        self._rebuild()

    def servers(self, where: str) -> dict[str, McpServer]:
        """The servers shown for ``where`` (``user`` / ``project``), unsaved edits included."""
        return self._servers[where]

    def enabled_here(self, name: str) -> bool:
        return name not in self._off

    def add_server(self) -> None:
        server = self._typed()
        if server is None:
            return
        where = cast(str, self.where_combo.currentData())
        if where == PROJECT and self.project is None:
            self._show_error("Choose a project first (Project…).")
            return
        name = self.name_edit.text().strip()
        self._servers[where][name] = server
        self.changed.emit()
        self._rebuild(select=(where, name))

    def update_server(self) -> None:
        selected = self._selected_server()
        server = self._typed()
        if selected is None or server is None:
            return
        where, old = selected
        del self._servers[where][old]
        name = self.name_edit.text().strip()
        self._servers[where][name] = server
        self.changed.emit()
        self._rebuild(select=(where, name))

    def remove_selected(self) -> None:
        selected = self._selected_server()
        if selected is None:
            return
        where, name = selected
        del self._servers[where][name]
        self.changed.emit()
        self._rebuild()

    def test_selected(self) -> None:
        """Start the selected server off the GUI thread and list its tools."""
        selected = self._selected_server()
        if selected is None:
            return
        where, name = selected
        if where == PROJECT and not self._project_trusted():
            self._set_test("The project is not trusted: its servers do not run yet.", True)
            return
        server = self._servers[where][name]
        entry = ServerEntry(name, server, cast(Any, where), Path(""))
        cwd = self.project or Path.home()
        self.test_button.setEnabled(False)
        self._set_test(f"Starting {name}…", False)
        worker = threading.Thread(
            target=self._probe, args=(entry, cwd), name=f"mcp test {name}", daemon=True
        )
        self._threads.append(worker)
        worker.start()

    def shutdown(self) -> None:
        """Wait for a running test (it ends within the server's start-up time-out)."""
        for worker in self._threads:
            worker.join()
        self._threads.clear()

    # -- private ---------------------------------------------------------------------------

    def _probe(self, entry: ServerEntry, cwd: Path) -> None:
        try:
            listed: object = asyncio.run(probe(entry, confinement_for(cwd)))
        except McpServerError as error:
            listed = str(error)
        except Exception as error:  # a worker thread must answer whatever happens
            listed = f"MCP server {entry.name} failed: {error}"
        self.tested.emit(entry.name, listed)

    def _show_test(self, name: str, listed: object) -> None:
        self.test_button.setEnabled(self._selected_server() is not None)
        if isinstance(listed, ServerTools):
            names = ", ".join(tool.name for tool in listed.tools[:40])
            more = f" and {len(listed.tools) - 40} more" if len(listed.tools) > 40 else ""
            count = len(listed.tools)
            self._set_test(
                f"{name}: {count} tool{'s' if count != 1 else ''} — {names}{more}", False
            )
        else:
            self._set_test(Redactor.configured().scrub(str(listed)), True)

    def _set_test(self, text: str, error: bool) -> None:
        theme.set_tone(self.test_result, "error" if error else "ok")
        self.test_result.setText(text)

    def _load_project(self) -> None:
        if self.project is None:
            self._servers[PROJECT] = {}
            self._off = set()
        else:
            self._servers[PROJECT] = dict(read_server_file(project_file(self.project)).servers)
            self._off = disabled_in(self.project)
        self._loaded_project = dict(self._servers[PROJECT])

    def _project_trusted(self) -> bool:
        return self.project is not None and self._trust.is_trusted(self.project)

    def _rebuild(self, select: tuple[str, str] | None = None) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        chosen: QTreeWidgetItem | None = None
        groups = [(USER, f"For me — {user_file()}")]
        if self.project is not None:
            trusted = "" if self._project_trusted() else " (not trusted: these do not run)"
            groups.append((PROJECT, f"Project — {project_file(self.project)}{trusted}"))
        scrub = Redactor.configured().scrub
        for where, title in groups:
            top = QTreeWidgetItem([title, "", "", ""])
            top.setFirstColumnSpanned(True)
            top.setIcon(0, icons.icon("folder"))
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(top)
            for name, server in sorted(self._servers[where].items()):
                item = QTreeWidgetItem([name, server.transport, scrub(server.describe()), ""])
                item.setFont(2, theme.monospace_font())
                item.setData(0, _ROLE, (where, name))
                if self.project is not None:
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    on = Qt.CheckState.Checked if name not in self._off else Qt.CheckState.Unchecked
                    item.setCheckState(3, on)
                top.addChild(item)
                if select == (where, name):
                    chosen = item
            top.setExpanded(True)
        self.tree.blockSignals(False)
        if chosen is not None:
            self.tree.setCurrentItem(chosen)
        self._enable()

    def _switched(self, item: QTreeWidgetItem, column: int) -> None:
        data = item.data(0, _ROLE)
        if column != 3 or data is None:
            return
        name = cast(tuple[str, str], data)[1]
        if item.checkState(3) == Qt.CheckState.Checked:
            self._off.discard(name)
        else:
            self._off.add(name)
        self.changed.emit()

    def _selected(self, current: QTreeWidgetItem | None, _previous: object) -> None:
        data = current.data(0, _ROLE) if current is not None else None
        if data is not None:
            where, name = cast(tuple[str, str], data)
            server = self._servers[where][name]
            self.name_edit.setText(name)
            self.where_combo.setCurrentIndex(self.where_combo.findData(where))
            self.kind_combo.setCurrentIndex(0 if server.transport == "stdio" else 1)
            self.target_edit.setText(server.describe())
            pairs = server.env if server.transport == "stdio" else server.headers
            separator = "=" if server.transport == "stdio" else ": "
            self.extra_edit.setPlainText(
                "\n".join(f"{key}{separator}{value}" for key, value in pairs.items())
            )
            self.network_box.setChecked(server.network)
        self._enable()

    def _selected_server(self) -> tuple[str, str] | None:
        item = self.tree.currentItem()
        data = item.data(0, _ROLE) if item is not None else None
        return cast(tuple[str, str], data) if data is not None else None

    def _kind_changed(self) -> None:
        stdio = self.kind_combo.currentData() == "stdio"
        self.target_label.setText("Command" if stdio else "URL")
        self.target_edit.setPlaceholderText(
            "npx -y @modelcontextprotocol/server-filesystem ." if stdio else "https://…/mcp"
        )
        self.extra_label.setText("Environment" if stdio else "Headers")
        self.extra_edit.setPlaceholderText("NAME=value, one a line" if stdio else "Name: value")
        self.network_box.setEnabled(stdio)
        self._enable()

    def _typed(self) -> McpServer | None:
        """The editor's server, or None (with the reason shown)."""
        name = self.name_edit.text().strip()
        target = self.target_edit.text().strip()
        if not SERVER_NAME.match(name):
            self._show_error("A name is letters, digits, '-' or '_'." if name else "")
            return None
        if not target:
            self._show_error("")
            return None
        stdio = self.kind_combo.currentData() == "stdio"
        separator = "=" if stdio else ":"
        pairs: dict[str, str] = {}
        for line in self.extra_edit.toPlainText().splitlines():
            key, found, value = line.partition(separator)
            if line.strip() and (not found or not key.strip()):
                self._show_error(f"Not NAME{separator}value: {line.strip()}")
                return None
            if line.strip():
                pairs[key.strip()] = value.strip()
        if stdio:
            try:
                argv = shlex.split(target)
            except ValueError as error:
                self._show_error(f"The command cannot be read: {error}")
                return None
            server = McpServer(
                command=argv[0], args=argv[1:], env=pairs, network=self.network_box.isChecked()
            )
        else:
            server = McpServer(type="http", url=target, headers=pairs)
        self._show_error("")
        return server

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))

    def _enable(self) -> None:
        valid = self._typed() is not None
        selected = self._selected_server() is not None
        self.add_button.setEnabled(valid)
        self.update_button.setEnabled(valid and selected)
        self.remove_button.setEnabled(selected)
        testing = any(worker.is_alive() for worker in self._threads)
        self.test_button.setEnabled(selected and not testing)

    def _choose_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Project folder")
        if folder:
            self.select_project(Path(folder))
