"""scripts/restructure_core.py, the move of core/ into domain packages: every module of core/
is mapped (so a module added without its line fails here, not when the move is run), and the
rewrites it makes are the ones the move needs.

The script leaves this file as it is (its old module names are the point), so these tests hold
before and after the move.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "restructure_core.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("restructure_core", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_module_of_core_is_mapped_or_already_moved() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_an_unmapped_module_is_refused_by_name(script: ModuleType, tmp_path: Path) -> None:
    core = tmp_path / "core"
    core.mkdir()
    for name in ("__init__.py", "cli.py", "events.py", "brand_new.py"):
        (core / name).write_text("")
    (core / "extras").mkdir()
    (core / "extras" / "__init__.py").write_text("")
    assert script.unmapped(core) == ["core/brand_new.py", "core/extras/"]


def test_from_core_imports_are_split_by_package(script: ModuleType) -> None:
    source = (
        "def f():\n"
        "    from core import __version__, paths, runs as index  # why\n"
        "from core.tools import bash, sandbox\n"
        "from core import documents_search\n"
    )
    assert script.rewrite_from_imports(source) == (
        "def f():\n"
        "    from core import __version__  # why\n"
        "    from core.config import paths\n"
        "    from core.record import run_files as index\n"
        "from core.tools import bash\n"
        "from core.safety import sandbox\n"
        "from core.documents import search as documents_search\n"
    )


def test_dotted_names_are_rewritten_once_and_whole(script: ModuleType) -> None:
    pattern = script.dotted_pattern()
    text = (
        'monkeypatch.setattr("core.runs.RunIndex", x)  # core.runs_view and gui.core.runs stay\n'
        "from core.documents import DocumentStore; import core.commands.run\n"
    )
    assert script.rewrite_dotted(text, pattern) == (
        'monkeypatch.setattr("core.record.run_files.RunIndex", x)'
        "  # core.runs_view and gui.core.runs stay\n"
        "from core.documents.store import DocumentStore; import core.terminal.commands.run\n"
    )


def test_a_docstring_line_pushed_past_the_length_is_wrapped(script: ModuleType) -> None:
    words = " ".join(["word"] * 22)
    source = f'def f():\n    """{words} :mod:`core.x`."""\n    # {words} core.y and more\n'
    wrapped = script.wrap_long_prose(source, {1, 2})
    assert all(len(line) <= 100 for line in wrapped.splitlines())
    assert [w for w in wrapped.split() if w != "#"] == [w for w in source.split() if w != "#"]
    assert len(wrapped.splitlines()) == 5
    assert wrapped.splitlines()[4].startswith("    # ")
    compile(wrapped, "wrapped", "exec")
