"""Reviewing what a run changed: the step pane's Changes section, the diff viewer, the
whole-run Changes view and restoring a folder to before a step
(:mod:`core.workspace.checkpoints`)."""

from gui.changes.changes_section import ChangesSection

__all__ = ["ChangesSection"]
