"""``baton runs search QUERY`` and ``baton runs compare A B``: find a run by what happened in
it (:mod:`core.history.run_search`), and set two runs side by side
(:mod:`core.history.run_compare`)."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from core.history.run_compare import compare_runs, comparison_markdown
from core.history.run_reading import read_folded
from core.history.run_search import DEFAULT_LIMIT, RunSearch
from core.record.run_files import RunIndex


def register(actions: Any) -> None:
    """Add ``search`` and ``compare`` to ``baton runs``' actions."""
    search = actions.add_parser(
        "search", help="find runs by their prompts, outputs, tool arguments and results"
    )
    search.add_argument("query", nargs="+", help='words (all must match); "quoted text" exactly')
    search.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    search.add_argument("--json", action="store_true")
    search.set_defaults(handler=_search)
    compare = actions.add_parser("compare", help="two runs side by side, step by step, as Markdown")
    compare.add_argument("first")
    compare.add_argument("second")
    compare.set_defaults(handler=_compare)


def _search(args: argparse.Namespace) -> int:
    query = " ".join(args.query)
    try:
        result = RunSearch().search(query, max(1, args.limit))
    except sqlite3.Error as error:  # the index is a cache: deleting it is always safe
        print(
            f"baton runs search: the search index failed ({error}); delete"
            f" {RunSearch.default_path()} and search again to rebuild it",
            file=sys.stderr,
        )
        return 1
    if args.json:
        print(json.dumps([asdict(hit) for hit in result.hits], ensure_ascii=False, indent=2))
        return 0
    if not result.hits:
        print(f"No run mentions {query!r}.")
        return 0
    for hit in result.hits:
        print(f"{hit.run_id}  {hit.where()}\n    {hit.snippet}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    index = RunIndex()
    states = []
    for run_id in (args.first, args.second):
        record = index.get(run_id)
        if record is None:
            print(f"baton runs compare: no run '{run_id}' (see 'baton runs list')", file=sys.stderr)
            return 2
        try:
            states.append(read_folded(Path(record.path)).state)
        except (OSError, ValueError) as error:
            print(f"baton runs compare: cannot read run {run_id}: {error}", file=sys.stderr)
            return 2
    print(comparison_markdown(compare_runs(states[0], states[1])), end="")
    return 0
