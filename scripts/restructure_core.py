"""Move ``core/``'s flat modules into domain packages and rewrite every reference to them.

Seven people change ``core/`` at once, so the move is this script rather than a commit: it is
run again on the merged tree, and it refuses to guess. A flat ``core/*.py`` module (or a
subpackage) that :data:`MAPPING` does not name stops it with the list, so a module added since
gets its line here first; a mapped module that is gone stops it too. Run twice, the second run
finds the move done and changes nothing.

What it does, in order:

1. ``git mv`` every mapped module (and the subpackages ``core/commands`` and
   ``core/run_import``) to its package — with ``--commit``, committed alone ("moves only"), so
   ``git log --follow`` sees plain renames;
2. writes each new package's ``__init__.py`` (its docstring, from :data:`PACKAGES`) and the core
   layer contract (:data:`CORE_CONTRACT`) into ``pyproject.toml``;
3. rewrites the references in Python files (``import core.x``, ``from core import x``,
   ``from core.x import y``, and ``core.x`` anywhere in text: strings handed to importlib,
   ``monkeypatch`` targets, docstrings) and the ``core/x.py`` paths in Markdown, YAML, TOML and
   the CI script; re-wraps the docstring and comment lines the longer names pushed past the
   line length; sorts imports and formats with ruff — with ``--commit``, the second commit.

Usage, from the repository root with the project's virtualenv::

    .venv/bin/python scripts/restructure_core.py --check    # is every module mapped? no change
    .venv/bin/python scripts/restructure_core.py            # move and rewrite, no commit
    .venv/bin/python scripts/restructure_core.py --commit   # the same as two commits

Afterwards: ``ruff check . && ruff format --check . && mypy --strict core gui &&
lint-imports`` and the tests.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import time
import tokenize
from collections.abc import Iterable, Sequence
from pathlib import Path

# Old module → new module. A subpackage (core.commands, core.run_import) moves whole; the
# packages that already were domain packages (core.backends, core.batch, core.tools) stay and
# only take or give single modules. File names are kept (the names the code already uses), but
# where the package now says it: core/documents.py is the package's store, documents_search its
# search; runs.py, which writes and indexes run files, is run_files. The moves-only commit keeps
# every file's content, so ``git log --follow`` follows a renamed file as well as a moved one.
MAPPING: dict[str, str] = {
    # model: the vocabulary every room shares
    "core.events": "core.model.events",
    "core.errors": "core.model.errors",
    "core.budget": "core.model.budget",
    # config: where Baton keeps its files, and its settings and providers
    "core.paths": "core.config.paths",
    "core.atomic": "core.config.atomic",
    "core.resources": "core.config.resources",
    "core.validation": "core.config.validation",
    "core.settings": "core.config.settings",
    "core.pricing": "core.config.pricing",
    "core.provider_http": "core.config.provider_http",
    "core.model_choice": "core.config.model_choice",
    # definitions: agents, presets and their parameters
    "core.agents": "core.definitions.agents",
    "core.agent_files": "core.definitions.agent_files",
    "core.presets": "core.definitions.presets",
    "core.preset_files": "core.definitions.preset_files",
    "core.params": "core.definitions.params",
    "core.structured": "core.definitions.structured",
    "core.agent_fields": "core.definitions.agent_fields",
    "core.output_file": "core.run.output_file",
    "core.definition_cache": "core.definitions.cache",
    "core.definition_checks": "core.definitions.checks",
    "core.definition_yaml": "core.definitions.definition_yaml",
    "core.launch_checks": "core.definitions.launch_checks",
    # documents
    "core.documents": "core.documents.store",
    "core.documents_history": "core.documents.history",
    "core.documents_models": "core.documents.models",
    "core.documents_schema": "core.documents.schema",
    "core.documents_search": "core.documents.search",
    # workspace: the files a run works on, git, checkpoints
    "core.git_command": "core.workspace.git_command",
    "core.checkpoints": "core.workspace.checkpoints",
    "core.restore": "core.workspace.restore",
    "core.worktrees": "core.workspace.worktrees",
    "core.patch_lines": "core.workspace.patch_lines",
    "core.file_state": "core.workspace.file_state",
    # safety: what the model may do, and what it may see
    "core.approvals": "core.safety.approvals",
    "core.rules": "core.safety.rules",
    "core.rule_store": "core.safety.rule_store",
    "core.shell_commands": "core.safety.shell_commands",
    "core.trust": "core.safety.trust",
    "core.checkout_programs": "core.safety.checkout_programs",
    "core.bash_line": "core.safety.bash_line",
    "core.shell_programs": "core.safety.shell_programs",
    "core.rule_judge": "core.safety.rule_judge",
    "core.git_location": "core.workspace.git_location",
    "core.login_environment": "core.config.login_environment",
    "core.program_locations": "core.config.program_locations",
    "core.recent_projects": "core.config.recent_projects",
    "core.redaction": "core.safety.redaction",
    "core.secrets": "core.safety.secrets",
    "core.environment": "core.safety.environment",
    "core.nesting": "core.safety.nesting",
    "core.step_shells": "core.safety.step_shells",
    "core.tools.sandbox": "core.safety.sandbox",
    # tools: the tools an agent calls and the processes they start
    "core.process_tree": "core.tools.process_tree",
    "core.approval_describe": "core.tools.approval_describe",
    # backends: the agent loops Baton drives
    "core.steering": "core.backends.steering",
    # record: a run as it is recorded
    "core.run_state": "core.record.run_state",
    "core.runs": "core.record.run_files",
    "core.publisher": "core.record.publisher",
    "core.run_recording": "core.record.run_recording",
    "core.run_names": "core.record.run_names",
    "core.text_buffer": "core.record.text_buffer",
    "core.liveness": "core.record.liveness",
    # run: starting, driving and following up a run
    "core.runner": "core.run.runner",
    "core.run_request": "core.run.run_request",
    "core.run_preparation": "core.run.run_preparation",
    "core.step_execution": "core.run.step_execution",
    "core.handoff": "core.run.handoff",
    "core.continuation": "core.run.continuation",
    "core.rerun": "core.run.rerun",
    "core.review_comments": "core.run.review_comments",
    "core.pending_comments": "core.run.pending_comments",
    "core.steer_spool": "core.run.steer_spool",
    "core.usage_report": "core.history.usage_report",
    "core.attention": "core.run.attention",
    # history: runs once recorded
    "core.run_reading": "core.history.run_reading",
    "core.run_search": "core.history.run_search",
    "core.run_compare": "core.history.run_compare",
    "core.run_export": "core.history.run_export",
    "core.run_import": "core.history.run_import",
    "core.budget_estimate": "core.history.budget_estimate",
    "core.usage_rollup": "core.history.usage_rollup",
    "core.subagents": "core.history.subagents",
    # terminal: the baton command
    "core.commands": "core.terminal.commands",
    "core.terminal_approval": "core.terminal.approval_prompt",
    "core.terminal_budget": "core.terminal.budget_prompt",
    "core.terminal_output": "core.terminal.output",
}

# Each domain package and the docstring of its __init__.py (kept for an existing package that
# has none). Listed top to bottom, as in CORE_CONTRACT.
PACKAGES: dict[str, str] = {
    "terminal": """The ``baton`` command: one module per sub-command (``commands``) and what the
