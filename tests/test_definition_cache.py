"""Re-discovery with a parse cache: only files changed since the last read are parsed again."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import core.definitions.agents
import core.definitions.presets
from core.definitions.agents import AgentDefinition, AgentFileError, discover_agents
from core.definitions.cache import ParseCache
from core.definitions.presets import Preset, PresetError, discover_presets

AN_HOUR_AGO_NS = 3_600 * 1_000_000_000


def agent_file(folder: Path, name: str, description: str = "Does things") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody\n", "utf-8")
    return path


def settle(*files: Path) -> None:
    """Date files an hour back, as files written long before the app reads them are."""
    for file in files:
        stat = file.stat()
        os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns - AN_HOUR_AGO_NS))


def count_parses(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, under: Path) -> list[str]:
    """Record each parse of a file under ``under`` by ``module.name``."""
    parsed: list[str] = []
    original: Callable[..., Any] = getattr(module, name)

    def recording(text: str, **kwargs: Any) -> Any:
        if str(kwargs.get("path") or "").startswith(str(under)):
            parsed.append(Path(kwargs["path"]).name)
        return original(text, **kwargs)

    monkeypatch.setattr(module, name, recording)
    return parsed


def test_a_changed_agent_file_is_the_only_one_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / ".claude" / "agents"
    files = [agent_file(folder, f"agent{n}") for n in range(5)]
    broken = folder / "broken.md"
    broken.write_text("---\nname: broken\n---\n", encoding="utf-8")  # no description
    settle(*files, broken)
    parsed = count_parses(monkeypatch, core.definitions.agents, "parse_agent_text", tmp_path)
    cache: ParseCache[AgentDefinition] = ParseCache((AgentFileError,))

    first = discover_agents(tmp_path, "project", cache)
    assert sorted(parsed) == sorted(["broken.md", *(f.name for f in files)])
    parsed.clear()

    again = discover_agents(tmp_path, "project", cache)
    assert parsed == []
    assert again.names() == first.names()
    # A broken file stays reported without being parsed again.
    assert [d.message for d in again.diagnostics] == [d.message for d in first.diagnostics]
    assert "missing required field 'description'" in again.diagnostics[0].message

    agent_file(folder, "agent2", "Changed on disk")
    changed = discover_agents(tmp_path, "project", cache)
    assert parsed == ["agent2.md"]
    agent = changed.get("agent2")
    assert agent is not None and agent.description == "Changed on disk"


def test_a_same_size_rewrite_right_after_a_read_is_noticed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """File times are coarse: an outcome read within a tick of the write is not trusted."""
    folder = tmp_path / ".pi" / "agents"
    path = agent_file(folder, "quick", "first")
    written = path.stat()
    cache: ParseCache[AgentDefinition] = ParseCache((AgentFileError,))
    assert discover_agents(tmp_path, "project", cache).agents[0].description == "first"
    agent_file(folder, "quick", "again")  # same size, same inode...
    os.utime(path, ns=(written.st_atime_ns, written.st_mtime_ns))  # ...within the same tick
    assert discover_agents(tmp_path, "project", cache).agents[0].description == "again"


def test_deleted_and_replaced_files_are_not_served_from_the_cache(tmp_path: Path) -> None:
    folder = tmp_path / ".baton" / "agents"
    keep, gone = agent_file(folder, "keep"), agent_file(folder, "gone")
    settle(keep, gone)
    cache: ParseCache[AgentDefinition] = ParseCache((AgentFileError,))
    found = discover_agents(tmp_path, "project", cache).project_agents
    assert [a.name for a in found] == ["gone", "keep"]
    gone.unlink()
    # An atomic save of as many bytes, stamped with the old time: only the inode differs.
    replacement = folder / "keep.tmp"
    replacement.write_text(keep.read_text("utf-8").replace("keep", "kept"), "utf-8")
    old = keep.stat()
    os.utime(replacement, ns=(old.st_atime_ns, old.st_mtime_ns))
    replacement.replace(keep)
    found = discover_agents(tmp_path, "project", cache).project_agents
    assert [a.name for a in found] == ["kept"]


def test_a_changed_preset_file_is_the_only_one_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / ".baton" / "presets"
    folder.mkdir(parents=True)
    files = []
    for n in range(4):
        path = folder / f"p{n}.yaml"
        path.write_text(f"name: p{n}\nsteps:\n  - agent: worker\n    task: do {n}\n", "utf-8")
        files.append(path)
    settle(*files)
    parsed = count_parses(monkeypatch, core.definitions.presets, "parse_preset_text", tmp_path)
    cache: ParseCache[Preset] = ParseCache((PresetError,))

    discover_presets(tmp_path, "project", cache)
    assert sorted(parsed) == ["p0.yaml", "p1.yaml", "p2.yaml", "p3.yaml"]
    parsed.clear()
    discover_presets(tmp_path, "project", cache)
    assert parsed == []

    files[3].write_text("name: p3\nsteps: []\n", encoding="utf-8")
    catalog = discover_presets(tmp_path, "project", cache)
    assert parsed == ["p3.yaml"]
    assert catalog.problem_for("p3") is not None
    assert [p.name for p in catalog.project_presets] == ["p0", "p1", "p2"]
