"""``baton docs``: the document store from a terminal — list, search, show, add, edit, delete,
import and export.

Listings never carry content. Every problem a person can fix (an empty title, content over the
limit, an unknown id) exits 2 with one line on stderr; ``--json`` output is for scripts.
``delete`` asks on a terminal and refuses without one unless ``--yes``, so a script never
deletes by accident; a deleted document keeps its history and ``restore`` brings it back
(:mod:`core.terminal.commands.docs_history`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from core.config.atomic import atomic_write_text
from core.config.settings import SettingsError, load_settings
from core.documents.store import (
    Document,
    DocumentError,
    DocumentStore,
    DocumentSummary,
    Page,
    SearchHit,
)
from core.terminal.commands.docs_history import Handler, command_author, register_history


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "docs",
        help="list, search, show and edit the document store",
        description="The memories and documents agents wrote (and people edited).",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="documents, newest change first")
    _filters(listing)
    listing.add_argument("--page", type=int, default=1)
    _json(listing)
    listing.set_defaults(handler=_with_store(_list))

    search = actions.add_parser("search", help="best matches for keywords in any language")
    search.add_argument("query", help='words (prefix match), CJK text, or "exact text"')
    _filters(search)
    search.add_argument("--page", type=int, default=1)
    _json(search)
    search.set_defaults(handler=_with_store(_search))

    show = actions.add_parser("show", help="one document: its summary, or all of it")
    show.add_argument("id", type=int)
    show.add_argument("--full", action="store_true", help="the whole content")
    _json(show)
    show.set_defaults(handler=_with_store(_show))

    add = actions.add_parser("add", help="create a document")
    add.add_argument("--title", required=True)
    _content(add, required=True)
    add.add_argument("--type", choices=["memory", "document"], default="document")
    add.add_argument("--tags", help="comma-separated: a,b")
    _json(add)
    add.set_defaults(handler=_with_store(_add))

    edit = actions.add_parser("edit", help="change a document's title, content, tags or type")
    edit.add_argument("id", type=int)
    edit.add_argument("--title")
    _content(edit, required=False)
    edit.add_argument("--type", choices=["memory", "document"])
    edit.add_argument("--tags", help="comma-separated; replaces the tags ('' removes them)")
    _json(edit)
    edit.set_defaults(handler=_with_store(_edit))

    delete = actions.add_parser("delete", help="delete a document (asks first)")
    delete.add_argument("id", type=int)
    delete.add_argument("--yes", action="store_true", help="do not ask (needed without a tty)")
    delete.set_defaults(handler=_with_store(_delete))

    register_history(actions, _with_store)

    importing = actions.add_parser("import", help="add the documents of a JSON-lines file")
    importing.add_argument("file", type=Path)
    importing.set_defaults(handler=_with_store(_import))

    export = actions.add_parser("export", help="every document, as JSON lines or Markdown files")
    formats = export.add_mutually_exclusive_group()
    formats.add_argument("--json", action="store_true", help="JSON lines on stdout (default)")
    formats.add_argument("--md", type=Path, metavar="DIR", help="one Markdown file each in DIR")
    export.set_defaults(handler=_with_store(_export))


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--type", choices=["memory", "document"])
    parser.add_argument("--tag")


def _json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _content(parser: argparse.ArgumentParser, *, required: bool) -> None:
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--content", help="the text")
    group.add_argument("--file", type=Path, help="read the text from a file ('-': stdin)")


def _with_store(handler: Handler) -> Callable[[argparse.Namespace], int]:
    """Open the store with the settings' limits; turn every store problem into exit 2."""

    def run(args: argparse.Namespace) -> int:
        where = f"baton docs {args.action}"
        try:
            limits = load_settings().limits
        except SettingsError as error:
            print(f"{where}: {error}", file=sys.stderr)
            return 2
        try:
            with DocumentStore(limits=limits) as store:
                return handler(args, store)
        except DocumentError as error:
            print(f"{where}: {error}", file=sys.stderr)
            return 2

    return run


# ---- reading -------------------------------------------------------------------------------


def _list(args: argparse.Namespace, store: DocumentStore) -> int:
    page = store.list(type=args.type, tag=args.tag, page=args.page)
    _print_page(page, args.json)
    return 0


def _search(args: argparse.Namespace, store: DocumentStore) -> int:
    page = store.search(args.query, type=args.type, tag=args.tag, page=args.page)
    _print_page(page, args.json)
    return 0


def _print_page(page: Page[DocumentSummary] | Page[SearchHit], as_json: bool) -> None:
    if as_json:
        print(
            json.dumps(
                {**page.model_dump(mode="json"), "pages": page.pages}, ensure_ascii=False, indent=2
            )
        )
        return
    if page.total == 0:
        print("No documents.")
        return
    if not page.items:
        print(f"Page {page.page} is past the end ({page.total_words}, {page.pages} pages).")
        return
    rows = [("ID", "TYPE", "UPDATED", "TAGS", "TITLE")]
    rows += [
        (
            str(item.id),
            item.type,
            f"{item.updated:%Y-%m-%d %H:%M}",
            ", ".join(item.tags),
            item.title,
        )
        for item in page.items
    ]
    widths = [max(_width(row[i]) for row in rows) for i in range(3)]
    widths.append(min(24, max(_width(row[3]) for row in rows)))
    for index, row in enumerate(rows):
        cells = [_cell(text, width) for text, width in zip(row[:4], widths, strict=True)]
        print("  ".join([*cells, _cell(row[4], 60).rstrip()]))
        item = page.items[index - 1] if index else None
        if isinstance(item, SearchHit) and item.snippet:
            print(
                " " * (widths[0] + 2) + item.snippet
            )  # one line already; cutting it could split a match
    shown = f"page {page.page} of {page.pages}, {page.total_words}"
    more = f"; next: --page {page.page + 1}" if page.page < page.pages else ""
    print(f"({shown}{more})")