terminal shows — run output, approval prompts, budget questions. The entry point is
:mod:`core.cli`; the window is the other front end over the same packages below.""",
    "batch": """Batches: one preset over many inputs, every item an ordinary run grouped under a
batch id, run here or on a Ray cluster through one executor seam.""",
    "history": """Runs once recorded: reading a run file back into its state, searching and
comparing runs, exporting them as Markdown, importing pi and Claude Code transcripts, what a
run cost per agent and sub-agent, and what a preset's next run is likely to cost.""",
    "run": """Starting and driving a run: the request (mode, steps, options), its preparation
(agents, models, trust, worktrees), the runner that takes it step by step with budgets,
approvals and steering, the follow-ups a finished run offers (continue, re-run, review), and
what of the runs in progress waits for the person.""",
    "record": """A run as it is recorded: the events folded into its state, the publisher that
sends each event to the run file, the index and the listeners, the run files and the
``runs.sqlite`` index, and the lock that says whether a run is still alive.""",
    "backends": """The agent loops Baton drives: its own OpenAI-compatible loop and the pi and
Claude Code CLIs, each turning its stream into Baton's events; the registry names them, and
the steering inbox carries a person's messages to a running step.""",
    "tools": """The tools an agent calls (read, write, edit, bash, grep, find, ls, document) and
the processes they start; how an approval describes a call before it runs.""",
    "safety": """What the model may do and see: approvals and the rules that ask for them, the
projects a person trusts, the bash sandbox, secrets kept out of tool environments, redaction
of what is recorded, and the limit on runs started from inside a step.""",
    "definitions": """Agents and presets: their files (Markdown with YAML frontmatter), catalogs,
parameters, structured output shapes, and the checks made before a launch.""",
    "documents": """Documents agents write and people edit: the SQLite store, its schema, full-text
search and each document's history.""",
    "workspace": """The folder a run works in: git, checkpoints of the working tree before and
after each step, restoring them, worktrees, patches, and what the editor remembers about a file
on disk.""",
    "config": """Where Baton keeps its files and how it writes them (paths, atomic writes,
bundled resources), the settings in ``config.yaml``, providers, models and their prices.""",
    "telemetry": """Runs as OpenTelemetry traces: whether export is on, trace ids derived from
the run, GenAI spans folded from the event stream, OTLP export (the ``otel`` extra, lazily).""",
    "model": """The vocabulary every other package shares: the typed events a run emits, the
errors a person is shown, and budgets (caps and usage). It imports no other part of Baton.""",
}

