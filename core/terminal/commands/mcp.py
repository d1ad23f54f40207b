"""``baton mcp``: the MCP servers Baton's own loop may use, from the command line.

The same files Settings ▸ MCP edits (:mod:`core.config.mcp_servers`): the user's
``<config>/mcp.json`` and a project's ``.mcp.json`` (Claude Code's schema). ``test`` starts a
server the way a run would (sandboxed, scrubbed environment) and lists its tools; ``import``
copies the servers Claude Code or Cursor already know; ``enable`` / ``disable`` switch one off
for a project, a choice kept in Baton's config, never in the checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from core.config.mcp_servers import (
    McpServer,
    ServerEntry,
    disabled_in,
    project_file,
    read_server_file,
    remove_server,
    servers_to_import,
    set_enabled,
    user_file,
    write_server,
)
from core.safety.redaction import Redactor
from core.safety.trust import TrustStore
from core.tools.mcp_hub import McpServerError, confinement_for, probe

EXIT_USAGE = 2


def register(commands: Any) -> None:
    parser = commands.add_parser("mcp", help="list, add, test and import MCP servers")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the project folder")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    parser.set_defaults(handler=_list, json=False)
    listing = actions.add_parser("list", help="the user's and the project's servers")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)

    add = actions.add_parser(
        "add", help="add a server: NAME [OPTIONS] -- COMMAND [ARGS...], or NAME --url URL"
    )
    add.add_argument("name")
    _add_options(add)
    add.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND [ARGS...]",
        help="the stdio server's command line, after the options and --",
    )
    add.set_defaults(handler=_add)

    remove = actions.add_parser("remove", help="remove a server")
    remove.add_argument("name")
    remove.add_argument("--project", action="store_true", help="from the project's .mcp.json")
    remove.set_defaults(handler=_remove)

    test = actions.add_parser("test", help="start a server as a run would and list its tools")
    test.add_argument("name")
    test.set_defaults(handler=_test)

    for name, enabled in (("enable", True), ("disable", False)):
        switch = actions.add_parser(name, help=f"{name} a server for the project at --cwd")
        switch.add_argument("name")
        switch.set_defaults(handler=_switch, enabled=enabled)

    importing = actions.add_parser(
        "import", help="copy the servers of Claude Code (~/.claude.json, .mcp.json) or Cursor"
    )
    importing.add_argument("source", choices=["claude", "cursor"])
    importing.add_argument("--replace", action="store_true", help="overwrite servers of a name")
    importing.set_defaults(handler=_import)


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="a streamable-HTTP server's URL instead of a command")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--header", action="append", default=[], metavar="NAME: VALUE")
    parser.add_argument("--no-network", action="store_true", help="cut a sandboxed server off")
    parser.add_argument("--no-sandbox", action="store_true", help="run a stdio server unconfined")
    parser.add_argument("--project", action="store_true", help="write the project's .mcp.json")


def _split_rest(args: argparse.Namespace) -> argparse.Namespace:
    """Options written after NAME (argparse leaves them in the remainder) and the command
    after ``--``."""
    rest = list(args.rest)
    cut = rest.index("--") if "--" in rest else len(rest)
    options, command = rest[:cut], rest[cut + 1 :]
    parser = argparse.ArgumentParser(prog="baton mcp add", add_help=False)
    _add_options(parser)
    later, unknown = parser.parse_known_args(options)
    if unknown:
        command = [*unknown, *command] if cut == len(rest) else command
        if cut != len(rest):
            raise ValueError(f"unknown options before --: {' '.join(unknown)}")
    merged = argparse.Namespace(**vars(args))
    merged.url = later.url or args.url
    merged.env = [*args.env, *later.env]
    merged.header = [*args.header, *later.header]
    merged.no_network = args.no_network or later.no_network
    merged.no_sandbox = args.no_sandbox or later.no_sandbox
    merged.project = args.project or later.project
    merged.argv = command
    return merged


def _entries(cwd: Path) -> list[tuple[ServerEntry, bool]]:
    """Every configured server with whether it may run here (trusted, not switched off)."""
    root = cwd.resolve()
    off = disabled_in(root)
    trusted = TrustStore().is_trusted(root)
    found: list[tuple[ServerEntry, bool]] = []
    user = read_server_file(user_file())
    for name, server in user.servers.items():
        found.append((ServerEntry(name, server, "user", user.path), name not in off))
    project = read_server_file(project_file(root))
    for name, server in project.servers.items():
        entry = ServerEntry(name, server, "project", project.path)
        found.append((entry, trusted and name not in off))
    for problem in user.problems + project.problems:
        print(f"baton mcp: {problem}", file=sys.stderr)
    return found


def _list(args: argparse.Namespace) -> int:
    scrub = _redactor(args.cwd).scrub
    found = _entries(args.cwd)
    if args.json:
        rows = [
            {
                "name": entry.name,
                "origin": entry.origin,
                "transport": entry.server.transport,
                "target": scrub(entry.server.describe()),
                "enabled": enabled,
            }
            for entry, enabled in found
        ]
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not found:
        print("No MCP servers. Add one with: baton mcp add NAME -- COMMAND [ARGS...]")
        return 0
    for entry, enabled in found:
        state = "on" if enabled else "off"
        if entry.origin == "project" and not TrustStore().is_trusted(args.cwd.resolve()):
            state = "off (project not trusted)"
        where = entry.origin
        print(f"{entry.name:<20} {where:<8} {state:<26} {scrub(entry.server.describe())}")
    return 0


def _add(args: argparse.Namespace) -> int:
    try:
        args = _split_rest(args)
    except ValueError as error:
        print(f"baton mcp add: {error}", file=sys.stderr)
        return EXIT_USAGE
    if bool(args.url) == bool(args.argv):
        print("baton mcp add: give either a command (after --) or --url", file=sys.stderr)
        return EXIT_USAGE
    try:
        env = dict(_pair(item, "=") for item in args.env)
        headers = dict(_pair(item, ":") for item in args.header)
    except ValueError as error:
        print(f"baton mcp add: {error}", file=sys.stderr)
        return EXIT_USAGE
    fields: dict[str, Any] = {"network": not args.no_network, "sandbox": not args.no_sandbox}
    if args.url:
        fields.update(type="http", url=args.url, headers=headers)
    else:
        fields.update(command=args.argv[0], args=args.argv[1:], env=env)
    path = project_file(args.cwd.resolve()) if args.project else user_file()
    try:
        write_server(path, args.name, McpServer.model_validate(fields))
    except ValueError as error:
        print(f"baton mcp add: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"added {args.name} to {path}")
    return 0


def _pair(text: str, separator: str) -> tuple[str, str]:
    name, found, value = text.partition(separator)
    if not found or not name.strip():
        raise ValueError(f"{text!r} is not NAME{separator}VALUE")
    return name.strip(), value.strip()


def _remove(args: argparse.Namespace) -> int:
    path = project_file(args.cwd.resolve()) if args.project else user_file()
    try:
        removed = remove_server(path, args.name)
    except ValueError as error:
        print(f"baton mcp remove: {error}", file=sys.stderr)
        return EXIT_USAGE
    if not removed:
        print(f"baton mcp remove: no server {args.name} in {path}", file=sys.stderr)
        return 1
    print(f"removed {args.name} from {path}")
    return 0


def _test(args: argparse.Namespace) -> int:
    cwd = args.cwd.resolve()
    found = {entry.name: (entry, enabled) for entry, enabled in _entries(cwd)}
    if args.name not in found:
        print(f"baton mcp test: no server named {args.name}", file=sys.stderr)
        return 1
    entry, _ = found[args.name]
    if entry.origin == "project" and not TrustStore().is_trusted(cwd):
        print(
            f"baton mcp test: {args.name} comes from the project's .mcp.json, which is not "
            "trusted; trust the project first (it would run: "
            f"{_redactor(cwd).scrub(entry.server.describe())})",
            file=sys.stderr,
        )
        return 1
    scrub = _redactor(cwd).scrub
    try:
        listed = asyncio.run(probe(entry, confinement_for(cwd)))
    except McpServerError as error:
        print(f"baton mcp test: {scrub(str(error))}", file=sys.stderr)
        return 1
    print(f"{args.name}: {len(listed.tools)} tool{'s' if len(listed.tools) != 1 else ''}")
    for tool in listed.tools:
        description = (tool.description or "").strip().splitlines()
        print(f"  {tool.name:<28} {scrub(description[0]) if description else ''}")
    return 0


def _switch(args: argparse.Namespace) -> int:
    set_enabled(args.cwd.resolve(), args.name, args.enabled)
    print(f"{args.name}: {'on' if args.enabled else 'off'} in {args.cwd.resolve()}")
    return 0


def _import(args: argparse.Namespace) -> int:
    found = servers_to_import(args.source, args.cwd.resolve())
    for problem in found.problems:
        print(f"baton mcp import: {problem}", file=sys.stderr)
    existing = read_server_file(user_file()).servers
    added = 0
    for name, server in found.servers.items():
        if name in existing and not args.replace:
            print(f"kept {name} (already configured; --replace to overwrite)")
            continue
        write_server(user_file(), name, server)
        print(f"imported {name}: {_redactor(args.cwd).scrub(server.describe())}")
        added += 1
    print(f"{added} server{'s' if added != 1 else ''} imported into {user_file()}")
    return 0


def _redactor(cwd: Path | None = None) -> Redactor:
    """The configured secrets, with those of the project's ``.mcp.json`` at ``cwd``."""
    return Redactor.configured([cwd.resolve()] if cwd is not None else [])
