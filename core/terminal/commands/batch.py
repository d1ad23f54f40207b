"""``baton batch``: one preset over many inputs, headless (see :mod:`core.batch`).

``baton batch PRESET --inputs FILE`` runs an item per input row, ``--concurrency`` at once,
on the chosen ``--executor``; ``resume BATCH_ID`` runs again the items that did not finish ok;
``status BATCH_ID``, ``export BATCH_ID`` and ``list`` read the record. With ``--json`` every
event line is the event plus the item's ``batch_id`` and ``item`` (0-based row); without it,
one line per finished item. Ctrl+C cancels every item (each run file ends ``aborted``); exit
status 0 when every item finished ok, 1 when one did not, 2 for bad usage, 130 cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.batch.executor_registry import EXECUTORS
from core.batch.executors import ExecutorLost, ExecutorOptions
from core.batch.results import batch_results, results_csv, results_jsonl
from core.batch.start import batch_run, record_batch
from core.batch.store import BatchPlacement, BatchRecord, BatchSpec, BatchStore
from core.batch.supervisor import BatchListener, BatchRun
from core.config.atomic import atomic_write_text
from core.config.settings import Settings, SettingsError, load_settings
from core.model.errors import RunError
from core.model.events import Event, RunFinished, event_to_json
from core.record.run_names import status_word
from core.safety.redaction import Redactor
from core.safety.sandbox import sandbox_status
from core.terminal.commands.run import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    add_run_options,
    runner_options,
    usage_error,
)

ACTIONS = ("resume", "status", "export", "list")
COMMAND = "baton batch"


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "batch",
        help="run a preset over many inputs (a JSONL or CSV file)",
        description="Examples: baton batch triage --inputs issues.jsonl --concurrency 8; "
        "baton batch resume BATCH_ID; baton batch status BATCH_ID; "
        "baton batch export BATCH_ID --format csv --output results.csv; baton batch list",
    )
    parser.add_argument("preset", metavar="PRESET|ACTION", help=f"a preset, or {'|'.join(ACTIONS)}")
    parser.add_argument(
        "batch_id", nargs="?", metavar="BATCH_ID", help="the batch (resume, status, export)"
    )
    parser.add_argument(
        "--inputs",
        type=Path,
        metavar="FILE",
        help='JSONL rows {"args": [...], "params": {...}}, or CSV rows (columns are $1, $2...)',
    )
    parser.add_argument(
        "--csv-header", action="store_true", help="the CSV's first row names columns: skip it"
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help=f"items at once (default {BatchPlacement().concurrency}; resume: as started)",
    )
    parser.add_argument(
        "--executor",
        choices=sorted(EXECUTORS),
        help="where items run (default local; resume: as started)",
    )
    parser.add_argument(
        "--ray-address", metavar="ADDR", help="the Ray cluster (--executor ray; resume: as started)"
    )
    parser.add_argument(
        "--ray-timeout",
        type=float,
        default=ExecutorOptions.connect_timeout_s,
        metavar="SECONDS",
        help="how long --ray-address may take to answer (default %(default)g)",
    )
    parser.add_argument(
        "--repo",
        metavar="URL",
        help="run each item in a fresh copy of this git repository, made on its Ray worker "
        "(--executor ray; instead of a folder every worker can reach; resume: as started)",
    )
    parser.add_argument(
        "--ref", metavar="REF", help="the branch, tag or commit for --repo (default HEAD)"
    )
    add_run_options(parser, unanswered="an item at a gate fails, saying so; nothing waits")
    parser.add_argument("--json", action="store_true", help="print NDJSON events (or results)")
    parser.add_argument(
        "--format", choices=["jsonl", "csv"], default="jsonl", help="what export writes"
    )
    parser.add_argument(
        "--output", type=Path, metavar="FILE", help="export to this file (default: stdout)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    action = args.preset if args.preset in ACTIONS else "start"
    if action in ("resume", "status", "export") and not args.batch_id:
        return usage_error(COMMAND, RunError(f"{action} needs a BATCH_ID (see 'baton batch list')"))
    if action == "start" and args.batch_id:
        return usage_error(COMMAND, RunError(f"unexpected argument {args.batch_id!r}"))
    if action == "list":
        return _list()
    store = BatchStore()
    if action == "start":
        return _start(args, store)
    record = store.get(args.batch_id)
    if record is None:
        missing = f"no batch '{args.batch_id}' (see 'baton batch list')"
        return usage_error(COMMAND, RunError(missing))
    if action == "status":
        return _status(record, args.json)
    if action == "export":
        return _export(record, args)
    return _resume(record, args, store)


# -------------------------------------------------------------------------------- running


def _start(args: argparse.Namespace, store: BatchStore) -> int:
    if args.inputs is None:
        return usage_error(COMMAND, RunError("give the inputs: --inputs FILE (JSONL or CSV)"))
    try:
        spec = BatchSpec(
            preset=args.preset,
            cwd=str(args.cwd.resolve()),
            scope=args.scope,
            model=args.model,
            backend=args.backend,
            trust_project=args.trust_project,
        )
        placement, _ = _placement(args, None)
        record = record_batch(store, spec, args.inputs, placement, header=args.csv_header)
    except (RunError, SettingsError) as error:
        return usage_error(COMMAND, error)
    code = _execute(record, args, store, placement)
    if code == EXIT_USAGE:  # nothing ran: no record of a batch that never started
        store.delete(record.id)
    return code


def _resume(record: BatchRecord, args: argparse.Namespace, store: BatchStore) -> int:
    if not record.unfinished():
        print(f"{COMMAND}: every item of {record.id} finished ok; nothing to resume")
        return EXIT_OK
    placement, overridden = _placement(args, record.placement)
    for note in overridden:
        print(f"{COMMAND}: resume: {note}", file=sys.stderr)
    if overridden:
        store.place(record.id, placement)
    return _execute(record, args, store, placement)


PLACEMENT_FLAGS = {
    "executor": "--executor",
    "address": "--ray-address",
    "concurrency": "--concurrency",
    "repo": "--repo",
    "ref": "--ref",
}
"""A placement's fields and the flags that set them."""