CORE_CONTRACT = """
[[tool.importlinter.contracts]]
# The core's domain packages, top to bottom: each may import the packages below it, never
# above; "|" marks siblings that may not import each other either.
name = "core domain packages in layers"
type = "layers"
containers = ["core"]
layers = [
    "terminal",
    "batch | history",
    "run",
    "record",
    "backends",
    "tools",
    "safety",
    "definitions | documents | workspace",
    "config",
    "model",
]
"""
CONTRACT_NAME = "core domain packages in layers"
CONTRACT_AFTER = "\n[tool.mypy]\n"

KEPT_AT_TOP = {"__init__.py", "cli.py"}
"""Files that stay at ``core/``'s top level."""
PYTHON_ROOTS = ("core", "gui", "tests", "benchmarks", "packaging", "docs")
TEXT_FILES = ("pyproject.toml", "mkdocs.yml", ".ci/run", "README.md")
TEXT_SUFFIXES = (".md", ".yml", ".yaml", ".toml")
LINE_LENGTH = 100
UNTOUCHED = {Path("tests/test_restructure_core.py")}
"""Files whose old names are the point (the script's own test), left as they are."""


class Refused(Exception):
    """The tree is not in a state the script can act on; the message says what to do."""


SUBPACKAGES = {"core.commands", "core.run_import"}
"""The mapped names that are folders (moved whole); every other mapped name is a module."""


def module_path(name: str, package: bool) -> Path:
    """``core.a.b`` → the folder ``core/a/b`` (a package) or the file ``core/a/b.py``."""
    folder = Path(*name.split("."))
    return folder if package else folder.with_suffix(".py")


def source(old: str) -> Path:
    return module_path(old, old in SUBPACKAGES)


def target(old: str) -> Path:
    return module_path(MAPPING[old], old in SUBPACKAGES)


# -- checking ------------------------------------------------------------------------------


