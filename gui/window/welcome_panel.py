"""First run: what Baton needs, what it found on this computer, one click to use it.

When no provider and no default backend are configured (:func:`needs_welcome`), the main
window shows this panel above its views — the sidebar, built-in agents and presets stay visible.
The panel looks for a local Ollama (``GET {ollama_url}/models``, short timeout, as an asyncio
task so the window opens at once) and for ``pi`` and ``claude`` on PATH, and offers each one it
finds. A choice is written to ``config.yaml`` (a provider, or ``default_backend``) and the panel
emits :attr:`WelcomePanel.configured`; "Open settings…" emits
:attr:`WelcomePanel.openSettingsRequested` for the window to open the settings dialog; "Not now"
emits :attr:`WelcomePanel.dismissed` (the window remembers it).

It is one compact strip — a sentence and one row of detections — because it sits above every
view until something is configured, and says plainly when nothing was found rather than asking
the person to "pick one" of nothing.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.config.program_locations import locate_program, usual_folders
from core.config.settings import Provider, Settings, SettingsError, load_settings, save_settings
from gui import theme
from gui.theme import icons
from gui.widgets import PlainLabel

OLLAMA_URL = "http://localhost:11434/v1"
OLLAMA_TIMEOUT_S = 2.0

Which = Callable[[str], str | None]
ProgramChooser = Callable[[QWidget, str], str | None]


def choose_program(parent: QWidget, program: str) -> str | None:
    """A file dialog for the person to point at ``program``'s executable."""
    from PySide6.QtWidgets import QFileDialog

    path, _ = QFileDialog.getOpenFileName(parent, f"Choose the {program} program", str(Path.home()))
    return path or None


def needs_welcome(path: Path | None = None) -> bool:
    """True when nothing can run a model yet: no provider (nor ``OPENAI_BASE_URL``) and no
    default backend. A config.yaml that cannot be read is a settings problem, not a first run."""
    try:
        settings = load_settings(path)
    except SettingsError:
        return False
    return settings.provider() is None and settings.default_backend is None


