"""``baton rules``: a project's "always allow" rules from the command line.

The same rules Settings ▸ Rules edits (:class:`core.safety.rule_store.RuleStore`): list them, add or
remove one, import a project's Claude Code permissions, and ``check`` how a command or a file
would be decided — the explanation a person needs before trusting a rule.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.safety.rule_store import RuleStore, project_of
from core.safety.rules import RULE_KINDS, RuleError


def register(commands: Any) -> None:
    parser = commands.add_parser("rules", help="list and change a project's approval rules")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="a folder of the project")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    parser.set_defaults(handler=_list, json=False)
    listing = actions.add_parser("list", help="the project's rules, deny → ask → allow")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)
    for name, handler, text in (
        ("add", _add, "add a rule, e.g. allow 'Bash(git diff:*)'"),
        ("remove", _remove, "remove a rule"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("kind", choices=list(RULE_KINDS))
        action.add_argument("rule")
        action.set_defaults(handler=handler)
    importing = actions.add_parser(
        "import", help="copy the permissions of the project's .claude/settings.json"
    )
    importing.set_defaults(handler=_import)
    check = actions.add_parser("check", help="which rule decides a bash command")
    check.add_argument("command")
    check.set_defaults(handler=_check)


def _list(args: argparse.Namespace) -> int:
    root = project_of(args.cwd)
    texts = RuleStore().for_project(root).texts()
    if args.json:
        print(json.dumps({"project": str(root), **texts}, ensure_ascii=False))
        return 0
    print(f"Rules of {root}:")
    shown = [(kind, text) for kind in RULE_KINDS for text in texts[kind]]
    for kind, text in shown:
        print(f"  {kind:<5}  {text}")
    if not shown:
        print("  (none)")
    return 0


def _add(args: argparse.Namespace) -> int:
    try:
        rule = RuleStore().add(project_of(args.cwd), args.kind, args.rule)
    except RuleError as error:
        print(f"baton rules: {error}", file=sys.stderr)
        return 2
    print(f"added: {args.kind} {rule}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    store, root = RuleStore(), project_of(args.cwd)
    texts = store.for_project(root).texts()
    if args.rule not in texts[args.kind]:
        print(f"baton rules: no {args.kind} rule {args.rule} in {root}", file=sys.stderr)
        return 1
    texts[args.kind].remove(args.rule)
    store.set_project(root, texts)
    print(f"removed: {args.kind} {args.rule}")
    return 0


def _import(args: argparse.Namespace) -> int:
    try:
        added = RuleStore().import_claude(project_of(args.cwd))
    except RuleError as error:
        print(f"baton rules: {error}", file=sys.stderr)
        return 2
    count = sum(len(texts) for texts in added.values())
    for kind in RULE_KINDS:
        for text in added[kind]:
            print(f"added: {kind} {text}")
    print(f"{count} rule{'s' if count != 1 else ''} imported")
    return 0


def _check(args: argparse.Namespace) -> int:
    cwd = args.cwd.resolve()
    verdict = RuleStore().for_folder(cwd).evaluate("bash", None, {"command": args.command}, cwd)
    print(verdict.label() if verdict else "no rule: the bash policy decides (ask by default)")
    return 0