def unmapped(core: Path) -> list[str]:
    """Flat modules and subpackages of ``core/`` that neither the mapping nor the packages
    name: each needs a line in :data:`MAPPING` (or, for a new domain package, :data:`PACKAGES`)."""
    mapped = {old.split(".")[1] for old in MAPPING if old.count(".") == 1}
    found = []
    for entry in sorted(core.iterdir()):
        if entry.name.startswith((".", "__pycache__")):
            continue
        if entry.is_file() and entry.suffix == ".py":
            if entry.name not in KEPT_AT_TOP and entry.stem not in mapped:
                found.append(f"core/{entry.name}")
        elif (
            entry.is_dir()
            and (entry / "__init__.py").exists()
            and entry.name not in mapped | PACKAGES.keys()
        ):
            found.append(f"core/{entry.name}/")
    return found


def state(core: Path) -> str:
    """``"todo"`` (nothing moved yet) or ``"done"`` (no mapped module left where it was); a
    module the mapping does not name, a mapped one that is gone or a half-done move is refused
    with the list."""
    problems = [f"  not mapped: {name}" for name in unmapped(core)] + relative_imports(core)
    there = [old for old in MAPPING if source(old).exists()]
    if not there:  # moved: what the packages hold since is theirs, only no flat module again
        if problems:
            raise Refused(
                "core/ holds domain packages only (and cli.py); move each of these into the "
                "package it belongs to:\n" + "\n".join(problems)
            )
        return "done"
    problems += [
        f"  mapped but missing: {old} ({source(old)})" for old in MAPPING if old not in there
    ]
    problems += [
        f"  target already there: {MAPPING[old]} ({target(old)})"
        for old in there
        if target(old).exists()
    ]
    if problems:
        raise Refused(
            "core/ does not match scripts/restructure_core.py's MAPPING:\n"
            + "\n".join(problems)
            + "\nAdd a line to MAPPING for each module not mapped (old name → its package), "
            "remove the lines of modules that are gone, then run again."
        )
    return "todo"


def relative_imports(core: Path) -> list[str]:
    """``from .x import y`` in core/: it would point elsewhere once its file moved, and the
    rewrite handles absolute names only."""
    found = []
    for file in sorted(core.rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                found.append(f"  {file}:{node.lineno}: a relative import; make it absolute")
    return found


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Refused(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def check_clean() -> None:
    changed = git("status", "--porcelain", "--untracked-files=no").strip()
    if changed:
        raise Refused(f"--commit needs a clean work tree; commit or stash first:\n{changed}")


# -- moving --------------------------------------------------------------------------------


def move_all() -> None:
    for old in MAPPING:
        target(old).parent.mkdir(parents=True, exist_ok=True)
        git("mv", str(source(old)), str(target(old)))


def write_package_inits(core: Path) -> list[Path]:
    """Each domain package's ``__init__.py``: its docstring (an existing package's own
    docstring is kept)."""
    written = []
    for name, text in PACKAGES.items():
        init = core / name / "__init__.py"
        init.parent.mkdir(exist_ok=True)
        current = init.read_text(encoding="utf-8") if init.exists() else ""
        if ast.get_docstring(ast.parse(current)) is not None:
            continue
        init.write_text(f'"""{text}\n"""\n{current}', encoding="utf-8")
        written.append(init)
    return written


def add_contract(pyproject: Path) -> bool:
    text = pyproject.read_text(encoding="utf-8")
    if CONTRACT_NAME in text:
        return False
    if CONTRACT_AFTER not in text:
        raise Refused(f"pyproject.toml has no {CONTRACT_AFTER.strip()} to put the contract before")
    text = text.replace(CONTRACT_AFTER, CORE_CONTRACT + CONTRACT_AFTER, 1)
    pyproject.write_text(text, encoding="utf-8")
    return True


# -- rewriting -----------------------------------------------------------------------------


def dotted_pattern() -> re.Pattern[str]:
    """``core.x`` for every mapped name, longest first, not inside a longer dotted name."""
    names = sorted(MAPPING, key=len, reverse=True)
    return re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in names) + r")(?!\w)")


def path_pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    """``core/x.py`` (a module) or ``core/x`` (a subpackage) for every mapped name."""
    paths = {source(old).as_posix(): target(old).as_posix() for old in MAPPING}
    names = sorted(paths, key=len, reverse=True)
    return re.compile(r"(?<![\w/.])(" + "|".join(re.escape(n) for n in names) + r")(?![\w])"), paths


