"""``baton usage``: what saved runs used, per agent, model or day — History's usage charts as
a table a terminal or a script can read."""

from __future__ import annotations

import argparse
import datetime
import json
from typing import Any

from core.history.usage_report import UsageRow, usage_report
from core.model.cost import UNPRICED, format_cost
from core.model.events import UsageStats, compact_number
from core.model.words import counted


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "usage",
        help="tokens and cost of saved runs, per agent, model or day",
        description="Runs, steps, tokens and cost of saved runs, grouped. A cost Baton could not"
        f" price (a model in no price table) shows as {UNPRICED}, and a partly priced one as"
        " ≥$…, never as 0.",
    )
    parser.add_argument("--by", choices=["agent", "model", "day"], default="agent")
    parser.add_argument(
        "--since", type=_date, metavar="DATE", help="only runs started on or after YYYY-MM-DD"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=_usage)


def _date(text: str) -> str:
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def cost_text(usage: UsageStats) -> str:
    return format_cost(usage.cost, usage.priced)


def _as_json(row: UsageRow) -> dict[str, Any]:
    usage = row.usage
    return {
        "key": row.key,
        "runs": len(row.runs),
        "steps": row.steps,
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
        "cost": usage.cost if usage.priced or usage.cost else None,
        "priced": usage.priced,
    }


def _usage(args: argparse.Namespace) -> int:
    report = usage_report(args.by, args.since)
    if args.json:
        print(
            json.dumps(
                {
                    "by": report.by,
                    "since": args.since,
                    "rows": [_as_json(row) for row in report.rows],
                    "unreadable_runs": report.unreadable,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if not report.rows and not report.unreadable:
        print("No saved runs" + (f" since {args.since}." if args.since else " yet."))
        return 0
    if report.rows:
        _print_table(args.by, report.rows)
    if report.unreadable:
        how = "counted from their saved total" if args.by == "day" else "left out"
        print(f"\n{counted(len(report.unreadable), 'run')} {how}: their file could not be read.")
    return 0


def _print_table(by: str, rows: list[UsageRow]) -> None:
    table = [(by.upper(), "RUNS", "STEPS", "IN", "OUT", "COST")]
    table += [
        (
            row.key,
            str(len(row.runs)),
            str(row.steps),
            compact_number(row.usage.input),
            compact_number(row.usage.output),
            cost_text(row.usage),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(6)]
    for line in table:
        cells = [line[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(line[1:], widths[1:], strict=True)]
        print("  ".join(cells).rstrip())
