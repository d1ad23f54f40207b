"""The approval dialog: one tool call a person must allow or refuse (architecture: "Tools,
approvals and trust").

It shows one :class:`core.safety.approvals.ApprovalRequest` at a time — agent, step, tool, and the
call described for a human (:func:`core.tools.approval_describe.describe`, the same description the
terminal prompt prints), the rule that asked, and an "always allow ``<rule>`` here" choice —
and says how many more wait. It never decides anything by itself:
:class:`gui.approvals.approval_queue.ApprovalQueue` feeds it (describing requests off the GUI
thread)
and receives :attr:`ApprovalDialog.answered`.

Guarding against an accidental approval, because the dialog pops up while a person may be
typing somewhere else:

* the three buttons are disabled for :attr:`ApprovalDialog.ENABLE_DELAY_MS` after a request is
  shown (each new request restarts the guard, since the content changed under the cursor);
* no button is a default or auto-default button, so Enter never approves;
* focus starts on the reason field, so stray typing lands there, never on a button;
* Escape or closing the window denies — but only once the guard has passed.

It never takes the focus from another application: while Baton is not the active application
it is shown and raised without activation (the desktop notification, with its Approve / Deny
buttons, tells the person: :mod:`gui.approvals.notice_answers`).

The dialog is non-modal and is never ``exec()``-ed: the asyncio loop (other steps, other
runs) keeps running while it is open, and the rest of the window stays usable.
"""

from __future__ import annotations

from typing import ClassVar

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.safety.approvals import ApprovalAnswer, ApprovalRequest, Decision
from core.tools.approval_describe import Description, describe
from gui import theme
from gui.approvals.sandbox_note import bash_sandbox, bash_sandbox_text
from gui.theme import icons
from gui.widgets import Badge, ElidedLabel, PlainLabel
from gui.widgets.diff_view import DiffView