def _show(args: argparse.Namespace, store: DocumentStore) -> int:
    doc = store.get(args.id, full=True)
    if args.json:
        data = doc.model_dump(mode="json")
        if not args.full:
            data["content"] = None
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    by = doc.provenance.describe()
    print(f"#{doc.id} {doc.title}")
    print(f"type: {doc.type}   tags: {', '.join(doc.tags) or '-'}   version: {doc.version}")
    print(f"created: {doc.created:%Y-%m-%d %H:%M} UTC by {by}")
    print(f"updated: {doc.updated:%Y-%m-%d %H:%M} UTC   {doc.chars:,} characters")
    print()
    if args.full or not doc.summary:
        print(doc.content or "")
    else:
        print(doc.summary)
        print(f"\n(summary; {doc.chars:,} characters in all — show it with --full)")
    return 0


# ---- writing -------------------------------------------------------------------------------


def _read_text(args: argparse.Namespace) -> str | None:
    if args.file is None:
        content: str | None = args.content
        return content
    if str(args.file) == "-":
        return sys.stdin.read()
    try:
        return Path(args.file).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise DocumentError(f"Cannot read {args.file}: {error}.") from None


def _tags(raw: str | None) -> list[str] | None:
    return None if raw is None else [tag for tag in raw.split(",") if tag.strip()]


def _report(doc: Document, verb: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps(doc.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        print(f"{verb} #{doc.id} {doc.title!r} (version {doc.version})")


def _add(args: argparse.Namespace, store: DocumentStore) -> int:
    content = _read_text(args) or ""
    doc = store.create(
        args.title,
        content,
        type=args.type,
        tags=_tags(args.tags) or [],
        provenance=command_author(),
    )
    _report(doc, "created", args.json)
    return 0


def _edit(args: argparse.Namespace, store: DocumentStore) -> int:
    content = _read_text(args)
    tags = _tags(args.tags)
    if args.title is None and content is None and tags is None and args.type is None:
        raise DocumentError("Nothing to change: give --title, --content/--file, --tags or --type.")
    doc = store.update(
        args.id,
        title=args.title,
        content=content,
        tags=tags,
        type=args.type,
        author=command_author(),
    )
    _report(doc, "updated", args.json)
    return 0


def _delete(args: argparse.Namespace, store: DocumentStore) -> int:
    doc = store.get(args.id)
    if not args.yes:
        if not sys.stdin.isatty():
            raise DocumentError(
                f"Not deleting #{doc.id} without confirmation: no terminal to ask on; "
                "pass --yes to delete anyway."
            )
        answer = input(f"Delete #{doc.id} {doc.title!r}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Not deleted.")
            return 1
    store.delete(doc.id, expected_version=doc.version, author=command_author())
    print(f"deleted #{doc.id} {doc.title!r} (undo: baton docs restore {doc.id} {doc.version})")
    return 0


def _import(args: argparse.Namespace, store: DocumentStore) -> int:
    ids = store.import_jsonl(args.file)
    span = f" (#{ids[0]}-#{ids[-1]})" if ids else ""
    print(f"imported {_count(len(ids))}{span}")
    return 0


def _export(args: argparse.Namespace, store: DocumentStore) -> int:
    if args.md is None:
        for doc in store.export():
            print(doc.model_dump_json())
        return 0
    folder: Path = args.md
    if folder.exists() and not folder.is_dir():
        raise DocumentError(f"{folder} exists and is not a folder.")
    count = 0
    for doc in store.export():
        atomic_write_text(folder / f"{doc.id:05d}-{_slug(doc.title)}.md", _markdown(doc))
        count += 1
    print(f"exported {_count(count)} to {folder}")
    return 0


def _markdown(doc: Document) -> str:
    """YAML front matter with the metadata, then the content as written."""
    front = {
        "id": doc.id,
        "title": doc.title,
        "type": doc.type,
        "tags": doc.tags,
        "version": doc.version,
        "created": doc.created.isoformat(),
        "updated": doc.updated.isoformat(),
        "provenance": doc.provenance.model_dump(),
    }
    header = yaml.safe_dump(front, allow_unicode=True, sort_keys=False)
    return f"---\n{header}---\n\n{doc.content or ''}\n"


def _slug(title: str) -> str:
    """File-name-safe, keeps letters of every script: ``登录 设计!`` → ``登录-设计``."""
    slug = re.sub(r"[^\w]+", "-", title.casefold()).strip("-_")
    return slug[:60].rstrip("-_") or "untitled"


def _count(n: int) -> str:
    return f"{n:,} document" if n == 1 else f"{n:,} documents"


# ---- table cells ---------------------------------------------------------------------------


def _char_width(char: str) -> int:
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _width(text: str) -> int:
    return sum(_char_width(char) for char in text)


def _cell(text: str, width: int) -> str:
    """``text`` on one line, cut with ``…`` to ``width`` terminal columns and padded to it
    (CJK characters take two columns, so ``ljust`` would misalign them)."""
    text = " ".join(text.split())
    if _width(text) > width:
        out, used = [], 0
        for char in text:
            if used + _char_width(char) > width - 1:
                break
            out.append(char)
            used += _char_width(char)
        text = "".join(out) + "…"
    return text + " " * (width - _width(text))
