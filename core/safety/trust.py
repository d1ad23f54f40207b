"""Trust in a project's own agent and preset files, the text that steers its models, and the
programs its CLI settings name.

A cloned repository can carry agent files that instruct a model to run commands, context files
(``AGENTS.md`` / ``CLAUDE.md``) and skills that are read into a model's prompt
(:mod:`core.definitions.project_context`), and settings that make Claude Code or pi run programs
themselves (hooks, helpers, MCP servers, extensions: :mod:`core.safety.checkout_programs`): none
of it may be used until the user has looked at it. Trust is stored per project folder together
with a fingerprint (SHA-256) of those files, so any change — a new agent, an edited prompt or
``AGENTS.md``, a new skill, a new hook — asks again.

A file that is a symbolic link leading out of the project (``AGENTS.md`` → ``~/.ssh/id_rsa``)
is fingerprinted as the link *and* its target's content, so retargeting it or changing the
target asks again; its text is never shown or kept (:func:`entry_text`), and the loaders refuse
to read such a context file or skill at all.

Records live in ``<data>/trust.json`` (written atomically); listing agents never needs trust,
running them does. Next to each record, ``<data>/trust/<key>.json`` keeps the text of the files
as they were when trusted, so that when they change the question can say *what* changed
(:meth:`TrustStore.changes`) instead of asking as if for the first time.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from core.config import paths
from core.config.atomic import atomic_write_text
from core.config.looks import looked_once, one_look, read_file
from core.definitions.agents import PROJECT_AGENT_DIRS
from core.definitions.presets import PROJECT_PRESET_DIR
from core.definitions.project_context import (
    CLI_CONTEXT_NAMES,
    CONTEXT_NAMES,
    context_files_in,
    repository_root,
    skill_files,
)
from core.definitions.skills import PROJECT_SKILL_DIRS
from core.safety.checkout_programs import program_files


class TrustRecord(BaseModel):
    folder: str
    fingerprint: str
    trusted_at: str


SNAPSHOT_FILE_LIMIT = 1_000_000
"""Bytes of one file kept for showing changes (agent files are refused past 1 MB anyway)."""

ProjectFileKind = Literal["agent", "preset", "context", "skill", "settings"]


class ChangedWhileAsked(Exception):
    """The project's files changed between the trust question and its answer."""

    def __init__(self, root: Path) -> None:
        self.root = root
        super().__init__(
            f"the files of {root} changed while you were looking at them: nothing was trusted"
        )


@dataclass(frozen=True)
class TrustChange:
    """One project file that differs from what was trusted."""

    path: str
    """Relative to the project folder, with forward slashes."""
    kind: Literal["added", "changed", "removed"]
    diff: str
    """A unified diff from the trusted text to the current one."""


def project_files(root: Path) -> list[Path]:
    """The files whose content decides what a project's agents can do, what its models are
    told (context files, skills), and what its CLI settings would run."""
    files: list[Path] = []
    for sub, patterns in [(d, ("*.md",)) for d in PROJECT_AGENT_DIRS] + [
        (PROJECT_PRESET_DIR, ("*.yaml", "*.yml"))
    ]:
        folder = root / sub
        if folder.is_dir():
            for pattern in patterns:
                files.extend(sorted(p for p in folder.glob(pattern) if p.is_file()))
    return files + context_files_in(root) + skill_files(root) + program_files(root)


def file_kind(root: Path, path: Path) -> ProjectFileKind:
    """What one of :func:`project_files` is, for the trust question."""
    if path in program_files(root):
        return "settings"
    relative = file_name(root, path)
    if any(relative.startswith(f"{sub}/") or relative == sub for sub in PROJECT_SKILL_DIRS):
        return "skill"
    if relative.startswith(".claude/rules/") or (
        path.name in (*CONTEXT_NAMES, *CLI_CONTEXT_NAMES)
        and not any(relative.startswith(f"{sub}/") for sub in PROJECT_AGENT_DIRS)
    ):
        return "context"
    return "preset" if path.suffix in (".yaml", ".yml") else "agent"


