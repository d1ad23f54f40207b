"""Which installed distributions the bundle must carry the metadata (``*.dist-info``) of.

Libraries read their own metadata at run time — ``importlib.metadata.version(...)`` for their
``__version__`` (genai-prices does), entry points for plugins — and PyInstaller copies only
code. A hand-kept list goes stale the day a dependency is added, so the list is computed: the
``dependencies`` of pyproject.toml and, recursively, the requirements of each installed
distribution (markers evaluated for this platform, extras followed only where a requirement
asks for them). Loaded by path (``packaging/`` would shadow PyPA's ``packaging``) from
baton.spec and from the tests.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement


def canonical(name: str) -> str:
    """PEP 503 normalised name: ``PySide6_Essentials`` and ``pyside6-essentials`` are one."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_requirements(pyproject: Path) -> list[Requirement]:
    """The ``[project] dependencies`` of ``pyproject`` (the source tree being built, not the
    possibly stale metadata of an installed copy)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return [Requirement(text) for text in project.get("dependencies", [])]


def _applies(requirement: Requirement, extras: frozenset[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras or {""})


def runtime_distributions(pyproject: Path) -> list[str]:
    """The installed distribution names (as installed, sorted) that the app needs at run time.

    Raises ``PackageNotFoundError`` when one is not installed: a build must not silently
    leave a dependency out."""
    found: dict[str, str] = {}
    pending: list[tuple[Requirement, frozenset[str]]] = [
        (requirement, frozenset()) for requirement in declared_requirements(pyproject)
    ]
    seen_extras: dict[str, set[str]] = {}
    while pending:
        requirement, context = pending.pop()
        if not _applies(requirement, context):
            continue
        key = canonical(requirement.name)
        wanted = set(requirement.extras)
        if key in found and wanted <= seen_extras[key]:
            continue
        distribution = metadata.distribution(requirement.name)
        found[key] = distribution.metadata["Name"]
        seen_extras.setdefault(key, set()).update(wanted)
        extras = frozenset(seen_extras[key])
        for text in distribution.requires or []:
            pending.append((Requirement(text), extras))
    return sorted(found.values(), key=canonical)
