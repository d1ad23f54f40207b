"""Trust in a project's own agent and preset files, and the programs its CLI settings name.

A cloned repository can carry agent files that instruct a model to run commands, and settings
that make Claude Code or pi run programs themselves (hooks, helpers, MCP servers, extensions:
:mod:`core.safety.checkout_programs`): none of it may run until the user has looked at it. Trust is
stored per project folder together with a fingerprint (SHA-256) of those files, so any
change — a new agent, an edited prompt, a new tool, a new hook — asks again.

Records live in ``<data>/trust.json`` (written atomically); listing agents never needs trust,
running them does. Next to each record, ``<data>/trust/<key>.json`` keeps the text of the files
as they were when trusted, so that when they change the question can say *what* changed
(:meth:`TrustStore.changes`) instead of asking as if for the first time.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from core.config import paths
from core.config.atomic import atomic_write_text
from core.definitions.agents import PROJECT_AGENT_DIRS
from core.definitions.presets import PROJECT_PRESET_DIR
from core.model.errors import RunError
from core.safety.checkout_programs import checkout_programs, program_files


class TrustRecord(BaseModel):
    folder: str
    fingerprint: str
    trusted_at: str


SNAPSHOT_FILE_LIMIT = 1_000_000
"""Bytes of one file kept for showing changes (agent files are refused past 1 MB anyway)."""


@dataclass(frozen=True)
class TrustChange:
    """One project file that differs from what was trusted."""

    path: str
    """Relative to the project folder, with forward slashes."""
    kind: Literal["added", "changed", "removed"]
    diff: str
    """A unified diff from the trusted text to the current one."""


class UntrustedProjectError(RunError):
    """A run would use a project's agents or presets that the user has not trusted."""

    def __init__(self, root: Path, files: list[Path]) -> None:
        self.root = root
        self.files = files
        self.programs = checkout_programs(root)
        """What the checkout's CLI settings would run: the terminal lists them too."""
        agent_files = len(files) > len(program_files(root))
        what = "its own agent files" if agent_files else "settings that run programs"
        message = (
            f"the project {root} has {what} that you have not trusted yet "
            f"({len(files)} file{'s' if len(files) != 1 else ''}); review them, then trust the "
            "project in the window, or run again with --trust-project "
            "(or --scope user to run without them)"
        )
        if self.programs:
            lines = "\n".join(f"  {program.line()}" for program in self.programs)
            message += f"\nprograms the project's settings would run:\n{lines}"
        super().__init__(message)


def project_files(root: Path) -> list[Path]:
    """The files whose content decides what a project's agents can do, and what its CLI
    settings would run."""
    files: list[Path] = []
    for sub, patterns in [(d, ("*.md",)) for d in PROJECT_AGENT_DIRS] + [
        (PROJECT_PRESET_DIR, ("*.yaml", "*.yml"))
    ]:
        folder = root / sub
        if folder.is_dir():
            for pattern in patterns:
                files.extend(sorted(p for p in folder.glob(pattern) if p.is_file()))
    return files + program_files(root)


def _texts(root: Path) -> dict[str, str]:
    texts: dict[str, str] = {}
    for file in project_files(root):
        try:
            data = file.read_bytes()[:SNAPSHOT_FILE_LIMIT]
        except OSError:
            continue
        texts[file.relative_to(root).as_posix()] = data.decode("utf-8", errors="replace")
    return texts


def _diff(name: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}" if before else "/dev/null",
        tofile=f"b/{name}" if after else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def fingerprint(root: Path) -> str:
    digest = hashlib.sha256()
    for file in project_files(root):
        digest.update(file.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


class TrustStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / "trust.json"

    def _load(self) -> dict[str, TrustRecord]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return {key: TrustRecord.model_validate(value) for key, value in raw.items()}

    def _save(self, records: dict[str, TrustRecord]) -> None:
        data = {key: record.model_dump() for key, record in records.items()}
        atomic_write_text(self.path, json.dumps(data, indent=2, ensure_ascii=False))

    def _snapshot_path(self, root: Path) -> Path:
        key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]
        return self.path.parent / "trust" / f"{key}.json"

    def record(self, root: Path) -> TrustRecord | None:
        """The record of an earlier trust in ``root``, whether or not the files changed since."""
        return self._load().get(str(root.resolve()))

    def changes(self, root: Path) -> list[TrustChange]:
        """What differs from the files as they were trusted (empty: never trusted, or no
        snapshot kept — trust given by an older Baton)."""
        if self.record(root) is None:
            return []
        try:
            before: dict[str, str] = json.loads(
                self._snapshot_path(root).read_text(encoding="utf-8")
            )
        except (OSError, ValueError):
            return []
        after = _texts(root)
        changes: list[TrustChange] = []
        for name in sorted(before.keys() | after.keys()):
            old, new = before.get(name), after.get(name)
            if old == new:
                continue
            kind: Literal["added", "changed", "removed"] = (
                "added" if old is None else "removed" if new is None else "changed"
            )
            changes.append(TrustChange(name, kind, _diff(name, old or "", new or "")))
        return changes

    def is_trusted(self, root: Path) -> bool:
        record = self._load().get(str(root.resolve()))
        return record is not None and record.fingerprint == fingerprint(root)

    def trust(self, root: Path) -> None:
        records = self._load()
        key = str(root.resolve())
        records[key] = TrustRecord(
            folder=key,
            fingerprint=fingerprint(root),
            trusted_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        snapshot = self._snapshot_path(root)
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(snapshot, json.dumps(_texts(root), ensure_ascii=False))
        self._save(records)

    def revoke(self, root: Path | str) -> None:
        records = self._load()
        records.pop(str(Path(root).resolve()), None)
        self._snapshot_path(Path(root)).unlink(missing_ok=True)
        self._save(records)

    def records(self) -> list[TrustRecord]:
        return sorted(self._load().values(), key=lambda r: r.folder)
