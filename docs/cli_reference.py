"""Write the command-line reference page (``docs/reference/cli.md``) from ``baton``'s parsers.

The page is generated, never written by hand, so it cannot drift from the program: every
command, sub-command, argument and help text comes from :func:`core.cli.build_parser`. The
page is committed (it reads well on GitHub too), and ``tests/test_docs_site.py`` fails when the
committed page differs from what this module renders — so a new command without a page entry,
or a changed option, fails CI until the page is regenerated::

    .venv/bin/python -m docs.cli_reference        # rewrite docs/reference/cli.md
    .venv/bin/python -m docs.cli_reference --check  # exit 1 if the page is out of date
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "reference" / "cli.md"

INTRO = """\
# Command-line reference

Generated from the program's own parsers by `python -m docs.cli_reference`; do not edit by
hand. `baton` with no command opens the window; every command below works without a display.
Exit codes: 0 ok, 1 the work failed, 2 bad usage or configuration, 130 cancelled. For what the
commands are for, with examples, see [the command line guide](../guide/command-line.md).
"""


def _subcommands(
    parser: argparse.ArgumentParser,
) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """Each sub-command of *parser* with its one-line help, in the order they were added."""
    for action in parser._actions:  # argparse keeps no public list of sub-parsers
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, child in action.choices.items():
                yield name, helps.get(name, ""), child


def _argument_rows(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(action.option_strings)
            if action.nargs != 0:
                name += f" {_metavar(action)}"
        else:
            name = str(action.metavar or action.dest)
        help_text = " ".join((action.help or "").split())
        if _shows_default(action) and "default" not in (action.help or ""):
            help_text += f" (default: `{action.default}`)"
        help_text = help_text.replace("%(default)s", str(action.default))
        rows.append((name, help_text))
    return rows


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(str(choice) for choice in action.choices) + "}"
    return action.dest.upper()


def _shows_default(action: argparse.Action) -> bool:
    """A default worth printing: not empty, and not this machine's (the current folder)."""
    default = action.default
    if default in (None, False, argparse.SUPPRESS) or default == []:
        return False
    return not isinstance(default, Path) and default != str(Path.cwd())


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=100)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, "")
    return formatter.format_help().strip()


def _section(path: list[str], summary: str, parser: argparse.ArgumentParser) -> list[str]:
    level = "#" * min(len(path) + 1, 4)
    lines = [f"{level} `{' '.join(path)}`", ""]
    text = " ".join((parser.description or summary or "").split())
    if text:
        lines += [text, ""]
    lines += ["```text", _usage(parser), "```", ""]
    rows = _argument_rows(parser)
    if rows:
        lines += ["| argument | meaning |", "|---|---|"]
        lines += [f"| `{name}` | {_cell(meaning)} |" for name, meaning in rows]
        lines.append("")
    return lines


def _cell(text: str) -> str:
    """Table cells may not hold a bare pipe."""
    return text.replace("|", "\\|")


def _walk(
    path: list[str], summary: str, parser: argparse.ArgumentParser
) -> Iterator[tuple[list[str], str, argparse.ArgumentParser]]:
    yield path, summary, parser
    for name, help_text, child in _subcommands(parser):
        yield from _walk([*path, name], help_text, child)


def command_paths() -> list[str]:
    """Every command the program accepts, as typed (``baton runs diff``)."""
    from core.cli import build_parser

    return [" ".join(path) for path, _, _ in _walk(["baton"], "", build_parser())]


def render() -> str:
    from core.cli import build_parser

    lines = [INTRO]
    for path, summary, parser in _walk(["baton"], "", build_parser()):
        lines += _section(path, summary, parser)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in args:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date: run python -m docs.cli_reference", file=sys.stderr)
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
