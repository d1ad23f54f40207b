"""Trust in a project's own agent and preset files (DESIGN §6).

A cloned repository can carry agent files that instruct a model to run commands: they must not
run until the user has looked at them. Trust is stored per project folder together with a
fingerprint (SHA-256) of those files, so any change — a new agent, an edited prompt, a new
tool — asks again.

Records live in ``<data>/trust.json`` (written atomically); listing agents never needs trust,
running them does.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from core import paths
from core.agents import PROJECT_AGENT_DIRS
from core.atomic import atomic_write_text
from core.errors import RunError
from core.presets import PROJECT_PRESET_DIR


class TrustRecord(BaseModel):
    folder: str
    fingerprint: str
    trusted_at: str


class UntrustedProjectError(RunError):
    """A run would use a project's agents or presets that the user has not trusted."""

    def __init__(self, root: Path, files: list[Path]) -> None:
        self.root = root
        self.files = files
        super().__init__(
            f"the project {root} has its own agent files that you have not trusted yet "
            f"({len(files)} file{'s' if len(files) != 1 else ''}); review them, then trust the "
            "project in the window, or run again with --trust-project "
            "(or --scope user to run without them)"
        )


def project_files(root: Path) -> list[Path]:
    """The files whose content decides what a project's agents can do."""
    files: list[Path] = []
    for sub, patterns in [(d, ("*.md",)) for d in PROJECT_AGENT_DIRS] + [
        (PROJECT_PRESET_DIR, ("*.yaml", "*.yml"))
    ]:
        folder = root / sub
        if folder.is_dir():
            for pattern in patterns:
                files.extend(sorted(p for p in folder.glob(pattern) if p.is_file()))
    return files


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
        self._save(records)

    def revoke(self, root: Path | str) -> None:
        records = self._load()
        records.pop(str(Path(root).resolve()), None)
        self._save(records)

    def records(self) -> list[TrustRecord]:
        return sorted(self._load().values(), key=lambda r: r.folder)