def rewrite_dotted(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda match: MAPPING[match.group(1)], text)


def rewrite_from_imports(text: str) -> str:
    """``from core import x`` and ``from core.tools import sandbox``: a name that is a moved
    module is imported from its new package (under its old name when the file was renamed)."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        if not any(f"{node.module}.{alias.name}" in MAPPING for alias in node.names):
            continue
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            new = MAPPING.get(f"{node.module}.{alias.name}")
            parent, name = new.rsplit(".", 1) if new else (node.module, alias.name)
            local = alias.asname or alias.name
            groups.setdefault(parent, []).append(name if local == name else f"{name} as {local}")
        start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        first, last = lines[start], lines[end]
        indent = first[: node.col_offset]
        after = last[node.end_col_offset or 0 :].strip()
        if indent.strip() or (after and not after.startswith("#")):
            raise Refused(f"an import shares its line with other code: {first.strip()}")
        comment = "".join(re.findall(r"#.*", "".join(lines[start : end + 1])))
        statements = [
            f"{indent}from {parent} import {', '.join(names)}" for parent, names in groups.items()
        ]
        if comment:
            statements[0] += f"  {comment.splitlines()[0]}"
        edits.append((start, end, "".join(line + "\n" for line in statements)))
    for start, end, replacement in sorted(edits, reverse=True):
        lines[start : end + 1] = [replacement]
    return "".join(lines)


def prose_lines(text: str) -> tuple[set[int], set[int]]:
    """The 0-based lines of triple-quoted strings (their first line only when it starts with
    the string: a docstring, not code), and the lines that are only a comment."""
    strings: set[int] = set()
    comments: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING and token.string.endswith(('"""', "'''")):
            alone = not token.line[: token.start[1]].strip()  # the line starts with it
            strings.update(range(token.start[0] - (1 if alone else 0), token.end[0]))
        elif token.type == tokenize.COMMENT and not token.line[: token.start[1]].strip():
            comments.add(token.start[0] - 1)
    return strings, comments


def wrap_long_prose(text: str, touched: set[int]) -> str:
    """Re-wrap the docstring and comment lines a longer module name pushed past the line
    length: the tail moves to a new line with the same indentation (a list item's text
    indentation inside a bullet)."""
    strings, comments = prose_lines(text)
    out: list[str] = []
    for number, line in enumerate(text.splitlines(keepends=True)):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if number not in touched or len(body) <= LINE_LENGTH:
            out.append(line)
            continue
        if number in comments:
            hang = body[: body.index("#")] + "# "
        elif number in strings:
            lead = body[: len(body) - len(body.lstrip())]
            hang = lead + ("  " if body.lstrip().startswith(("* ", "- ")) else "")
        else:
            out.append(line)
            continue
        pieces = []
        while len(body) > LINE_LENGTH:
            cut = body.rfind(" ", len(hang) + 1, LINE_LENGTH + 1)
            if cut <= len(hang.rstrip()):
                break
            pieces.append(body[:cut].rstrip())
            body = hang + body[cut + 1 :].lstrip()
        pieces.append(body)
        out.extend(piece + (ending or "\n") for piece in pieces[:-1])
        out.append(pieces[-1] + ending)
    return "".join(out)


def changed_lines(before: str, after: str) -> set[int]:
    """Lines of ``after`` that differ from ``before`` (a dotted rewrite keeps the line count)."""
    old = before.splitlines()
    return {i for i, line in enumerate(after.splitlines()) if i >= len(old) or old[i] != line}


def rewrite_python(path: Path, pattern: re.Pattern[str]) -> bool:
    before = path.read_text(encoding="utf-8")
    dotted = rewrite_dotted(before, pattern)
    after = rewrite_from_imports(wrap_long_prose(dotted, changed_lines(before, dotted)))
    if after == before:
        return False
    path.write_text(after, encoding="utf-8")
    return True


