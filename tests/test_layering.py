"""The core must never import Qt: checked statically and by importing it in a process where
PySide6 cannot be found. The same process cannot find the optional extras either (Ray): every
core module must import on a machine with only the required dependencies, as a fresh clone
installed with ``.[test]`` has."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
QT_MODULES = ("PySide6", "shiboken6", "qasync", "PyQt5", "PyQt6", "gui")


def optional_modules() -> tuple[str, ...]:
    """The top-level modules of pyproject's optional extras (the test tools aside): a core
    module may use them only by importing them where it needs them."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    names = {
        re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("-", "_")
        for extra, requirements in extras.items()
        if extra != "test"
        for requirement in requirements
    }
    # The OpenTelemetry distributions (opentelemetry-sdk, -exporter-…) share one package.
    names = {"opentelemetry" if n.startswith("opentelemetry_") else n for n in names}
    return tuple(sorted(names))


def test_the_optional_extras_are_known() -> None:
    assert {"ray", "opentelemetry"} <= set(optional_modules())


def test_no_module_in_core_imports_qt_or_gui() -> None:
    offenders = []
    for file in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            offenders += [
                f"{file.relative_to(CORE)}:{node.lineno} {name}"
                for name in names
                if name.split(".")[0] in QT_MODULES
            ]
    assert offenders == []


def test_core_imports_without_qt_or_the_extras_installed() -> None:
    blocked = QT_MODULES[:4] + optional_modules()
    blocker = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        f"        if name.split('.')[0] in {blocked!r}:\n"
        "            raise ModuleNotFoundError('blocked in this test: ' + name, name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import pkgutil, importlib, core\n"
        "for m in pkgutil.walk_packages(core.__path__, 'core.'):\n"
        "    importlib.import_module(m.name)\n"
        "print('ok')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", blocker],
        capture_output=True,
        text=True,
        cwd=CORE.parent,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
