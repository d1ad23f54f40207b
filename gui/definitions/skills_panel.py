"""The "Skills" list under the agents: every Agent Skill Baton found (the user's, and the
project's, which run only once the project is trusted), so a person can see what an agent's
``skills:`` may name and what each skill says it is for (architecture: "File formats").

Its problems (a ``SKILL.md`` without a description, broken YAML) join the Problems panel,
where a double-click opens the file at the line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFrame, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from gui.widgets.plain_text import plain_tip

if TYPE_CHECKING:  # the skills model is read on the worker thread, not on the start-up path
    from core.definitions.skills import SkillCatalog

SOURCE_NOTES = {"user": "", "project": " (project: used once the project is trusted)"}
MAX_ROWS = 5
"""Rows shown before the list scrolls: the agents above it keep most of the height."""


class SkillsPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SkillsPanel")
        self.title = QLabel("Skills")
        self.title.setObjectName("Secondary")
        self.title.setContentsMargins(15, 8, 8, 2)
        self.list = QListWidget()
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        self.list.setStyleSheet("QListWidget { background: transparent; padding-left: 11px; }")
        self.list.setWordWrap(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title)
        layout.addWidget(self.list)
        self.hide()

    def set_skills(self, catalog: SkillCatalog) -> None:
        """Show ``catalog``'s skills by name; hidden when there are none."""
        self.list.clear()
        skills = sorted(catalog.skills.values(), key=lambda s: s.name)
        for skill in skills:
            item = QListWidgetItem(f"{skill.name} — {skill.description}")
            item.setToolTip(plain_tip(f"{skill.file}{SOURCE_NOTES.get(skill.source, '')}"))
            self.list.addItem(item)
        self.title.setText(f"Skills ({len(skills)})")
        rows = min(len(skills), MAX_ROWS)
        row_height = self.list.sizeHintForRow(0) if skills else 0
        self.list.setFixedHeight(rows * row_height + 6)
        self.setVisible(bool(skills))

    def names(self) -> list[str]:
        return [self.list.item(i).text().split(" — ")[0] for i in range(self.list.count())]
