"""Saving a person's edits to the store: the version check and what to do on a conflict.

Saving rules (the "why"):

* **Never a silent overwrite.** The editor remembers the version it started from and saves
  with ``expected_version``. If an agent saved the document meanwhile, the store refuses
  (:class:`~core.documents.store.DocumentConflict`) and the person chooses: keep mine (overwrite),
  take theirs (reload, losing the edits) or cancel (keep editing).
* **Deleted meanwhile** is offered as "save as a new document".
* **Nothing is lost** either way: the store keeps every version it replaces.

Writes go through :class:`gui.documents.document_writes.StoreWriter` (a worker thread, the window
responsive); the answer comes back in line, so the prompts can follow at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from core.documents.store import Document, DocumentConflict, DocumentNotFound, DocumentStore
from gui.documents.document_editor import EditedDocument
from gui.documents.document_prompts import DocumentPrompts
from gui.documents.document_writes import StoreWriter
from gui.widgets.prompts import ConflictChoice


@dataclass(frozen=True)
class SaveOutcome:
    stored: Document | None = None
    """What was stored (None: nothing was)."""
    theirs: Document | None = None
    """The person chose "take theirs": the version to show instead of the edits."""


def save_edits(
    store: DocumentStore,
    writer: StoreWriter,
    prompts: DocumentPrompts,
    base: Document | None,
    edited: EditedDocument,
) -> SaveOutcome:
    """Create (``base`` None) or update ``base`` with ``edited``, asking on conflicts. Store
    errors (an empty title, content over the limit) propagate as
    :class:`~core.documents.store.DocumentError`."""
    create = partial(store.create, edited.title, edited.content, type=edited.type, tags=edited.tags)
    if base is None:
        return SaveOutcome(stored=writer.run(create))
    expected = base.version
    while True:
        try:
            return SaveOutcome(
                stored=writer.run(
                    partial(
                        store.update,
                        base.id,
                        title=edited.title,
                        content=edited.content,
                        tags=edited.tags,
                        type=edited.type,
                        expected_version=expected,
                    )
                )
            )
        except DocumentConflict as conflict:
            choice = prompts.resolve_conflict(conflict.current)
            if choice is ConflictChoice.OVERWRITE:
                expected = conflict.current.version  # and again, if it moved once more
                continue
            if choice is ConflictChoice.RELOAD:
                return SaveOutcome(theirs=conflict.current)
            return SaveOutcome()
        except DocumentNotFound:
            if not prompts.save_as_new(edited.title):
                return SaveOutcome()
            return SaveOutcome(stored=writer.run(create))
