"""A batch's inputs: one :class:`BatchItem` per row of a JSONL or CSV file.

* JSONL (``.jsonl``, ``.ndjson``, or anything whose first non-blank character is ``{``): one
  object per line, ``{"args": ["…"], "params": {…}}``. ``args`` fill the preset's ``$1``… and
  ``$@``; ``params`` the agents' typed parameters (checked per item, as ``--param`` values are).
  Both keys are optional; any other key is refused, so a typo is not silently ignored.
* CSV (anything else): every row is an item, its columns in order are ``$1``, ``$2``…; with
  ``header=True`` the first row names the columns and is skipped.

Blank lines and rows are skipped. Every problem names the file, the line and what to write
instead, and the whole file is refused: a batch never starts on half of its inputs.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from core.model.errors import RunError

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Inputs larger than this are refused (a batch is a list of tasks, not a data set)."""

ParamValue = str | int | float | bool


class BatchInputError(RunError):
    """The inputs file cannot be read as a batch; the message says where and why."""


class BatchItem(BaseModel):
    """One input row: the arguments and typed parameter values of one run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    args: list[str] = Field(default_factory=list)
    params: dict[str, ParamValue] = Field(default_factory=dict)

    def label(self) -> str:
        """The item as a person would name it: its arguments, else its parameters."""
        if self.args:
            return " ".join(self.args)
        return ", ".join(f"{name}={value}" for name, value in self.params.items())


def redacted(items: Sequence[BatchItem], scrub: Callable[[str], str]) -> list[BatchItem]:
    """``items`` with secrets scrubbed from every argument and text parameter: an input is
    shown (progress, status), stored (the batch store, the run index) and exported, and the
    model never gets a known secret anyway (:class:`core.safety.redaction.Redactor`)."""
    return [
        BatchItem(
            args=[scrub(arg) for arg in item.args],
            params={
                name: scrub(value) if isinstance(value, str) else value
                for name, value in item.params.items()
            },
        )
        for item in items
    ]


def read_inputs(path: Path, *, header: bool = False) -> list[BatchItem]:
    """The items of ``path`` (JSONL or CSV, see the module docstring); raises
    :class:`BatchInputError` when the file cannot be read or a row is wrong."""
    try:
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise BatchInputError(f"{path}: larger than {MAX_INPUT_BYTES // 2**20} MB")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise BatchInputError(f"{path}: cannot read the inputs ({error})") from None
    if _looks_like_jsonl(path, text):
        items = parse_jsonl(text, str(path))
    else:
        items = parse_csv(text, str(path), header=header)
    if not items:
        raise BatchInputError(f"{path}: no items (every row was blank)")
    return items


def _looks_like_jsonl(path: Path, text: str) -> bool:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    if path.suffix.lower() == ".csv":
        return False
    return text.lstrip().startswith("{")


def parse_jsonl(text: str, where: str = "inputs") -> list[BatchItem]:
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            items.append(_jsonl_row(line, f"{where}:{number}"))
    return items


def _jsonl_row(line: str, where: str) -> BatchItem:
    example = 'write {"args": ["first", "second"], "params": {"name": "value"}}'
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise BatchInputError(f"{where}: not JSON ({error.msg}); {example}") from None
    if not isinstance(row, dict):
        raise BatchInputError(f"{where}: a row must be a JSON object; {example}")
    unknown = sorted(set(row) - {"args", "params"})
    if unknown:
        raise BatchInputError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
            "(a row has only 'args' and 'params')"
        )
    args = row.get("args", [])
    if isinstance(args, str):
        args = [args]
    if not isinstance(args, list) or not all(_is_scalar(a) for a in args):
        raise BatchInputError(f"{where}: 'args' must be a list of strings; {example}")
    params = row.get("params", {})
    if not isinstance(params, dict) or not all(_is_scalar(v) for v in params.values()):
        raise BatchInputError(
            f"{where}: 'params' must map names to strings, numbers or true/false; {example}"
        )
    return BatchItem(args=[_text(a) for a in args], params=params)


def _is_scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool)


def _text(value: ParamValue) -> str:
    """An argument as the task will show it (``true``, not ``True``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_csv(text: str, where: str = "inputs", *, header: bool = False) -> list[BatchItem]:
    reader = csv.reader(io.StringIO(text, newline=""))
    items = []
    try:
        for position, row in enumerate(reader):
            if (header and position == 0) or not any(cell.strip() for cell in row):
                continue
            items.append(BatchItem(args=row))
    except csv.Error as error:
        raise BatchInputError(f"{where}:{reader.line_num}: not valid CSV ({error})") from None
    return items