class WelcomePanel(QFrame):
    """The first-run banner: three lines, three detections, a button for each one found."""

    # -- signals (GUI thread) ------------------------------------------------------------

    configured = Signal(str)
    """``ollama``, ``pi`` or ``claude``: that choice was saved to config.yaml."""
    openSettingsRequested = Signal()
    """The person wants the settings dialog."""
    dismissed = Signal()
    """The person closed the panel with "Not now"."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        ollama_url: str | None = None,
        which: Which | None = None,
        settings_path: Path | None = None,
    ) -> None:
        """``which`` replaces the search (PATH, then the usual install folders) by a lookup
        of its own (tests)."""
        super().__init__(parent)
        self.setObjectName("WelcomePanel")
        self.ollama_url = ollama_url or OLLAMA_URL  # read late: tests point it elsewhere
        self.ollama_models: list[str] = []
        self._which = which
        self.choose_file: ProgramChooser = choose_program
        """Asked for an executable by the "Choose…" buttons (tests replace it)."""
        self._settings_path = settings_path
        self._task: asyncio.Task[None] | None = None
        self._build()
        self._apply_colors()

    # -- public API ----------------------------------------------------------------------

    def start_detection(self) -> None:
        """Look for pi and claude now, and for Ollama in the background when the qasync loop
        runs (call it again once it does: :class:`gui.window.main_window.MainWindow` defers it)."""
        configured = self._configured_paths()
        for program, label, button in (
            ("pi", self.pi_status, self.use_pi_button),
            ("claude", self.claude_status, self.use_claude_button),
        ):
            found = locate_program(
                program,
                configured.get(program),
                which=self._which or shutil.which,
                folders=usual_folders if self._which is None else None,
            )
            if found is not None:
                label.setText(f"Found: {found.describe()}")
            elif configured.get(program):
                label.setText(f"Not found at {configured[program]}.")
            else:
                label.setText("Not found on PATH or in the usual install folders.")
            label.setToolTip(found.path if found else "")
            button.setVisible(found is not None)
        self.use_ollama_button.hide()
        self._update_summary()
        if self._task is not None:
            self._task.cancel()
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no qasync loop (a window built outside the app): do not block
            self.ollama_status.setText(f"Not checked ({self._short_url()}).")
            self._update_summary(final=True)
            return
        self.ollama_status.setText(f"Looking at {self._short_url()}…")
        self._task = asyncio.ensure_future(self._detect_ollama())

    def choose(self, program: str) -> bool:
        """ "Choose…": point Baton at ``program``'s executable (saved in settings as
        ``pi_path`` / ``claude_path``, which the backends use), then look again."""
        path = self.choose_file(self, program)
        if path is None:
            return False
        key = "pi_path" if program == "pi" else "claude_path"
        try:
            settings = load_settings(self._settings_path)
            save_settings(settings.model_copy(update={key: path}), self._settings_path)
        except (SettingsError, OSError, ValueError) as error:
            self.error.setText(f"Could not save the settings: {error}")
            self.error.show()
            return False
        self.error.hide()
        self.start_detection()
        return True

    def _configured_paths(self) -> dict[str, str]:
        try:
            settings = load_settings(self._settings_path)
        except SettingsError:
            return {}
        chosen = {"pi": settings.pi_path, "claude": settings.claude_path}
        return {program: path for program, path in chosen.items() if path}

    def detecting(self) -> bool:
        return self._task is not None and not self._task.done()

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    # -- building ------------------------------------------------------------------------

    def _build(self) -> None:
        title = QLabel("Welcome to Baton")
        font = QFont(title.font())
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setWeight(QFont.Weight.DemiBold)
        title.setFont(font)
        self.settings_button = QPushButton(icons.icon("model"), "Open settings…")
        self.settings_button.clicked.connect(self.openSettingsRequested)
        self.close_button = QPushButton("Not now")
        self.close_button.setFlat(True)
        self.close_button.setToolTip("Hide this until you ask for it (Help ▸ Welcome)")
        self.close_button.clicked.connect(self._dismiss)
        heading = QHBoxLayout()
        heading.addWidget(title)
        heading.addStretch(1)
        heading.addWidget(self.settings_button)
        heading.addWidget(self.close_button)
        self.summary = QLabel()
        self.summary.setObjectName("WelcomeSummary")
        self.summary.setWordWrap(True)
        text = QVBoxLayout()
        text.setSpacing(2)
        text.addLayout(heading)
        text.addWidget(self.summary)

        self.ollama_status = PlainLabel()
        self.pi_status = QLabel()
        self.claude_status = QLabel()
        self.use_ollama_button = QPushButton("Use Ollama")
        self.use_pi_button = QPushButton("Use pi")
        self.use_claude_button = QPushButton("Use Claude Code")
        self.use_ollama_button.clicked.connect(self._use_ollama)
        self.use_pi_button.clicked.connect(lambda: self._use_backend("pi"))
        self.use_claude_button.clicked.connect(lambda: self._use_backend("claude"))
        self.choose_pi_button = QPushButton("Choose…")
        self.choose_claude_button = QPushButton("Choose…")
        for program, chooser in (
            ("pi", self.choose_pi_button),
            ("claude", self.choose_claude_button),
        ):
            chooser.setFlat(True)
            chooser.setToolTip(f"Point Baton at the {program} program to use")
            chooser.clicked.connect(lambda _checked=False, p=program: self.choose(p))
        # One row: name, status and (when found) its button, three times side by side.
        grid = QGridLayout()
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        columns = (
            ("Ollama", self.ollama_status, self.use_ollama_button, None),
            ("pi", self.pi_status, self.use_pi_button, self.choose_pi_button),
            ("Claude Code", self.claude_status, self.use_claude_button, self.choose_claude_button),
        )
        column_chooser: QPushButton | None
        for column, (name, status, button, column_chooser) in enumerate(columns):
            label = QLabel(name)
            label.setObjectName("WelcomeName")
            bold = QFont(label.font())
            bold.setWeight(QFont.Weight.DemiBold)
            label.setFont(bold)
            status.setObjectName("WelcomeStatus")
            status.setWordWrap(True)
            status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            button.hide()
            buttons = QHBoxLayout()
            buttons.setSpacing(4)
            buttons.addWidget(button)
            if column_chooser is not None:
                buttons.addWidget(column_chooser)
            buttons.addStretch(1)
            grid.addWidget(label, 0, 2 * column)
            grid.addLayout(buttons, 0, 2 * column + 1)
            grid.addWidget(status, 1, 2 * column, 1, 2, Qt.AlignmentFlag.AlignTop)
            grid.setColumnStretch(2 * column + 1, 1)

        self.error = PlainLabel()
        self.error.setObjectName("WelcomeError")
        self.error.setWordWrap(True)
        self.error.hide()

        icon = QLabel()
        icon.setPixmap(icons.pixmap("baton", 32))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        body = QVBoxLayout()
        body.setSpacing(6)
        body.addLayout(text)
        body.addLayout(grid)
        body.addWidget(self.error)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(16, 8, 12, 8)
        layout.setSpacing(12)
        layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(body, 1)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_colors()  # light ↔ dark (Settings ▸ Appearance, or the desktop)

    def _apply_colors(self) -> None:
        # The application's palette: the panel's own is changed by the style sheet set below.
        palette = QGuiApplication.palette()
        key = palette.color(QPalette.ColorRole.Base).name()
        if key == getattr(self, "_colors_for", ""):
            return
        self._colors_for = key
        border = theme.tint(palette, theme.SEVERITY_HUES["info"], 0.5).name()
        background = theme.tint(
            palette, theme.SEVERITY_HUES["info"], 0.16 if theme.is_dark(palette) else 0.07
        ).name()
        muted = theme.secondary_text(palette).name()
        text = palette.color(QPalette.ColorRole.Text).name()
        error = theme.foreground(palette, theme.SEVERITY_HUES["error"]).name()
        self.setStyleSheet(
            f"QFrame#WelcomePanel {{ background: {background}; "
            f"border-bottom: 1px solid {border}; }}"
            f"QFrame#WelcomePanel QLabel {{ background: transparent; color: {text}; }}"
            f"QFrame#WelcomePanel QLabel#WelcomeStatus {{ color: {muted}; }}"
            f"QFrame#WelcomePanel QLabel#WelcomeError {{ color: {error}; }}"
        )

    # -- detection -----------------------------------------------------------------------

    def _short_url(self) -> str:
        return self.ollama_url.removeprefix("http://").removesuffix("/v1")

    def _found(self) -> list[str]:
        buttons = {
            "Ollama": self.use_ollama_button,
            "pi": self.use_pi_button,
            "Claude Code": self.use_claude_button,
        }
        return [name for name, button in buttons.items() if not button.isHidden()]

    def _update_summary(self, *, final: bool = False) -> None:
        """Say what was found, or plainly that nothing was, once the search is over."""
        need = (
            "Agents need a model: an OpenAI-compatible server (Ollama, LM Studio, OpenAI, "
            "OpenRouter…) or the pi or Claude Code command-line tools."
        )
        found = self._found()
        if found:
            which = found[0] if len(found) == 1 else ", ".join(found[:-1]) + " or " + found[-1]
            verb = "Use it" if len(found) == 1 else "Choose one"
            tail = f"Found {which} on this computer. {verb}, or open Settings to add a provider."
        elif final:
            tail = (
                "None of them was found on this computer: open Settings to add a provider and "
                "its API key, or install one and restart Baton."
            )
        else:
            tail = "Looking for them on this computer…"
        self.summary.setText(f"{need} {tail}")

    def _dismiss(self) -> None:
        self.stop()
        self.hide()
        self.dismissed.emit()

    async def _detect_ollama(self) -> None:
        # Here, not at the top: the panel is built while the window opens, and httpx with its
        # certificates takes ~0.3 s to import — the probe can wait for it.
        from core.config.provider_http import ProbeError, list_models

        try:
            models = await list_models(self.ollama_url, timeout_s=OLLAMA_TIMEOUT_S)
        except ProbeError:
            self.ollama_status.setText(f"Not running at {self._short_url()}.")
            self._update_summary(final=True)
            return
        self.ollama_models = models
        if models:
            shown = ", ".join(models[:4]) + (" …" if len(models) > 4 else "")
            count = f"{len(models)} model{'s' if len(models) != 1 else ''}"
            self.ollama_status.setText(f"Running at {self._short_url()} with {count}: {shown}")
        else:
            self.ollama_status.setText(
                f"Running at {self._short_url()}, but no model is pulled yet "
                "(ollama pull qwen3:8b)."
            )
        self.use_ollama_button.show()
        self._update_summary(final=True)

    # -- choices -------------------------------------------------------------------------

    def _use_ollama(self) -> None:
        def change(settings: Settings) -> Settings:
            providers = [p for p in settings.providers if p.name != "ollama"]
            providers.append(Provider(name="ollama", base_url=self.ollama_url))
            model = settings.default_model or (
                self.ollama_models[0] if self.ollama_models else None
            )
            return settings.model_copy(
                update={
                    "providers": providers,
                    "default_provider": "ollama",
                    "default_model": model,
                }
            )

        self._save(change, "ollama")

    def _use_backend(self, backend: str) -> None:
        self._save(lambda s: s.model_copy(update={"default_backend": backend}), backend)

    def _save(self, change: Callable[[Settings], Settings], choice: str) -> None:
        try:
            settings = change(load_settings(self._settings_path))
            save_settings(settings, self._settings_path)
        except (SettingsError, OSError, ValueError) as error:
            self.error.setText(f"Could not save the settings: {error}")
            self.error.show()
            return
        self.error.hide()
        self.stop()
        self.hide()
        self.configured.emit(choice)