class ApprovalDialog(QDialog):
    """Shows one request; emits :attr:`answered` when the person decides."""

    ENABLE_DELAY_MS: ClassVar[int] = 500
    """How long the buttons stay disabled after a request appears (tests may shorten it)."""

    # -- signals (GUI thread) ------------------------------------------------------------

    answered = Signal(str, object)
    """(request_id, ApprovalAnswer) — the person's decision on the shown request."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ApprovalDialog")
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setSizeGripEnabled(True)
        self.request: ApprovalRequest | None = None
        self.presentation: Description | None = None
        self._original_command = ""
        self._shown_kind = ""
        self._guard = QTimer(self)
        self._guard.setSingleShot(True)
        self._guard.timeout.connect(self._release_guard)
        self._build()
        self.resize(680, 460)

    # -- public API ----------------------------------------------------------------------

    def show_request(
        self, request: ApprovalRequest, waiting: int = 1, description: Description | None = None
    ) -> None:
        """Show ``request`` (``waiting`` = requests in the queue, this one included).

        ``description``: :func:`core.tools.approval_describe.describe` of the request, computed off
        the GUI thread by the queue; without it the dialog describes the request itself."""
        changed = self.request is None or self.request.request_id != request.request_id
        self.set_waiting(waiting)
        if not changed and self.isVisible():
            return
        self.request = request
        self.presentation = description if description is not None else describe(request)
        self._fill(request, self.presentation)
        self._arm_guard()
        # Never take the keyboard from another application: a person typing there would
        # type into this dialog. Shown (and raised) without activation unless Baton is the
        # active application; the taskbar alert and the desktop notification say it waits.
        baton_active = QApplication.activeWindow() is not None
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, not baton_active)
        self.show()
        if QGuiApplication.platformName() != "offscreen":  # no window stack to raise there
            self.raise_()
        if baton_active:
            self.activateWindow()
        self.reason_edit.setFocus(Qt.FocusReason.ActiveWindowFocusReason)
        QApplication.alert(self, 0)  # the taskbar entry flashes until the window is active

    def clear_request(self) -> None:
        """Forget the shown request and hide (the queue calls this when nothing is left)."""
        self._guard.stop()
        self.request = None
        self.presentation = None
        self.hide()

    def set_waiting(self, waiting: int) -> None:
        self.counter.setText(f"1 of {waiting} waiting" if waiting > 1 else "")
        self.counter.setVisible(waiting > 1)

    def buttons_enabled(self) -> bool:
        return self.approve_once_button.isEnabled()

    def edited_command(self) -> str | None:
        """The command as the person edited it, or None when it is unchanged."""
        if self.presentation is None or self.presentation.kind != "command":
            return None
        text = self.command_edit.toPlainText()
        return text if text.strip() and text != self._original_command else None

    # -- Qt overrides --------------------------------------------------------------------

    def reject(self) -> None:
        """Escape / the close button: deny, once the accident guard has passed."""
        if self.request is not None and self.buttons_enabled():
            self._answer("deny")

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.request is None:
            event.accept()
            return
        self.reject()
        event.ignore()  # the queue hides the dialog when nothing is left to answer

    # -- building ------------------------------------------------------------------------

    def _build(self) -> None:
        icon = QLabel()
        icon.setPixmap(icons.pixmap("warning", 30))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        # What the model asked, in its own words (a path, a tool's name): shown as written.
        self.headline = PlainLabel()
        self.headline.setObjectName("ApprovalHeadline")
        self.headline.setWordWrap(True)
        headline_font = QFont(self.headline.font())
        headline_font.setPointSizeF(headline_font.pointSizeF() * 1.25)
        headline_font.setWeight(QFont.Weight.DemiBold)
        self.headline.setFont(headline_font)
        self.subline = PlainLabel()
        self.subline.setObjectName("Secondary")
        self.rule_label = PlainLabel()
        self.rule_label.setObjectName("ApprovalRule")
        self.rule_label.setWordWrap(True)
        self.tool_note = PlainLabel()
        self.tool_note.setObjectName("ApprovalToolNote")
        self.tool_note.setWordWrap(True)
        self.counter = Badge()
        self.counter.setObjectName("Badge")
        titles = QVBoxLayout()
        titles.setSpacing(2)
        titles.addWidget(self.headline)
        titles.addWidget(self.subline)
        titles.addWidget(self.rule_label)
        titles.addWidget(self.tool_note)
        header = QHBoxLayout()
        header.setSpacing(12)
        header.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        header.addLayout(titles, 1)
        header.addWidget(self.counter, 0, Qt.AlignmentFlag.AlignTop)

        self.content_label = QLabel()
        self.content_label.setObjectName("ApprovalSection")
        self.command_edit = QPlainTextEdit()
        self.command_edit.setObjectName("ApprovalCommand")
        self.command_edit.setFont(theme.monospace_font(1))
        self.command_edit.setTabChangesFocus(True)
        self.command_edit.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self.command_edit.textChanged.connect(self._command_changed)
        self.edited_note = QLabel("Edited: the changed command will run if you approve.")
        self.edited_note.setObjectName("Secondary")
        self.sandbox_note = QLabel()
        self.sandbox_note.setObjectName("Secondary")
        self.sandbox_note.setWordWrap(True)
        self.folder_label = ElidedLabel()
        self.folder_label.setObjectName("Secondary")
        self.facts = QFormLayout()
        self.facts.setHorizontalSpacing(14)
        self.facts.setVerticalSpacing(4)
        self.facts_box = QWidget()
        self.facts_box.setLayout(self.facts)
        self.diff_view = DiffView()
        self.diff_view.setMinimumHeight(160)
        self.json_view = QPlainTextEdit()
        self.json_view.setObjectName("ApprovalArguments")
        self.json_view.setReadOnly(True)
        self.json_view.setFont(theme.monospace_font())

        self.reason_edit = QLineEdit()
        self.reason_edit.setObjectName("ApprovalReason")
        self.reason_edit.setPlaceholderText(
            "Optional reason, sent to the agent if you deny (e.g. “use the test database”)"
        )
        self.reason_edit.setClearButtonEnabled(True)
        self.always_check = QCheckBox()
        self.always_check.setObjectName("ApprovalAlwaysAllow")

        self.deny_button = self._button("Deny", "deny")
        self.approve_run_button = self._button("Approve this tool for this run", "approve_run")
        self.approve_once_button = self._button("Approve once", "approve")
        self.hint = QLabel()
        self.hint.setObjectName("Secondary")
        buttons = QHBoxLayout()
        buttons.setSpacing(8)
        buttons.addWidget(self.deny_button)
        buttons.addWidget(self.hint, 1)
        buttons.addWidget(self.approve_run_button)
        buttons.addWidget(self.approve_once_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(8)
        layout.addLayout(header)
        layout.addSpacing(4)
        layout.addWidget(self.content_label)
        layout.addWidget(self.command_edit)
        layout.addWidget(self.edited_note)
        layout.addWidget(self.sandbox_note)
        layout.addWidget(self.facts_box)
        layout.addWidget(self.diff_view, 10)
        layout.addWidget(self.json_view, 10)
        layout.addWidget(self.folder_label)
        layout.addWidget(self.always_check)
        layout.addSpacing(4)
        reason_label = QLabel("&Reason for the agent")
        reason_label.setBuddy(self.reason_edit)
        layout.addWidget(reason_label)
        layout.addWidget(self.reason_edit)
        layout.addSpacing(6)
        layout.addLayout(buttons)

    def _button(self, text: str, decision: Decision) -> QPushButton:
        button = QPushButton(text)
        button.setAutoDefault(False)  # Enter must never approve
        button.setDefault(False)
        button.clicked.connect(lambda _checked=False: self._answer(decision))
        return button

    # -- filling -------------------------------------------------------------------------

    def _fill(self, request: ApprovalRequest, shown: Description) -> None:
        tool = shown.tool
        self.setWindowTitle(f"Approval needed: {tool} — {request.agent} (step {request.step + 1})")
        self.headline.setText(shown.headline)
        self.subline.setText(f"Step {request.step + 1} · agent {request.agent} · tool {tool}")
        self.rule_label.setText(shown.rule_note)
        self.rule_label.setVisible(bool(shown.rule_note))
        self.tool_note.setText(shown.note)
        self.tool_note.setVisible(bool(shown.note))
        self.always_check.setChecked(False)
        self.always_check.setVisible(bool(shown.suggested_rule))
        if shown.suggested_rule:
            self.always_check.setText(
                f"Always allow {shown.suggested_rule} in this project (when you approve)"
            )
            self.always_check.setToolTip(
                f"Adds the rule to {request.project or 'this project'}; "
                "edit or delete it in Settings ▸ Rules."
            )
        self.reason_edit.clear()
        for widget in (
            self.command_edit,
            self.edited_note,
            self.sandbox_note,
            self.facts_box,
            self.diff_view,
        ):
            widget.hide()
        self.json_view.hide()
        self.folder_label.setVisible(bool(shown.folder))
        self.folder_label.set_full_text(f"Working folder: {shown.folder}")
        if shown.kind == "command":
            self.content_label.setText("Command (you may edit it before approving)")
            self._original_command = shown.command
            self.command_edit.setPlainText(shown.command)
            lines = max(2, min(8, shown.command.count("\n") + 2))
            height = self.command_edit.fontMetrics().lineSpacing() * lines + 14
            self.command_edit.setMaximumHeight(height)
            self.command_edit.show()
            self.sandbox_note.setText(bash_sandbox_text(bash_sandbox()))
            self.sandbox_note.show()
        elif shown.kind == "diff":
            self.content_label.setText("Changes to the file")
            self.diff_view.set_diff(shown.diff)
            self.diff_view.show()
        elif shown.kind == "document":
            self.content_label.setText("Document")
            self._fill_facts(shown.facts)
            self.facts_box.show()
            if shown.diff:
                self.diff_view.set_diff(shown.diff)
                self.diff_view.show()
        else:
            self.content_label.setText("Arguments")
            self.json_view.setPlainText(shown.json)
            self.json_view.show()
        if shown.kind != self._shown_kind:  # a command needs a small window, a diff a big one
            self._shown_kind = shown.kind
            layout = self.layout()
            if layout is not None:
                layout.activate()
            height = self.sizeHint().height() if shown.kind == "command" else 540
            self.resize(max(self.width(), 680), height)

    def _fill_facts(self, facts: list[tuple[str, str]]) -> None:
        while self.facts.rowCount():
            self.facts.removeRow(0)
        for label, value in facts:
            text = PlainLabel(value)
            text.setWordWrap(True)
            text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.facts.addRow(f"{label}:", text)

    # -- guard and answers ---------------------------------------------------------------

    def _arm_guard(self) -> None:
        for button in self._buttons():
            button.setEnabled(False)
        self.hint.setText("Read the request…")
        self._guard.start(max(0, self.ENABLE_DELAY_MS))

    def _release_guard(self) -> None:
        for button in self._buttons():
            button.setEnabled(True)
        self.hint.setText("")

    def _buttons(self) -> tuple[QPushButton, ...]:
        return (self.deny_button, self.approve_run_button, self.approve_once_button)

    def _command_changed(self) -> None:
        edited = self.edited_command() is not None
        self.edited_note.setVisible(edited)
        self.always_check.setEnabled(not edited)  # the suggestion was made for the original

    def _answer(self, decision: Decision) -> None:
        request = self.request
        if request is None or not self.buttons_enabled():
            return
        reason = self.reason_edit.text().strip() or None
        updated = None
        command = self.edited_command()
        if decision != "deny" and command is not None:
            updated = {**request.arguments, "command": command}
        remember = None
        if decision != "deny" and self.always_check.isChecked() and command is None:
            remember = self.presentation.suggested_rule if self.presentation else None
        answer = ApprovalAnswer(
            decision=decision,
            reason=reason if decision == "deny" else None,
            updated_arguments=updated,
            remember_rule=remember,
        )
        self.answered.emit(request.request_id, answer)
