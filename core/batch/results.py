"""A batch's results, one row per item: for ``baton batch status|export`` and the window.

Figures come from the outcome the batch store kept when the item ended (status, usage,
duration, error, the last step's final output and structured result): nothing is read back
from the runs index or the run files. Items recorded before outcomes were kept fall back to
the index and the run file (the last ``step_finished``).

Exports are CSV (one column per argument, ``$1``…) or JSONL (the row's ``args`` and
``params`` as given, so an export's rows can be fed back as inputs).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from core.batch.store import BatchRecord, ItemRecord, StoredOutcome
from core.model.events import StepFinished, UsageStats
from core.record.run_files import RunIndex, RunRecord, read_events

_FIGURES = ("tokens", "cost", "duration_s", "output", "error")


class ItemResult(BaseModel):
    item: int
    """1-based row, as a person counts."""
    status: str
    args: list[str]
    params: dict[str, Any]
    run_id: str | None
    tokens: int = 0
    cost: float = 0.0
    priced: bool = True
    """False when some of the run's usage had no price (a model in no price table): ``cost``
    then covers only the rest, so exports leave the cost empty rather than claim it."""
    duration_s: float | None = None
    output: str = ""
    structured: dict[str, Any] | None = None
    """The last step's structured result (kept with the item), when its agent declares one."""
    error: str | None = None


def final_output(path: Path) -> str:
    """The last step's final output in a run file ("" when it has none or is gone)."""
    output = ""
    try:
        for event in read_events(path):
            if isinstance(event, StepFinished):
                output = event.output
    except OSError:
        return ""
    return output


def item_result(item: ItemRecord, run: RunRecord | None) -> ItemResult:
    """The item's row: from its stored outcome when the store kept one, else from its run
    (``run``: its index row; the final output is read from its file)."""
    if item.outcome is not None:
        return _from_outcome(item, item.outcome)
    usage = run.usage if run is not None else UsageStats()
    return ItemResult(
        item=item.index + 1,
        status=item.status,
        args=item.item.args,
        params=dict(item.item.params),
        run_id=item.run_id,
        tokens=usage.input + usage.output,
        cost=usage.cost,
        priced=usage.priced,
        duration_s=run.duration_s if run is not None else None,
        output=final_output(Path(run.path)) if run is not None else "",
        error=run.error if run is not None else None,
    )


def _from_outcome(item: ItemRecord, outcome: StoredOutcome) -> ItemResult:
    usage = outcome.usage
    return ItemResult(
        item=item.index + 1,
        status=item.status,
        args=item.item.args,
        params=dict(item.item.params),
        run_id=item.run_id,
        tokens=usage.input + usage.output,
        cost=usage.cost,
        priced=usage.priced,
        duration_s=outcome.duration_s,
        output=outcome.output,
        structured=outcome.structured,
        error=outcome.error,
    )


def needs_run(item: ItemRecord) -> bool:
    """Whether the item's row has to be read from its run (no outcome kept)."""
    return item.outcome is None and item.run_id is not None


def batch_results(record: BatchRecord, index: RunIndex | None = None) -> list[ItemResult]:
    """Every item's row; runs are looked up only for items without a kept outcome."""
    if not any(needs_run(item) for item in record.items):
        return [item_result(item, None) for item in record.items]
    index = index or RunIndex()
    return [
        item_result(item, index.get(item.run_id) if needs_run(item) and item.run_id else None)
        for item in record.items
    ]


def export_cost(result: ItemResult) -> float | None:
    """The cost an export states: None (an empty cell, ``null``) when the run used a model
    Baton has no price for, never a ``0`` that reads as "free"."""
    return result.cost if result.priced else None


def results_jsonl(results: list[ItemResult]) -> str:
    rows = ({**r.model_dump(exclude={"priced"}), "cost": export_cost(r)} for r in results)
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str) -> str:
    """Text a spreadsheet will not run: a model's answer starting ``=HYPERLINK(…)`` is shown
    with a leading ``'``, not evaluated (the model is assumed hostile; OWASP's CSV advice)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def results_csv(results: list[ItemResult]) -> str:
    """CSV with a header row; arguments spread over ``$1``… columns. Text cells that a
    spreadsheet would read as a formula are quoted with a leading ``'`` (see :func:`_cell`)."""
    width = max((len(r.args) for r in results), default=0)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    dollars = [f"${n}" for n in range(1, width + 1)]
    writer.writerow(["item", "status", *dollars, "params", "run_id", *_FIGURES])
    for r in results:
        params = json.dumps(r.params, ensure_ascii=False) if r.params else ""
        took = r.duration_s if r.duration_s is not None else ""
        padding = [""] * (width - len(r.args))
        run = r.run_id or ""
        cost = export_cost(r)
        shown = "" if cost is None else f"{cost:.6f}"
        figures = [r.tokens, shown, took, _cell(r.output), _cell(r.error or "")]
        args = [_cell(arg) for arg in r.args]
        writer.writerow([r.item, r.status, *args, *padding, _cell(params), run, *figures])
    return out.getvalue()
