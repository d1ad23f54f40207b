"""``baton runs``: the run history — list, export, import, delete, resume, re-run, search,
compare."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.config.atomic import atomic_write_text
from core.history.run_export import run_to_json, run_to_markdown
from core.record.run_files import RunIndex, RunRecord, load_run
from core.record.run_names import run_name, status_word
from core.safety.redaction import Redactor, redact_all
from core.terminal.commands import changes as changes_command
from core.terminal.commands import rerun as rerun_command
from core.terminal.commands import runs_comment, runs_review, runs_steer, runs_traces
from core.terminal.commands import worktree as worktree_command


def register(commands: Any) -> None:
    parser = commands.add_parser("runs", help="list, export and delete saved runs")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="saved runs, newest first")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)
    export = actions.add_parser(
        "export", help="print a run as Markdown, JSON or an OpenTelemetry trace (OTLP JSON)"
    )
    export.add_argument("run_id")
    export.add_argument("--format", choices=["md", "json", "otlp-json"], default="md")
    export.add_argument(
        "--output", "-o", type=Path, metavar="FILE", help="write to FILE instead of printing"
    )
    export.set_defaults(handler=_export)
    importing = actions.add_parser(
        "import", help="add a Baton run file, or a pi / Claude Code JSON transcript, to the history"
    )
    importing.add_argument("file", type=Path)
    importing.set_defaults(handler=_import)
    delete = actions.add_parser("delete", help="delete a saved run")
    delete.add_argument("run_id")
    delete.set_defaults(handler=_delete)
    rerun_command.register(actions)
    changes_command.register(actions)
    worktree_command.register(actions)
    runs_review.register(actions)
    runs_steer.register(actions)
    runs_comment.register(actions)
    runs_traces.register(actions)


def _title(record: RunRecord) -> str:
    return run_name(record.mode, record.preset, record.args, record.agents) or record.id


def _list(args: argparse.Namespace) -> int:
    records = RunIndex().list()
    if args.json:
        print(
            json.dumps([r.model_dump(mode="json") for r in records], ensure_ascii=False, indent=2)
        )
        return 0
    if not records:
        print("No saved runs yet.")
        return 0
    print(f"{'RUN':<{len(records[0].id)}}  {'STATUS':<11} {'TIME':>6}  {'NAME':<50}  USAGE")
    for record in records:
        took = f"{record.duration_s:.0f}s" if record.duration_s is not None else "-"
        usage = record.usage.line() or "-"
        status = status_word(record.status)
        print(f"{record.id}  {status:<11} {took:>6}  {_title(record)[:50]:<50}  {usage}")
    return 0


def _find(run_id: str) -> RunRecord | None:
    record = RunIndex().get(run_id)
    if record is None:
        print(f"baton runs: no run '{run_id}' (see 'baton runs list')", file=sys.stderr)
    return record


def _export(args: argparse.Namespace) -> int:
    record = _find(args.run_id)
    if record is None:
        return 2
    # Runs recorded by Baton are redacted already; files from elsewhere (or from before a key
    # was known) are redacted here, as a stream, so split keys are caught too.
    if args.format == "otlp-json":
        from core.telemetry.export import TelemetryUnavailable

        try:
            text = runs_traces.otlp_json_of(record)
        except TelemetryUnavailable as missing:
            print(f"baton runs export: {missing}", file=sys.stderr)
            return 2
    else:
        events = redact_all(load_run(Path(record.path)), Redactor.configured())
        text = run_to_markdown(events) if args.format == "md" else run_to_json(events)
    if args.output is None:
        print(text)
        return 0
    try:
        atomic_write_text(args.output, text + "\n")
    except OSError as error:
        print(f"baton runs export: cannot write {args.output}: {error.strerror}", file=sys.stderr)
        return 1
    print(f"Wrote run {record.id} to {args.output}.")
    return 0


def _import(args: argparse.Namespace) -> int:
    from core.history.run_import import import_run

    try:
        record = import_run(args.file)
    except (ValueError, OSError) as error:
        print(f"baton runs import: {error}", file=sys.stderr)
        return 2
    print(f"Imported {args.file} as run {record.id} ({status_word(record.status)}).")
    return 0


def _delete(args: argparse.Namespace) -> int:
    if _find(args.run_id) is None:
        return 2
    RunIndex().delete(args.run_id)
    print(f"Deleted run {args.run_id}.")
    return 0
