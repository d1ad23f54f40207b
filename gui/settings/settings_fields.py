"""Inline validation for the settings pages: a red border and a sentence under the field.

The settings dialog validates the whole :class:`core.config.settings.Settings` model on every edit;
each error comes back with its location (``("limits", "max_turns")``) and the page that owns
that location marks the widget. The colours come from the palette (:mod:`gui.theme`), so the
marks read well in dark mode too.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from gui import theme

Loc = tuple[Any, ...]
"""Where an error is, as pydantic names it: ``("providers", 0, "base_url")``."""

ErrorList = list[tuple[Loc, str]]


class FieldErrors:
    """Remembers the message label of every field and which fields are marked now."""

    def __init__(self) -> None:
        self._labels: dict[QWidget, QLabel] = {}
        self._marked: dict[QWidget, str] = {}

    def add_row(self, form: QFormLayout, label: str, field: QWidget) -> QWidget:
        """Add ``field`` to ``form`` with its (empty) message label under it."""
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(field)
        column.addWidget(self.label_for(field))
        form.addRow(label, box)
        return box

    def label_for(self, field: QWidget) -> QLabel:
        """The message label of ``field`` (created empty on first use; place it yourself)."""
        label = self._labels.get(field)
        if label is None:
            label = QLabel()
            label.setObjectName("FieldError")
            label.setWordWrap(True)
            # Always there, empty when the field is fine: a one-line message coming or going
            # never shifts the form under the person's pointer.
            label.setMinimumHeight(label.fontMetrics().height())
            self._labels[field] = label
        return label

    def clear(self) -> None:
        for field in list(self._marked):
            field.setProperty("invalid", False)
            theme.repolish(field)
            self.label_for(field).clear()
        self._marked.clear()

    def mark(self, field: QWidget, message: str) -> None:
        """Show ``message`` under ``field`` and draw its border red (messages add up)."""
        previous = self._marked.get(field)
        text = f"{previous} {message}" if previous and message not in previous else message
        self._marked[field] = text
        field.setProperty("invalid", True)  # the style sheet draws its border red
        theme.repolish(field)
        label = self.label_for(field)
        theme.set_tone(label, "error")
        label.setText(text)

    def message(self, field: QWidget) -> str:
        """The message shown for ``field`` ("" when it is valid)."""
        return self._marked.get(field, "")

    def is_marked(self, field: QWidget) -> bool:
        return field in self._marked

    def any(self) -> bool:
        return bool(self._marked)

    def count(self) -> int:
        return len(self._marked)


FRIENDLY = {
    "String should have at least 1 character": "Required.",
    "Field required": "Required.",
    "Input should be a valid number, unable to parse string as a number": "Enter a number.",
    "Input should be a valid integer, unable to parse string as an integer": (
        "Enter a whole number."
    ),
}
"""pydantic's wording → what a person reads under a field."""


def sentence(message: str) -> str:
    """pydantic's "Value error, must start with…" as "Must start with…", and its generic
    phrases ("String should have at least 1 character") as plain words ("Required.")."""
    text = FRIENDLY.get(message.strip(), message).removeprefix("Value error, ").strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
