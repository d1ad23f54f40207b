"""The documentation stays true to the program: the generated command-line reference names every
command, the README stays a front door, and the site builds with every link resolving."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from docs import cli_reference

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_cli_reference_is_what_the_parsers_say() -> None:
    committed = cli_reference.PAGE.read_text(encoding="utf-8")
    assert committed == cli_reference.render(), (
        "docs/reference/cli.md is out of date: run python -m docs.cli_reference"
    )


def test_every_command_has_an_entry_in_the_reference() -> None:
    page = cli_reference.PAGE.read_text(encoding="utf-8")
    headings = {
        line.split("`")[1] for line in page.splitlines() if line.startswith("#") and "`" in line
    }
    missing = [path for path in cli_reference.command_paths() if path not in headings]
    assert not missing, f"commands without a reference entry: {missing}"
    assert {"baton run", "baton runs diff", "baton docs search", "baton batch"} <= headings


def test_a_new_command_without_an_entry_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from core import cli

    original = cli.build_parser

    def with_one_more() -> object:
        parser = original()
        commands = next(a for a in parser._actions if a.dest == "command")
        commands.add_parser("brand-new", help="a command nobody documented")  # type: ignore[attr-defined]
        return parser

    monkeypatch.setattr(cli, "build_parser", with_one_more)
    assert "baton brand-new" in cli_reference.command_paths()
    assert cli_reference.main(["--check"]) == 1


def test_the_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) <= 12 * 1024
    for page in ("docs/install.md", "docs/architecture.md", "docs/reference/cli.md"):
        assert f"({page})" in readme
        assert (ROOT / page).is_file()


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None,
    reason="the docs extra is not installed (pip install -e '.[docs]'); .ci/run builds the site",
)
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