def _placement(
    args: argparse.Namespace, recorded: BatchPlacement | None
) -> tuple[BatchPlacement, list[str]]:
    """The placement to run with: the flags given, over the recorded one (a resume's), over
    the defaults; and a note for each flag that changed what the batch was started with."""
    base = recorded or BatchPlacement()
    given = {
        field: value
        for field, value in {
            "executor": args.executor,
            "address": args.ray_address,
            "concurrency": args.concurrency,
            "repo": args.repo,
            "ref": args.ref,
        }.items()
        if value is not None
    }
    notes = []
    if recorded is not None:
        for field, value in given.items():
            before = getattr(recorded, field)
            if value != before:
                was = "none" if before is None else before
                notes.append(f"{PLACEMENT_FLAGS[field]} {value} instead of {was} (as started)")
    return base.model_copy(update=given), notes


def _execute(
    record: BatchRecord, args: argparse.Namespace, store: BatchStore, placement: BatchPlacement
) -> int:
    try:
        settings = load_settings()
        options = runner_options(args, settings)
        printer = _json_printer(record.id) if args.json else _ProgressPrinter(record)
        batch = batch_run(
            record,
            placement,
            settings,
            responder=options["responder"],
            listeners=[printer],
            budget_asker=options["budget_asker"],
            store=store,
            gates=args.gate,  # never the terminal: a batch's gates wait for nobody
            connect_timeout_s=args.ray_timeout,
        )
        batch.prepare()  # what refuses is said before anything starts
    except (RunError, SettingsError) as error:
        return usage_error(COMMAND, error)
    _say_sandbox(settings)
    print(
        f"{COMMAND}: {record.id}: {len(batch.jobs)} of {len(record.items)} items, "
        f"{batch.executor.name} executor, concurrency {placement.concurrency}",
        file=sys.stderr,
    )
    try:
        code = asyncio.run(_run_with_ctrl_c(batch))
    except ExecutorLost as error:  # the cluster went away: say so, then how far it got
        print(f"{COMMAND}: {record.id}: {error}", file=sys.stderr)
        code = EXIT_FAILED
    except RunError as error:  # the executor could not start (a Ray cluster out of reach)
        return usage_error(COMMAND, error)
    final = store.get(record.id) or record
    counts = ", ".join(f"{n} {status_word(s)}" for s, n in final.counts().items())
    hint = f" (run the rest: baton batch resume {record.id})" if final.unfinished() else ""
    print(f"{COMMAND}: {record.id}: {counts}{hint}", file=sys.stderr)
    return code


