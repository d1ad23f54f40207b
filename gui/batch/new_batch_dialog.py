"""New batch…: one preset over a file of inputs, started from the window.

The person picks a preset, an inputs file (JSON Lines or CSV, read as ``baton batch --inputs``
reads it) and sees its first items before anything runs; concurrency and the executor (local,
or Ray when the extra is installed) are the command's ``--concurrency`` and ``--executor``.
The dialog only gathers a :class:`NewBatch`; the Batches view starts it through
:mod:`core.batch.start`, the same functions the command line uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.batch.executor_registry import EXECUTORS
from core.batch.inputs import BatchItem, read_inputs
from core.batch.store import BatchPlacement
from core.definitions.presets import discover_presets
from core.model.errors import RunError

PREVIEW_ITEMS = 5
"""Items shown before the batch starts: enough to see the file was read as meant."""
MAX_CONCURRENCY = 64


@dataclass(frozen=True)
class NewBatch:
    """What the person asked for: ``baton batch PRESET --inputs FILE …`` as values."""

    preset: str
    inputs: Path
    header: bool
    placement: BatchPlacement


class NewBatchDialog(QDialog):
    """Gathers a :class:`NewBatch`; Start is enabled once the preset and inputs are good."""

    def __init__(self, working_folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("NewBatchDialog")
        self.setWindowTitle("New batch")
        self._items: list[BatchItem] = []

        self.preset = QComboBox()
        self.preset.setObjectName("BatchPreset")
        for preset in discover_presets(working_folder).presets:
            self.preset.addItem(preset.key)
        self.inputs = QLineEdit()
        self.inputs.setObjectName("BatchInputs")
        self.inputs.setPlaceholderText("A .jsonl or .csv file, one item per row")
        self.inputs.textChanged.connect(self._read_preview)
        self.browse = QPushButton("Browse…")
        self.browse.clicked.connect(self._pick_file)
        self.header = QCheckBox("The CSV's first row names the columns (skip it)")
        self.header.toggled.connect(self._read_preview)
        self.preview = QTableWidget(0, 2)
        self.preview.setObjectName("BatchPreview")
        self.preview.setHorizontalHeaderLabels(["#", "Item (arguments, else parameters)"])
        self.preview.verticalHeader().hide()
        self.preview.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.preview.horizontalHeader().setStretchLastSection(True)
        self.preview.horizontalHeader().setSectionResizeMode(
            0, QHeaderView.ResizeMode.ResizeToContents
        )
        self.preview.setMaximumHeight(
            self.preview.verticalHeader().defaultSectionSize() * (PREVIEW_ITEMS + 1) + 6
        )
        self.preview_note = QLabel("Choose an inputs file to see its first items.")
        self.preview_note.setObjectName("Secondary")
        self.preview_note.setWordWrap(True)
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, MAX_CONCURRENCY)
        self.concurrency.setValue(BatchPlacement().concurrency)
        self.concurrency.setToolTip("How many items run at once")
        self.concurrency.setMaximumWidth(self.concurrency.sizeHint().width() + 24)
        self.executor = QComboBox()
        for name in sorted(EXECUTORS):
            self.executor.addItem(name)
        self.executor.setCurrentText("local")
        self.executor.setToolTip(
            "local: in this window's process; ray: on a Ray cluster (needs the ray extra)"
        )
        self.address = QLineEdit()
        self.address.setPlaceholderText("Ray cluster address (empty: a local Ray)")
        self.executor.currentTextChanged.connect(self._executor_changed)
        self.executor.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)

        file_row = QHBoxLayout()
        file_row.addWidget(self.inputs, 1)
        file_row.addWidget(self.browse)
        executor_row = QHBoxLayout()
        executor_row.addWidget(self.executor)
        executor_row.addStretch(1)
        concurrency_row = QHBoxLayout()
        concurrency_row.addWidget(self.concurrency)
        concurrency_row.addStretch(1)
        form = QFormLayout()
        form.addRow("Preset", self.preset)
        form.addRow("Inputs", file_row)
        form.addRow("", self.header)
        form.addRow("Concurrency", concurrency_row)
        form.addRow("Executor", executor_row)
        form.addRow("Ray address", self.address)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Cancel | QDialogButtonBox.StandardButton.Ok
        )
        self.start_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.start_button.setText("Start batch")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("First items"))
        layout.addWidget(self.preview)
        layout.addWidget(self.preview_note)
        layout.addWidget(self.buttons)
        self._executor_changed(self.executor.currentText())
        self._update_start()
        self.resize(620, 480)

    # -- public API ----------------------------------------------------------------------

    def item_count(self) -> int:
        """Items in the chosen file (0 until one was read)."""
        return len(self._items)

    def request(self) -> NewBatch:
        address = self.address.text().strip() or None
        return NewBatch(
            preset=self.preset.currentText(),
            inputs=Path(self.inputs.text().strip()).expanduser(),
            header=self.header.isChecked(),
            placement=BatchPlacement(
                executor=self.executor.currentText(),
                concurrency=self.concurrency.value(),
                address=address if self.executor.currentText() == "ray" else None,
            ),
        )

    # -- private -------------------------------------------------------------------------

    def _pick_file(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Inputs of the batch", "", "Inputs (*.jsonl *.csv);;All files (*)"
        )
        if path:
            self.inputs.setText(path)

    def _read_preview(self) -> None:
        text = self.inputs.text().strip()
        self._items = []
        self.preview.setRowCount(0)
        if not text:
            self.preview_note.setText("Choose an inputs file to see its first items.")
        else:
            try:
                self._items = read_inputs(Path(text).expanduser(), header=self.header.isChecked())
            except RunError as error:
                self.preview_note.setText(str(error))
            else:
                self._show_preview()
        self._update_start()

    def _show_preview(self) -> None:
        shown = self._items[:PREVIEW_ITEMS]
        self.preview.setRowCount(len(shown))
        for row, item in enumerate(shown):
            self.preview.setItem(row, 0, QTableWidgetItem(str(row + 1)))
            self.preview.setItem(row, 1, QTableWidgetItem(item.label()))
        count = len(self._items)
        more = f", the first {len(shown)} shown" if count > len(shown) else ""
        self.preview_note.setText(f"{count} item{'s' if count != 1 else ''}{more}.")

    def _executor_changed(self, name: str) -> None:
        self.address.setEnabled(name == "ray")

    def _update_start(self) -> None:
        self.start_button.setEnabled(bool(self._items) and self.preset.count() > 0)