def rewrite_text(
    path: Path, pattern: re.Pattern[str], paths: re.Pattern[str], table: dict[str, str]
) -> bool:
    before = path.read_text(encoding="utf-8")
    after = paths.sub(lambda match: table[match.group(1)], rewrite_dotted(before, pattern))
    if after == before:
        return False
    path.write_text(after, encoding="utf-8")
    return True


def files_to_rewrite(script: Path) -> tuple[list[Path], list[Path]]:
    """Tracked Python files under :data:`PYTHON_ROOTS` (and the PyInstaller spec), and the
    text files that name modules or their paths; never this script, whose table names them."""
    tracked = [Path(name) for name in git("ls-files").splitlines()]
    python = [
        p
        for p in tracked
        if p.parts[0] in PYTHON_ROOTS and p.suffix in (".py", ".spec") and p.exists()
    ]
    text = [
        p
        for p in tracked
        if p.exists()
        and (str(p) in TEXT_FILES or (p.parts[0] == "docs" and p.suffix in TEXT_SUFFIXES))
    ]
    return [p for p in python if p.resolve() != script and p not in UNTOUCHED], text


def ruff(python: Sequence[Path]) -> None:
    """Sort the imports the rewrite changed and format (the split ``from`` imports)."""
    names = [str(p) for p in python]
    for command in (["check", "--fix", "--select", "I", "--quiet"], ["format", "--quiet"]):
        for chunk in chunks(names, 200):
            subprocess.run([ruff_binary(), *command, *chunk], check=False)


def ruff_binary() -> str:
    here = Path(sys.executable).parent / "ruff"
    return str(here) if here.exists() else "ruff"


def chunks(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def leftovers() -> str:
    """What ruff still finds (a long line in code or a one-line string, to fix by hand)."""
    done = subprocess.run(
        [ruff_binary(), "check", ".", "--output-format", "concise"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode else ""


# -- main ----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only check the mapping, no change")
    parser.add_argument("--commit", action="store_true", help="commit: moves only, then rewrites")
    args = parser.parse_args(argv)
    started = time.monotonic()
    script = Path(__file__).resolve()
    core = Path("core")
    try:
        if not (core / "__init__.py").is_file() or not Path("pyproject.toml").is_file():
            raise Refused("run from the repository root (core/ and pyproject.toml not found)")
        found = state(core)
        if found == "done":
            print("core/ is already in domain packages: nothing to do")
            return 0
        if args.check:
            print(f"every module of core/ is mapped ({len(MAPPING)} moves)")
            return 0
        if args.commit:
            check_clean()
        pattern = dotted_pattern()
        paths, table = path_pattern()
        move_all()
        if args.commit:
            git(
                "commit",
                "-q",
                "-m",
                "core: domain packages (moves only, by scripts/restructure_core.py)",
            )
        inits = write_package_inits(core)
        add_contract(Path("pyproject.toml"))
        python, text = files_to_rewrite(script)
        rewritten = [p for p in python if rewrite_python(p, pattern)]
        rewritten_text = [p for p in text if rewrite_text(p, pattern, paths, table)]
        ruff(rewritten + inits)
        if args.commit:
            git("add", "-A", "core", *map(str, rewritten + rewritten_text), "pyproject.toml")
            git(
                "commit",
                "-q",
                "-m",
                "core: references to the moved modules (by scripts/restructure_core.py)",
            )
    except Refused as refused:
        print(f"restructure_core: {refused}", file=sys.stderr)
        return 1
    top = sorted(p.name for p in core.iterdir() if p.name != "__pycache__")
    print(
        f"moved {len(MAPPING)} modules into {len(PACKAGES)} packages; rewrote "
        f"{len(rewritten)} Python and {len(rewritten_text)} other files in "
        f"{time.monotonic() - started:.1f} s\ncore/ now holds {len(top)} entries: {', '.join(top)}"
    )
    left = leftovers()
    if left:
        print(f"ruff still finds (fix by hand):\n{left}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
