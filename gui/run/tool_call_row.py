"""A tool call in a step's stream: one quiet line that opens to the full arguments and result.

Collapsed, the row reads ``✓ bash  pytest -q tests/  1.2 s``: status mark, tool name, the key
argument (elided in the middle), duration. A click (or Enter/Space when focused) opens the
details: the arguments as pretty JSON and the output in a monospaced read-only box. Output
streams in live while the call runs (bash), and is capped so a 50 MB log costs nothing until
someone asks for it with "Show all" (:mod:`gui.run.tool_output`).

The row keeps no copy of the output: it reads the :class:`~core.record.run_state.ToolCall` it is
given at each :meth:`ToolCallRow.refresh`, and appends only what is new.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QFocusEvent,
    QFontMetrics,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
)
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from core.record.run_state import ToolCall
from gui.run.tool_attachments import ToolAttachments
from gui.run.tool_output import MonospaceBox, ToolOutput
from gui.theme import SEMIBOLD, mix, monospace_font, secondary_text, set_font, set_tone
from gui.widgets.plain_text import plain_tip
from gui.widgets.run_status import (
    SpinnerArea,
    format_ms,
    paint_status,
    spinner_clock,
    status_color,
)

ARGUMENT_CHARS = 20_000


class _Summary(SpinnerArea):
    """The one-line summary, painted in one go: a row of tool calls costs one widget each,
    not five (labels and layouts are what make long runs slow to show)."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__()
        self.setObjectName("ToolCallSummary")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._name_font = monospace_font(-1)
        self._name_font.setBold(True)
        self._arg_font = monospace_font(-1)
        metrics = QFontMetrics(self._name_font)
        self.setFixedHeight(max(metrics.height(), 14) + 6)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.status = ""
        # A sub-agent's call (Claude Code's Task) is marked, never shown as the step's own.
        self.tool = f"↳ {call.tool}" if call.parent_call_id else call.tool
        self.argument = ""
        self.duration = ""
        self.superseded = False
        self.focused = False
        self.refresh(call)

    def refresh(self, call: ToolCall, interrupted: bool = False) -> None:
        # A person may edit the command when approving it: the call then shows what ran,
        # live as when the run is reopened (the fold takes the approved arguments).
        argument = " ".join(call.key_argument[:2_000].split())
        if argument != self.argument:
            self.argument = argument
            tip = f"{call.tool}: {argument}" if argument else call.tool
            self.setToolTip(plain_tip(f"{tip} (in the sub-agent)" if call.parent_call_id else tip))
            self.update()
        duration = format_ms(call.duration_ms) if call.duration_ms is not None else ""
        status: str = call.status
        if status == "running" and interrupted:
            status, duration = "aborted", "interrupted"
        elif status == "running" and call.awaiting_approval:
            status, duration = "waiting", "awaiting approval"
        if (status, argument, duration, call.superseded) == (
            self.status,
            self.argument,
            self.duration,
            self.superseded,
        ):
            return
        self.superseded = call.superseded
        if status != self.status:
            if status == "running":
                spinner_clock().register(self)
            else:
                spinner_clock().unregister(self)
        self.status, self.duration = status, duration
        self.update()

    def spinner_rect(self) -> QRect:
        """The status mark's square (14 px at x = 4), with a pixel to spare for antialiasing."""
        return QRect(3, (self.height() - 14) // 2 - 1, 16, 16)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        palette = self.palette()
        height = self.height()
        if self.focused:  # keyboard focus: Enter or Space opens the row
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            highlight = palette.color(QPalette.ColorRole.Highlight)
            painter.setBrush(mix(palette.color(QPalette.ColorRole.Base), highlight, 0.18))
            painter.drawRoundedRect(QRectF(self.rect()), 4, 4)
        x = 4
        paint_status(
            painter, QRectF(x, (height - 14) / 2, 14, 14), self.status, palette, compact=True
        )
        if self.spinner_rect().contains(event.rect()):  # a spinner's tick: the text is as it was
            painter.end()
            return
        x += 14 + 8
        muted = secondary_text(palette)
        right = self.width() - 4
        if self.duration:
            painter.setFont(self.font())
            painter.setPen(status_color(palette, "waiting") if self.status == "waiting" else muted)
            width = QFontMetrics(self.font()).horizontalAdvance(self.duration)
            painter.drawText(
                QRectF(right - width, 0, width, height),
                Qt.AlignmentFlag.AlignVCenter,
                self.duration,
            )
            right -= width + 12
        name_color = palette.color(QPalette.ColorRole.Text)
        if self.superseded:  # part of a failed attempt that was retried
            name_color = muted
        elif self.status in ("error", "aborted"):
            name_color = status_color(palette, self.status if self.status == "error" else "")
        painter.setFont(self._name_font)
        painter.setPen(name_color)
        name_width = QFontMetrics(self._name_font).horizontalAdvance(self.tool)
        painter.drawText(QRectF(x, 0, name_width, height), Qt.AlignmentFlag.AlignVCenter, self.tool)
        x += name_width + 8
        if self.argument and right - x > 20:
            metrics = QFontMetrics(self._arg_font)
            text = metrics.elidedText(self.argument, Qt.TextElideMode.ElideMiddle, int(right - x))
            painter.setFont(self._arg_font)
            painter.setPen(muted)
            painter.drawText(QRectF(x, 0, right - x, height), Qt.AlignmentFlag.AlignVCenter, text)
        painter.end()


class ToolCallRow(QFrame):
    """One tool call. GUI thread only; :attr:`toggled` reports the new expanded state."""

    toggled = Signal(bool)

    def __init__(
        self, call: ToolCall, parent: QWidget | None = None, *, interrupted: bool = False
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ToolCallRow")
        self._expanded = False
        self._details: QWidget | None = None
        self.output: ToolOutput | None = None
        """The output section, made when the row is first opened."""
        self.attachments: ToolAttachments | None = None
        """Pictures and structured content of the result (MCP tools), made with it."""
        self._arguments: MonospaceBox | None = None
        self._shown_arguments: dict[str, object] = {}
        self._call = call

        self.summary = _Summary(call)
        self._interrupted = interrupted
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(2)
        self._layout.addWidget(self.summary)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.refresh(call, interrupted=interrupted)

    # ---------------------------------------------------------------- public API

    def is_expanded(self) -> bool:
        return self._expanded

    def call_id(self) -> str:
        return self._call.call_id

    def set_expanded(self, expanded: bool) -> None:
        if expanded == self._expanded:
            return
        self._expanded = expanded
        if expanded:
            self._build_details()
            self._fill_details(self._call)
        if self._details is not None:
            self._details.setVisible(expanded)
        self.toggled.emit(expanded)

    def toggle(self) -> None:
        self.set_expanded(not self._expanded)

    def output_text(self) -> str:
        """The text in the output box (empty while collapsed)."""
        return self.output.box.toPlainText() if self.output is not None else ""

    def arguments_text(self) -> str:
        return self._arguments.toPlainText() if self._arguments is not None else ""

    def show_all_button(self) -> QPushButton | None:
        more = self.output.more if self.output is not None else None
        return more if more is not None and not more.isHidden() else None

    def refresh(self, call: ToolCall, *, interrupted: bool = False) -> None:
        """Bring the row up to date with ``call`` (cheap when nothing changed).
        ``interrupted``: the run ended without finishing this call (a saved run)."""
        self._call = call
        self._interrupted = interrupted
        self.summary.refresh(call, interrupted)
        if self._arguments is not None and call.arguments != self._shown_arguments:
            self._show_arguments(call)  # edited when approved
        if self._expanded:
            self._fill_details(call)

    def tool_name(self) -> str:
        return self._call.tool

    def argument_text(self) -> str:
        """The key argument shown on the summary line (before eliding)."""
        return self.summary.argument

    def duration_text(self) -> str:
        return self.summary.duration

    def status(self) -> str:
        """``running ok error aborted``, or ``waiting`` while an approval holds it up."""
        return self.summary.status

    # ---------------------------------------------------------------- Qt overrides

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.summary.geometry().contains(event.position().toPoint()):
            event.accept()  # so the release (the click) comes back here
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        inside = self.summary.geometry().contains(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and inside:
            self.toggle()
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        self.summary.focused = True
        self.summary.update()
        super().focusInEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self.summary.focused = False
        self.summary.update()
        super().focusOutEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.toggle()
            event.accept()
            return
        super().keyPressEvent(event)

    # ---------------------------------------------------------------- private

    def _build_details(self) -> None:
        if self._details is not None:
            return
        self._details = QWidget()
        layout = QVBoxLayout(self._details)
        layout.setContentsMargins(26, 2, 4, 6)
        layout.setSpacing(4)
        heading = QLabel("Arguments")
        set_font(heading, weight=SEMIBOLD, pixel_size=11)
        set_tone(heading, "secondary")
        self._arguments = MonospaceBox(8)
        self.output = ToolOutput()
        self.attachments = ToolAttachments()
        layout.addWidget(heading)
        layout.addWidget(self._arguments)
        layout.addWidget(self.output)
        layout.addWidget(self.attachments)
        self._layout.addWidget(self._details)
        self._show_arguments(self._call)

    def _show_arguments(self, call: ToolCall) -> None:
        assert self._arguments is not None
        self._shown_arguments = dict(call.arguments)  # the fold updates the call in place
        self._arguments.setPlainText(_arguments_text(call))

    def _fill_details(self, call: ToolCall) -> None:
        assert self.output is not None and self.attachments is not None
        self.output.update_from(call, call.status == "running" and not self._interrupted)
        self.attachments.update_from(call.attachments, call.result)


def _arguments_text(call: ToolCall) -> str:
    """The call's arguments as pretty JSON, cut at :data:`ARGUMENT_CHARS`."""
    text = json.dumps(call.arguments, indent=2, ensure_ascii=False, default=str)
    if len(text) > ARGUMENT_CHARS:
        text = text[:ARGUMENT_CHARS] + f"\n… {len(text) - ARGUMENT_CHARS:,} more characters"
    return text
