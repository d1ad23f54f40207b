"""``baton docs history ID`` and ``baton docs restore ID VERSION``: every version a
document had, who wrote each, what each changed, and bringing any one back.

Versions are numbered from 1, the first text. Restoring writes the old text as a new version,
so a restore is itself in the history and can be undone the same way.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from core.documents.history import diff
from core.documents.models import DocumentProvenance
from core.documents.store import DocumentError, DocumentStore
from core.safety.nesting import current_parent

Handler = Callable[[argparse.Namespace, DocumentStore], int]


def command_author() -> DocumentProvenance | None:
    """Who types a ``baton docs`` command that writes: a step's agent when a step's shell
    started it (found by the process tree, :func:`core.safety.nesting.current_parent`), otherwise a
    person (None)."""
    parent = current_parent()
    if parent is None:
        return None
    return DocumentProvenance(run_id=parent.run_id, step=parent.step, agent=parent.agent)


def register_history(
    actions: Any, with_store: Callable[[Handler], Callable[[argparse.Namespace], int]]
) -> None:
    history = actions.add_parser("history", help="every version of a document and who wrote it")
    history.add_argument("id", type=int)
    history.add_argument(
        "--diff", type=int, metavar="VERSION", help="what VERSION changed since the one before"
    )
    history.add_argument("--json", action="store_true", help="print JSON (with the texts)")
    history.set_defaults(handler=with_store(_history))

    restore = actions.add_parser("restore", help="make an earlier version current again")
    restore.add_argument("id", type=int)
    restore.add_argument("version", type=int, help="the version number `history` shows")
    restore.set_defaults(handler=with_store(_restore))


def _history(args: argparse.Namespace, store: DocumentStore) -> int:
    versions = store.history(args.id)
    if args.json:
        print(
            json.dumps(
                [version.model_dump(mode="json") for version in versions],
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if args.diff is not None:
        numbers = [version.version for version in versions]
        if args.diff not in numbers:
            raise DocumentError(
                f"Document #{args.id} has no version {args.diff} (it has 1 to {numbers[-1]})."
            )
        at = numbers.index(args.diff)
        print(diff(versions[at - 1] if at else None, versions[at]), end="")
        return 0
    last = versions[-1]
    state = "deleted" if last.deleted else f"current: version {last.version}"
    print(f"#{args.id} {last.title} ({len(versions)} versions, {state})")
    for version in versions:
        mark = "deleted" if version.deleted else f"{len(version.content):,} chars"
        current = "  (current)" if version.current else ""
        print(
            f"  v{version.version:<4} {version.written:%Y-%m-%d %H:%M} UTC  {version.type:<8} "
            f"{mark:>12}  by {version.written_by.describe()}{current}"
        )
    print(
        f"(see a change: baton docs history {args.id} --diff N; "
        f"bring one back: baton docs restore {args.id} N)"
    )
    return 0


def _restore(args: argparse.Namespace, store: DocumentStore) -> int:
    doc = store.restore(args.id, args.version, author=command_author())
    print(f"restored #{doc.id} {doc.title!r} to version {args.version} (now version {doc.version})")
    return 0
