"""Small reusable widgets: banners, elided labels, badges, empty states, pane headers.

Their looks come from ``resources/styles/app.qss`` through object names and the ``kind``
property, so the widgets carry no colours of their own.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetrics, QMouseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui.theme import icons, secondary_text
from gui.widgets.plain_text import plain_tip


class PlainLabel(QLabel):
    """A label that shows its text as written, never as HTML.

    QLabel guesses (``Qt.AutoText``): a text with something like a tag before its first line
    break is rendered as rich text. For text from a model, a tool or a checkout — a file
    path in an approval's headline, a preset's name, a task — that guess lets the text
    restyle itself (hide a part of a path, load a local image): every such label is plain.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)


class ElidedLabel(PlainLabel):
    """A one-line label that elides its text (in the middle, for paths) instead of growing
    the layout. The full text stays available as :meth:`full_text` and in the tooltip.
    Plain text (:class:`PlainLabel`): cut anywhere, HTML would not survive anyway."""

    def __init__(
        self,
        text: str = "",
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle,
        parent: QWidget | None = None,
        *,
        prefer_full: bool = False,
        keep: int = 0,
    ) -> None:
        """``prefer_full``: ask the layout for the whole text's width and give way only when
        the row is short of room (a header's parts); otherwise take whatever room is left.

        ``keep``: the width (px) of text kept whole while the other parts of the row give way.
        A row short of room takes the same from each part that can shrink, so a step's agent
        name would be cut as soon as its usage figures; with ``keep`` the name stays whole (up
        to that width) and the figures are elided first."""
        super().__init__("", parent)
        self._full = ""
        self._mode = mode
        self._prefer_full = prefer_full
        self._keep = keep
        horizontal = QSizePolicy.Policy.Preferred if prefer_full else QSizePolicy.Policy.Ignored
        self.setSizePolicy(horizontal, QSizePolicy.Policy.Preferred)
        if not keep:  # with keep, minimumSizeHint follows the text (a set minimum would win)
            self.setMinimumWidth(40)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.set_full_text(text)

    def full_text(self) -> str:
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(plain_tip(text))
        self._elide()
        if self._keep:
            self.updateGeometry()  # the width it keeps changed with the text

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        metrics = QFontMetrics(self.font())
        super().setText(metrics.elidedText(self._full, self._mode, max(self.width(), 40)))

    def minimumSizeHint(self) -> QSize:
        width = 40
        if self._keep:
            margins = self.contentsMargins()
            whole = QFontMetrics(self.font()).horizontalAdvance(self._full) + 2
            width = max(width, min(self._keep, whole + margins.left() + margins.right()))
        return QSize(width, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        if not self._prefer_full:
            return hint
        margins = self.contentsMargins()
        width = QFontMetrics(self.font()).horizontalAdvance(self._full) + 2
        return QSize(width + margins.left() + margins.right(), hint.height())


class Badge(QLabel):
    """A small rounded pill (source, "overrides user", "read-only")."""

    def __init__(self, text: str = "", tone: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setObjectName("Badge")
        self.setProperty("tone", tone)  # "" (accent) or "override" (amber, as in the list)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)


class Banner(QFrame):
    """A strip with a severity icon, a message and optional action buttons.

    ``kind`` is ``error``, ``warning`` or ``info``; the style sheet tints it accordingly.
    Actions are buttons so tests and keyboard users can reach them.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Banner")
        self._icon = QLabel()
        self._icon.setFixedSize(18, 18)
        self._message = PlainLabel()  # a run's error is a provider's or a tool's words
        self._message.setWordWrap(True)
        self._message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._message.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._buttons = QHBoxLayout()
        self._buttons.setSpacing(6)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 7, 10, 7)
        layout.setSpacing(9)
        layout.addWidget(self._icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self._message, 1)
        layout.addLayout(self._buttons)
        self.hide()

    def show_message(
        self,
        kind: str,
        message: str,
        actions: list[tuple[str, Callable[[], None]]] | None = None,
        tooltip: str = "",
        icon_name: str | None = None,
    ) -> None:
        self.setProperty("kind", kind)
        self.style().unpolish(self)
        self.style().polish(self)
        self._icon.setPixmap(icons.pixmap(icon_name or kind, 18))
        self._message.setText(message)
        self._message.setToolTip(plain_tip(tooltip))
        while self._buttons.count():
            item = self._buttons.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for label, callback in actions or []:
            button = QPushButton(label)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(callback)
            self._buttons.addWidget(button)
        self.show()

    def kind(self) -> str:
        return str(self.property("kind") or "")

    def message(self) -> str:
        return self._message.text()

    def button(self, label: str) -> QPushButton | None:
        """The action button labelled ``label`` (for tests and keyboard focus)."""
        for index in range(self._buttons.count()):
            item = self._buttons.itemAt(index)
            widget = item.widget() if item is not None else None
            if isinstance(widget, QPushButton) and widget.text() == label:
                return widget
        return None


class PaneHeader(QWidget):
    """The strip on top of a pane: a title and, on the right, a few tool buttons."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("PaneHeader")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.title = QLabel(title)
        self.title.setObjectName("PaneTitle")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(12, 6, 8, 6)
        self._layout.setSpacing(4)
        self._layout.addWidget(self.title)
        self._layout.addStretch(1)

    def add_button(self, icon_name: str, tooltip: str, callback: Callable[[], None]) -> QToolButton:
        button = QToolButton()
        button.setIcon(icons.icon(icon_name))
        button.setIconSize(QSize(18, 18))
        button.setToolTip(tooltip)
        button.setAutoRaise(True)
        button.clicked.connect(callback)
        self._layout.addWidget(button)
        return button


class EmptyState(QWidget):
    """A centred icon, title and hint, shown where there is nothing to display yet."""

    def __init__(
        self, icon_name: str, title: str, hint: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("EmptyState")
        self.icon = QLabel()
        self.icon.setPixmap(icons.pixmap(icon_name, 56, secondary_text(self.palette())))
        self.icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title = QLabel(title)
        self.title.setObjectName("EmptyTitle")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint = QLabel(hint)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)
        self.hint.setMaximumWidth(440)
        # A wrapped label gets its height for its width only when the layout gives it the
        # width itself (an alignment flag would size it by its one-line hint and clip it).
        hint_row = QHBoxLayout()
        hint_row.addStretch(1)
        hint_row.addWidget(self.hint, 10)
        hint_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.icon)
        layout.addSpacing(6)
        layout.addWidget(self.title)
        layout.addSpacing(2)
        layout.addLayout(hint_row)
        layout.addStretch(2)


class HeaderToggleMixin:
    """For a widget whose ``header`` child row toggles it when clicked (a step pane, a
    thinking block). The press is accepted so the release — the click — comes back to the
    widget; put the mixin before the Qt class in the bases."""

    header: QWidget

    def header_clicked(self) -> None:
        raise NotImplementedError

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self.header.geometry().contains(event.position().toPoint()):
            event.accept()
            return
        super().mousePressEvent(event)  # type: ignore[misc]

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        inside = self.header.geometry().contains(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and inside:
            self.header_clicked()
            event.accept()
            return
        super().mouseReleaseEvent(event)  # type: ignore[misc]