def file_name(root: Path, path: Path) -> str:
    """Relative to the project folder, with forward slashes (``../AGENTS.md`` for a context
    file of the repository above a trusted subfolder)."""
    return Path(os.path.relpath(path, root)).as_posix()


def outside_link(root: Path, path: Path) -> str | None:
    """The target of a symbolic link that leads out of the project (or to a folder, or
    nowhere), None for anything else."""
    try:
        target = os.readlink(path)
    except OSError:
        return None  # not a link
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return target  # dangling, or a loop
    if real.is_file() and real.is_relative_to(repository_root(root).resolve()):
        return None
    return target


def entry_text(root: Path, path: Path) -> str:
    """The text of a project file as the trust question shows and keeps it; a symbolic link
    leading out of the project is shown as the link, its target never read for showing."""
    target = outside_link(root, path)
    if target is not None:
        digest = _content_digest(path).hex()[:12]  # a changed target shows as a change
        return (
            f"(a symbolic link to {target}, outside the project: its text is not shown; "
            f"content {digest})\n"
        )
    try:
        data = read_file(path, SNAPSHOT_FILE_LIMIT).data
    except OSError as error:
        return f"(cannot be read: {error.strerror or error})\n"
    return data.decode("utf-8", errors="replace")


def _content_digest(path: Path) -> bytes:
    """The file's bytes, hashed; read once per look, so the loaders parse the bytes hashed."""
    try:
        return hashlib.sha256(read_file(path).data).digest() if path.is_file() else b"not a file"
    except OSError:
        return b"unreadable"


def _texts(root: Path) -> dict[str, str]:
    return {file_name(root, file): entry_text(root, file) for file in project_files(root)}


def _diff(name: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}" if before else "/dev/null",
        tofile=f"b/{name}" if after else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def fingerprint(root: Path) -> str:
    """SHA-256 over the project files' names and contents (a link leading out: the link and
    its target's content, so a change at either end asks again); once per
    :func:`~core.config.looks.one_look`."""
    return looked_once("trust", root, _fingerprint)


def _fingerprint(root: Path) -> str:
    digest = hashlib.sha256()
    for file in project_files(root):
        digest.update(file_name(root, file).encode())
        digest.update(b"\0")
        target = outside_link(root, file)
        if target is not None:
            digest.update(f"link:{target}\0".encode())
        digest.update(_content_digest(file))
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
        return self.is_trusted_any((root,))

    def is_trusted_any(self, roots: Iterable[Path]) -> bool:
        """Whether any of ``roots`` is trusted as it is now; the store is read once (a batch
        asks for every step of every item)."""
        records = self._load()
        for root in dict.fromkeys(roots):
            record = records.get(str(root.resolve()))
            if record is not None and record.fingerprint == fingerprint(root):
                return True
        return False

    def trust(self, root: Path, shown: str | None = None) -> None:
        """Trust the project's files as they are now (one look: the fingerprint and the texts
        kept for later diffs are of the same bytes). ``shown``: the :func:`fingerprint` of
        what the person was shown; files changed since raise :class:`ChangedWhileAsked` and
        nothing is trusted — a question left open does not trust what it never showed."""
        with one_look():
            now = fingerprint(root)
            if shown is not None and now != shown:
                raise ChangedWhileAsked(root)
            texts = _texts(root)
        records = self._load()
        key = str(root.resolve())
        records[key] = TrustRecord(
            folder=key,
            fingerprint=now,
            trusted_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        snapshot = self._snapshot_path(root)
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(snapshot, json.dumps(texts, ensure_ascii=False))
        self._save(records)

    def revoke(self, root: Path | str) -> None:
        records = self._load()
        records.pop(str(Path(root).resolve()), None)
        self._snapshot_path(Path(root)).unlink(missing_ok=True)
        self._save(records)

    def records(self) -> list[TrustRecord]:
        return sorted(self._load().values(), key=lambda r: r.folder)
