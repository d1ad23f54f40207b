"""A step's structured result (an agent's ``output:`` schema) as a plain-text table.

The window shows structured results as a table; the terminal does too, instead of a line of
JSON: scalar fields as ``name  value`` rows, a list of records as a table with a column per
field, any other list as a comma-separated line. Cells are one line and cut at
:data:`CELL_CHARS`, so a long field never breaks the layout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

CELL_CHARS = 60


def cell(value: Any) -> str:
    """One value as a one-line cell: text as is, anything else as compact JSON."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "—"
    elif isinstance(value, int | float):
        text = str(value)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    text = " ".join(text.split())
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """``header`` and ``rows`` in aligned columns, a rule under the header."""
    widths = [len(name) for name in header]
    for row in rows:
        widths = [max(width, len(text)) for width, text in zip(widths, row, strict=True)]
    lines = ["  ".join(name.ljust(width) for name, width in zip(header, widths, strict=True))]
    lines.append("  ".join("─" * width for width in widths))
    lines += ["  ".join(t.ljust(w) for t, w in zip(row, widths, strict=True)) for row in rows]
    return [line.rstrip() for line in lines]


def _records(value: Any) -> list[Mapping[str, Any]] | None:
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        return value
    return None


def result_table(data: Mapping[str, Any]) -> list[str]:
    """The lines that show ``data``: fields first, then each list of records as a table."""
    fields = [(name, value) for name, value in data.items() if _records(value) is None]
    lines: list[str] = []
    if fields:
        width = max(len(name) for name, _value in fields)
        for name, value in fields:
            if isinstance(value, list):
                text = ", ".join(cell(item) for item in value) or "—"
            else:
                text = cell(value)
            lines.append(f"{name.ljust(width)}  {text}")
    for name, value in data.items():
        records = _records(value)
        if records is None:
            continue
        columns: list[str] = []
        for record in records:
            columns += [key for key in record if key not in columns]
        rows = [[cell(record.get(column, "")) for column in columns] for record in records]
        lines += ["", f"{name} ({len(records)}):", *table(columns, rows)]
    return lines
