"""Where "always allow in this project" rules live, and importing Claude Code's.

Rules are kept per project folder in ``<config>/rules.json`` — Baton's config folder, which
file tools refuse and bash's sandbox hides, so nothing an agent writes can widen what it may
do. That is also why a project's ``.claude/settings.json`` is never read on its own: a
person *imports* its ``permissions`` (allow / ask / deny) once, from Settings or
``baton rules import``, and can read them in Settings ▸ Rules before they apply.

The project of a working folder is the nearest folder upwards holding ``.git``, ``.claude``,
``.baton`` or ``.pi`` (never the home folder), else the folder itself; an agent creating such a
marker deeper down only moves itself to a project with no rules.

Writes are atomic (temp + fsync + rename); a file that cannot be read counts as no rules.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from core.config import paths
from core.config.atomic import atomic_write_text
from core.definitions.agents import find_project_root
from core.safety.rules import RULE_KINDS, Rule, RuleError, RuleKind, RuleSet

PROJECT_MARKERS = (".git", ".claude", ".baton", ".pi")
CLAUDE_SETTINGS = (Path(".claude") / "settings.json", Path(".claude") / "settings.local.json")


def project_of(cwd: Path) -> Path:
    """The folder whose rules apply to a step working in ``cwd``."""
    return find_project_root(cwd, PROJECT_MARKERS) or cwd.resolve()


class RuleStore:
    """Read and change the rules of every project (one JSON file, written atomically)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.config_path() / "rules.json"  # its folder made on saving

    def _load(self) -> dict[str, dict[str, list[str]]]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        if not isinstance(raw, dict):
            return {}
        return {
            str(folder): {k: [str(r) for r in lists.get(k, [])] for k in RULE_KINDS}
            for folder, lists in raw.items()
            if isinstance(lists, dict)
        }

    def _save(self, data: dict[str, dict[str, list[str]]]) -> None:
        kept = {folder: lists for folder, lists in sorted(data.items()) if any(lists.values())}
        paths.made_folder(self.path.parent)
        atomic_write_text(self.path, json.dumps(kept, indent=2, ensure_ascii=False) + "\n")

    def projects(self) -> dict[Path, RuleSet]:
        """Every project with rules; a rule that no longer parses is left out."""
        return {Path(folder): _parse(Path(folder), lists) for folder, lists in self._load().items()}

    def for_project(self, root: Path) -> RuleSet:
        return _parse(root, self._load().get(str(root), {}))

    def for_folder(self, cwd: Path) -> RuleSet:
        """The rules that apply to a step working in ``cwd``."""
        return self.for_project(project_of(cwd))

    def add(self, root: Path, kind: RuleKind, text: str) -> Rule:
        """Add a rule (parsed first: raises :class:`RuleError`); adding it twice is a no-op."""
        rule = Rule.parse(text)
        data = self._load()
        lists = data.setdefault(str(root), {k: [] for k in RULE_KINDS})
        if str(rule) not in lists[kind]:
            lists[kind].append(str(rule))
        self._save(data)
        return rule

    def set_project(self, root: Path, texts: Mapping[str, Iterable[str]]) -> None:
        """Replace the rules of one project (Settings ▸ Rules saves this way); every rule is
        parsed first, so a bad one raises :class:`RuleError` and nothing is written."""
        lists: dict[str, list[str]] = {
            kind: [str(Rule.parse(t)) for t in texts.get(kind, ())] for kind in RULE_KINDS
        }
        data = self._load()
        data[str(root)] = lists
        self._save(data)

    def import_claude(self, root: Path) -> dict[str, list[str]]:
        """Copy the project's Claude Code permissions into Baton's rules; returns what was
        added per kind (see :func:`read_claude_permissions`)."""
        found = read_claude_permissions(root)
        data = self._load()
        lists = data.setdefault(str(root), {k: [] for k in RULE_KINDS})
        added: dict[str, list[str]] = {k: [] for k in RULE_KINDS}
        for kind in RULE_KINDS:
            for text in found[kind]:
                if text not in lists[kind]:
                    lists[kind].append(text)
                    added[kind].append(text)
        if any(added.values()):
            self._save(data)
        return added


def read_claude_permissions(root: Path) -> dict[str, list[str]]:
    """The ``permissions`` (allow / ask / deny) of ``root/.claude/settings.json`` and
    ``settings.local.json``, parsed. Raises :class:`RuleError` naming the file and the rule
    when a file or a rule cannot be read, so an import is all or nothing."""
    found: dict[str, list[str]] = {k: [] for k in RULE_KINDS}
    for relative in CLAUDE_SETTINGS:
        file = root / relative
        if not file.is_file():
            continue
        try:
            settings = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RuleError(f"{file}: {error}") from None
        permissions = settings.get("permissions") if isinstance(settings, dict) else None
        if not isinstance(permissions, dict):
            continue
        for kind in RULE_KINDS:
            for text in permissions.get(kind) or []:
                try:
                    rule = str(Rule.parse(str(text)))
                except RuleError as error:
                    raise RuleError(f"{file}: {error}") from None
                if rule not in found[kind]:
                    found[kind].append(rule)
    return found


def _parse(root: Path, lists: dict[str, list[str]]) -> RuleSet:
    rules = RuleSet(root)
    for kind in RULE_KINDS:
        for text in lists.get(kind, []):
            try:
                rules.rules[kind].append(Rule.parse(text))
            except RuleError:
                continue
    return rules
