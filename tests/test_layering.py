"""The core must never import Qt (DESIGN §1): checked statically and by importing it in a
process where PySide6 cannot be found."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"
QT_MODULES = ("PySide6", "shiboken6", "qasync", "PyQt5", "PyQt6", "gui")


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


def test_core_imports_without_qt_installed() -> None:
    blocker = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        f"        if name.split('.')[0] in {QT_MODULES[:4]!r}:\n"
        "            raise ImportError('Qt is blocked in this test: ' + name)\n"
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
