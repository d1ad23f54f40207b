"""The bundle carries the metadata of every runtime dependency, computed from pyproject.toml
(packaging/bundle_metadata.py): genai-prices read its own version from it at import, and the
bundle without it failed every step on Baton's own backend. These tests keep the computation
honest — whatever Baton imports must be inside it — so a new dependency cannot slip past."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _bundle_metadata() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bundle_metadata", ROOT / "packaging" / "bundle_metadata.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


IMPORT_EVERYTHING = """
import importlib, json, pkgutil, sys
import core, gui
for package in (core, gui):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name != "core.batch.ray_executor":  # the optional baton[ray] extra
            importlib.import_module(info.name)
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""
"""Run in a fresh interpreter: what other tests imported into this one is not Baton's."""


def test_every_distribution_baton_imports_is_in_the_computed_list() -> None:
    bundle_metadata = _bundle_metadata()
    computed = {
        bundle_metadata.canonical(n)
        for n in bundle_metadata.runtime_distributions(ROOT / "pyproject.toml")
    }
    assert {"genai-prices", "keyring", "pydantic", "httpx"} <= computed
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    # opentelemetry: the optional baton[otel] extra; where it is installed, the ACP SDK also
    # imports it on its own (it adds spans when it can), so a venv with the extra sees it.
    imported = set(json.loads(done.stdout.splitlines()[-1])) - TOLERATED - {"opentelemetry"}
    owners = metadata.packages_distributions()
    outside = {
        top: owners[top]
        for top in imported
        if top in owners
        # PySide6 is a folder both PySide6-Essentials and -Addons install into.
        and not any(bundle_metadata.canonical(dist) in computed for dist in owners[top])
    }
    assert outside == {}, f"imported but not a declared runtime dependency: {outside}"


TOLERATED = {
    # Baton's own packages.
    "core",
    "gui",
    "resources",
    # httpx imports its command line (click, rich) when they are installed and does without
    # them otherwise; the bundle leaves them out.
    "click",
    "rich",
    # The virtual environment's setuptools .pth hook, not Baton.
    "_distutils_hack",
}


def test_the_list_follows_pyproject_not_a_hand_list(tmp_path: Path) -> None:
    bundle_metadata = _bundle_metadata()
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\ndependencies = ["genai-prices>=0.0.1", "jsonschema"]\n',
        encoding="utf-8",
    )
    names = {bundle_metadata.canonical(n) for n in bundle_metadata.runtime_distributions(pyproject)}
    # Each one's own requirements come along (jsonschema needs referencing and rpds-py).
    assert {"genai-prices", "jsonschema", "referencing", "rpds-py"} <= names
    assert "pyside6-essentials" not in names