def _say_sandbox(settings: Settings) -> None:
    status = sandbox_status(settings.sandbox.enabled)
    if not status.active:
        print(f"{COMMAND}: bash is {status.describe()}", file=sys.stderr)


async def _run_with_ctrl_c(batch: BatchRun) -> int:
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows' loop
        loop.add_signal_handler(signal.SIGINT, batch.cancel)
        loop.add_signal_handler(signal.SIGTERM, batch.cancel)
    outcomes = await batch.run()
    if batch.cancelled.is_set():
        return EXIT_CANCELLED
    ran_all = len(outcomes) == len(batch.jobs)
    return EXIT_OK if ran_all and all(o.status == "ok" for o in outcomes) else EXIT_FAILED


def _json_printer(batch_id: str) -> BatchListener:
    """Each event as its JSON with the batch's id and the item's row in front."""
    prefix = '{"batch_id":' + json.dumps(batch_id) + ',"item":'

    def print_event(index: int, event: Event) -> None:
        sys.stdout.write(f"{prefix}{index},{event_to_json(event)[1:]}\n")
        sys.stdout.flush()

    return print_event


class _ProgressPrinter:
    """One line per finished item: ``[12/50] done  item 7  <run id>  <arguments>``."""

    def __init__(self, record: BatchRecord) -> None:
        self._labels = {item.index: item.item.label() for item in record.items}
        self._total = len(record.unfinished())
        self._done = 0

    def __call__(self, index: int, event: Event) -> None:
        if not isinstance(event, RunFinished):
            return
        self._done += 1
        line = (
            f"[{self._done}/{self._total}] {status_word(event.status):<9} item {index + 1}  "
            f"{event.run_id}  {self._labels.get(index, '')[:60]}"
        )
        if event.error:
            line += f"  ({event.error.splitlines()[0][:120]})"
        print(line, flush=True)


# -------------------------------------------------------------------------------- reading


def _list() -> int:
    records = BatchStore().list()
    if not records:
        print("No batches yet.")
        return EXIT_OK
    for record in records:
        counts = ", ".join(f"{n} {status_word(s)}" for s, n in record.counts().items())
        print(f"{record.id}  {record.created_at}  {record.spec.preset:<20} {counts}")
    return EXIT_OK


def _scrubber() -> Callable[[str], str]:
    """Scrubs the secrets a run could leak (:class:`~core.safety.redaction.Redactor`) from batch
    inputs and what is printed or exported of them (batches recorded before inputs were
    scrubbed on the way in still hold them)."""
    return Redactor.configured().scrub


def _status(record: BatchRecord, as_json: bool) -> int:
    scrub = _scrubber()
    results = batch_results(record)
    if as_json:
        data = {
            "batch_id": record.id,
            "spec": record.spec.model_dump(),
            "placement": record.placement.model_dump() if record.placement else None,
            "inputs": record.inputs,
            "created_at": record.created_at,
            "counts": record.counts(),
            "items": [r.model_dump() for r in results],
        }
        print(scrub(json.dumps(data, ensure_ascii=False, indent=2)))
        return EXIT_OK
    counts = ", ".join(f"{n} {status_word(s)}" for s, n in record.counts().items())
    print(f"{record.id}: {record.spec.preset} over {scrub(record.inputs)}, {record.created_at}")
    print(f"{len(record.items)} items: {counts}")
    for r in results:
        label = " ".join(r.args)[:50]
        line = f"{r.item:>5}  {status_word(r.status):<11} {r.run_id or '-':<24} {label}"
        if r.error and r.status != "ok":
            line += f"  ({r.error.splitlines()[0][:100]})"
        print(scrub(line))
    return EXIT_OK


def _export(record: BatchRecord, args: argparse.Namespace) -> int:
    results = batch_results(record)
    text = results_csv(results) if args.format == "csv" else results_jsonl(results)
    text = _scrubber()(text)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        atomic_write_text(args.output, text)
    except OSError as error:
        return usage_error(COMMAND, RunError(f"cannot write {args.output}: {error}"))
    print(f"Exported {len(results)} items of {record.id} to {args.output}.", file=sys.stderr)
    return EXIT_OK
