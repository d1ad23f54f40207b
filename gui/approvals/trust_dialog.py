"""Project trust: look at a project's own agents, presets and CLI settings before they run.

A cloned repository can carry agent files that tell a model to run commands, and settings that
make Claude Code or pi run programs by themselves (hooks, ``apiKeyHelper``, MCP servers, pi
packages and shell prefixes: :mod:`core.safety.checkout_programs`). Before a run uses them — the
first
time, or after any of them changed — the launcher catches
:class:`core.safety.untrusted.UntrustedProjectError` and asks here. The dialog lists every file with
what
it can do (an agent's tools and model, a preset's steps), every program with its command line,
and offers three ways on:

* **Trust this project** — remembered by :class:`core.safety.trust.TrustStore` with a fingerprint of
  the files, so the question comes back only when they change;
* **Run without project agents** — this run uses built-in and user agents only, and the CLIs
  load none of the project's settings;
* **Cancel** — nothing runs.

Two entry points, both on the GUI thread:

* ``await ask_trust(parent, root)`` — from a coroutine (an ``asyncSlot``): the dialog
  is opened window-modal with ``open()`` and a future is awaited; no nested event loop.
* ``ask_trust_blocking(parent, root)`` — from a plain slot: ``exec()``. Never call it
  from a coroutine (see :mod:`gui.qt_asyncio`).

:func:`prepare_runner` wraps the whole dance around :meth:`core.run.runner.Runner.prepare`.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.config.looks import one_look, read_file
from core.definitions.agents import BATON_TOOLS, AgentFileError, discover_agents, load_agent_file
from core.definitions.presets import PresetError, parse_preset_text
from core.model.errors import RunError
from core.run.run_request import RunRequest
from core.run.runner import Runner
from core.safety.checkout_programs import checkout_programs, program_files
from core.safety.redaction import Redactor
from core.safety.trust import (
    ChangedWhileAsked,
    TrustStore,
    file_kind,
    file_name,
    fingerprint,
    outside_link,
    project_files,
)
from core.safety.untrusted import UntrustedProjectError
from gui.approvals.sandbox_note import bash_sandbox, bash_sandbox_text
from gui.theme import icons, secondary_text, set_tone
from gui.widgets import ElidedLabel, PlainLabel
from gui.widgets.diff_view import DiffView
from gui.widgets.plain_text import plain_tip

TrustChoice = Literal["trust", "without", "cancel", "changed"]
"""``changed``: "Trust" was chosen, but the files changed while the question was open, so
nothing was trusted (the caller asks again)."""

CHANGED_WHILE_ASKED = (
    "This project's files changed while you were looking at them, so nothing was trusted. "
    "Here they are as they are now."
)

_WRITE_TOOLS = {"bash", "edit", "write"}


def describe_file(path: Path, root: Path | None = None) -> tuple[str, str, str]:
    """(what, name, details) for one project file; never raises for a broken file."""
    if root is not None and path in program_files(root):
        relative = path.relative_to(root).as_posix()
        count = sum(program.source == relative for program in checkout_programs(root))
        plural = "s" if count != 1 else ""
        return "settings", path.name, f"makes a CLI run {count} program{plural} (listed below)"
    kind = file_kind(root, path) if root is not None else None
    link = outside_link(root, path) if root is not None else None
    if kind in ("context", "skill") and link is not None:
        return kind, path.name, f"a symbolic link to {link}, outside the project: never read"
    if kind == "context":
        return "context", path.name, "read into the prompt of every step working in its folder"
    if kind == "skill":
        relative = file_name(root, path) if root is not None else path.name
        skill = relative.split("/")[2] if relative.count("/") >= 2 else path.name
        return "skill", skill, "a skill's file: the model reads it when it uses the skill"
    if path.suffix in (".yaml", ".yml"):
        try:
            preset = parse_preset_text(read_file(path).data.decode("utf-8"), path=str(path))
        except (PresetError, OSError, UnicodeDecodeError) as error:
            return "preset", path.stem, f"cannot be read: {error}"
        agents = " → " if preset.mode == "chain" else ", "
        steps = agents.join(step.agent for step in preset.steps)
        return "preset", preset.name, f"{preset.mode}: {steps}"
    try:
        agent = load_agent_file(path, "project")
    except AgentFileError as error:
        return "agent", path.stem, f"cannot be read: {error}"
    tools = agent.tools if agent.tools is not None else BATON_TOOLS
    tool_text = ", ".join(tools) if tools else "no tools"
    if agent.tools is None:
        tool_text = f"all tools ({tool_text})"
    model = agent.model or "the run's default model"
    lines = [f"tools: {tool_text}", f"model: {model}"]
    if agent.env:
        # Every name stays readable: the list is wrapped onto lines of its own, never cut.
        lines += textwrap.wrap(
            "may see secrets: " + ", ".join(agent.env), width=64, subsequent_indent="    "
        )
    if not agent.network:
        lines.append("no network for bash")
    if agent.mcp:
        lines.append("MCP servers: " + ", ".join(agent.mcp))
    return "agent", agent.name, "\n".join(lines)


class TrustDialog(QDialog):
    """The question itself; :attr:`choice` holds the answer once :meth:`done` ran."""

    def __init__(
        self,
        root: Path,
        parent: QWidget | None = None,
        store: TrustStore | None = None,
        *,
        note: str | None = None,
    ) -> None:
        """``note``: why the question is asked again (shown above it)."""
        super().__init__(parent)
        self.setObjectName("TrustDialog")
        self.setWindowTitle("Trust this project's agents?")
        self.root = root
        self.choice: TrustChoice = "cancel"
        self._store = store or TrustStore()
        self._note = note
        self._build()
        self.resize(760, 620 if self.changes else 440)

    # -- building ------------------------------------------------------------------------

    def _build(self) -> None:
        icon = QLabel()
        icon.setPixmap(icons.pixmap("lock", 30))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.scrub = Redactor.configured([self.root]).scrub
        """A literal token in ``.mcp.json`` (a header, an argument) is never shown here."""
        with one_look():  # what is shown is what "Trust" trusts: each file read once
            self.files = project_files(self.root)
            self.changes = self._store.changes(self.root)
            self.programs = checkout_programs(self.root)
            described = [describe_file(path, self.root) for path in self.files]
            self.shown = fingerprint(self.root)
            """The fingerprint of the files as shown: trusting checks them against it."""
        record = self._store.record(self.root)
        only_programs = len(self.files) == len(program_files(self.root))
        kinds = {file_kind(self.root, path) for path in self.files}
        steering = not kinds & {"agent", "preset"} and bool(kinds & {"context", "skill"})
        what = "settings" if only_programs else "files" if steering else "agents"
        title = QLabel(
            f"This project's {what} changed since you trusted them"
            if self.changes
            else "This project's settings would run programs"
            if only_programs
            else "This project tells its models what to do (context files, skills)"
            if steering
            else "This project brings its own agents"
        )
        title.setObjectName("EditorTitle")
        folder = ElidedLabel(str(self.root))
        folder.setObjectName("Secondary")
        self.warning = QLabel(
            "Context files and skills are read into a model's prompt: they can tell it to run "
            "commands and change files on this computer. Use them only if you trust where this "
            "project comes from and have read what they say."
            if steering
            else "Agent files can tell a model to run commands and change files on this "
            "computer. Run them only if you trust where this project comes from and have read "
            "what they do."
        )
        if self.programs:
            self.warning.setText(
                self.warning.text() + " Its settings also make Claude Code or pi run the "
                "programs listed below by themselves, outside the sandbox and without asking."
            )
        self.warning.setWordWrap(True)
        titles = QVBoxLayout()
        titles.setSpacing(3)
        titles.addWidget(title)
        titles.addWidget(folder)
        header = QHBoxLayout()
        header.setSpacing(12)
        header.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        header.addLayout(titles, 1)

        self.file_list = QTreeWidget()
        self.file_list.setObjectName("TrustFiles")
        self.file_list.setHeaderLabels(["File", "Name", "What it can do"])
        self.file_list.setRootIsDecorated(False)
        self.file_list.setAlternatingRowColors(True)
        self.file_list.setWordWrap(True)
        header_view = self.file_list.header()
        header_view.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header_view.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header_view.setStretchLastSection(True)
        muted = secondary_text(self.palette())
        for path, (what, name, details) in zip(self.files, described, strict=True):
            details = self.scrub(details)
            item = QTreeWidgetItem([file_name(self.root, path), name, details])
            item.setToolTip(0, plain_tip(str(path)))
            item.setToolTip(2, plain_tip(details))
            item.setForeground(0, muted)
            if what == "agent" and any(tool in details for tool in _WRITE_TOOLS):
                item.setIcon(2, icons.icon("warning"))
            self.file_list.addTopLevelItem(item)
        if not self.files:
            self.file_list.addTopLevelItem(QTreeWidgetItem(["(no files)", "", ""]))

        self.program_list = self._program_list()
        self.changes_box = self._changes_box(record.trusted_at[:10] if record else "")

        self.trust_button = QPushButton("Trust this project")
        self.without_button = QPushButton("Run without project agents")
        self.cancel_button = QPushButton("Cancel")
        for button, choice in (
            (self.trust_button, "trust"),
            (self.without_button, "without"),
            (self.cancel_button, "cancel"),
        ):
            button.setAutoDefault(False)
            button.clicked.connect(lambda _checked=False, c=choice: self._choose(c))
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.without_button)
        buttons.addWidget(self.trust_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(10)
        layout.addLayout(header)
        self.note_label: PlainLabel | None = None
        if self._note:
            self.note_label = PlainLabel(self._note)
            self.note_label.setObjectName("TrustAskedAgain")
            self.note_label.setWordWrap(True)
            set_tone(self.note_label, "waiting")  # the amber of something asking
            layout.addWidget(self.note_label)
        layout.addWidget(self.warning)
        layout.addWidget(self.changes_box, 2)
        layout.addWidget(self.file_list, 1)
        layout.addWidget(self.program_list, 1)
        self.sandbox_note = QLabel(bash_sandbox_text(bash_sandbox()))
        self.sandbox_note.setWordWrap(True)
        layout.addWidget(self.sandbox_note)
        note = QLabel("Trust is remembered for this folder until one of these files changes.")
        note.setObjectName("Secondary")
        layout.addWidget(note)
        layout.addLayout(buttons)

    def _program_list(self) -> QWidget:
        """Every program the project's CLI settings would run, with its command line: until
        trusted none is loaded, so this is the one place a person sees them."""
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        label = QLabel(
            "Programs Claude Code or pi would run by themselves, unsandboxed, as soon as a step "
            "starts in this folder (not loaded unless you trust the project):"
        )
        label.setWordWrap(True)
        tree = QTreeWidget()
        tree.setObjectName("TrustPrograms")
        tree.setHeaderLabels(["File", "What", "Command line"])
        tree.setRootIsDecorated(False)
        tree.setAlternatingRowColors(True)
        header_view = tree.header()
        header_view.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header_view.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header_view.setStretchLastSection(True)
        for program in self.programs:
            what = f"{program.kind} {program.name}".strip()
            command = self.scrub(program.command)
            item = QTreeWidgetItem([program.source, what, command])
            item.setToolTip(2, plain_tip(command))
            item.setIcon(1, icons.icon("warning"))
            tree.addTopLevelItem(item)
        self.programs_tree = tree
        column.addWidget(label)
        column.addWidget(tree, 1)
        box.setVisible(bool(self.programs))
        return box

    def _changes_box(self, trusted_on: str) -> QWidget:
        """What changed since the project was trusted: the files, and one diff of them all."""
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        words = {"added": "new file", "changed": "changed", "removed": "removed"}
        listed = ", ".join(f"{c.path} ({words[c.kind]})" for c in self.changes)
        self.changes_label = PlainLabel(f"Changed since you trusted it on {trusted_on}: {listed}")
        self.changes_label.setWordWrap(True)
        self.diff_view = DiffView()
        self.diff_view.setObjectName("TrustDiff")
        self.diff_view.set_diff(self.scrub("".join(change.diff for change in self.changes)))
        column.addWidget(self.changes_label)
        column.addWidget(self.diff_view, 1)
        box.setVisible(bool(self.changes))
        return box

    # -- answers -------------------------------------------------------------------------

    def _choose(self, choice: TrustChoice) -> None:
        if choice == "trust":
            try:
                self._store.trust(self.root, shown=self.shown)
            except ChangedWhileAsked:
                choice = "changed"  # the caller asks again, with the files as they are now
        self.choice = choice
        if choice == "cancel":
            self.reject()
        else:
            self.accept()

    def reject(self) -> None:
        self.choice = "cancel"
        super().reject()


async def ask_trust(parent: QWidget | None, root: Path, note: str | None = None) -> TrustChoice:
    """Ask from a coroutine; window-modal, without a nested event loop."""
    dialog = TrustDialog(root, parent, note=note)
    future: asyncio.Future[TrustChoice] = asyncio.get_running_loop().create_future()

    def finished(_result: int) -> None:
        if not future.done():
            future.set_result(dialog.choice)

    dialog.finished.connect(finished)
    dialog.open()
    try:
        return await future
    except asyncio.CancelledError:
        dialog.reject()
        raise
    finally:
        dialog.deleteLater()


def ask_trust_blocking(parent: QWidget | None, root: Path) -> TrustChoice:
    """Ask from a plain (not async) slot, with ``exec()``."""
    dialog = TrustDialog(root, parent)
    try:
        dialog.exec()
        return dialog.choice
    finally:
        dialog.deleteLater()


def _project_agents_in(request: RunRequest) -> list[str]:
    """The agents a request names that only the project defines (no user or built-in one of
    that name to fall back on), in step order."""
    everywhere = discover_agents(request.cwd, "both")
    elsewhere = discover_agents(request.cwd, "user")
    names: list[str] = []
    for step in request.steps:
        agent = everywhere.get(step.agent)
        if agent is not None and agent.source == "project" and elsewhere.get(step.agent) is None:
            names.append(agent.name)
    return list(dict.fromkeys(names))


async def prepare_runner(
    parent: QWidget | None,
    request: RunRequest,
    make_runner: Callable[[RunRequest], Runner],
) -> Runner | None:
    """A prepared runner for ``request``, asking about project trust when needed.

    Returns None when the person cancels. "Run without project agents" prepares the same
    request with ``scope="user"``; if the run then names a project agent, the
    :class:`core.model.errors.RunError` saying it is unknown propagates like any other.
    """
    note: str | None = None
    while True:
        runner = make_runner(request)
        try:
            runner.prepare()
            return runner
        except UntrustedProjectError as untrusted:
            root = untrusted.root
            choice = await ask_trust(parent, root, note)
        if choice != "changed":
            break
        note = CHANGED_WHILE_ASKED
    if choice == "cancel":
        return None
    if choice == "without":
        project_agents = _project_agents_in(request)
        if project_agents:
            names = ", ".join(f"'{name}'" for name in project_agents)
            raise RunError(
                f"without project agents this run cannot start: {names} "
                f"{'comes' if len(project_agents) == 1 else 'come'} from this project "
                f"({root}); trust the project to run "
                f"{'it' if len(project_agents) == 1 else 'them'}, or choose other agents"
            )
        request = replace(request, scope="user")
    runner = make_runner(request)
    runner.prepare()
    return runner
