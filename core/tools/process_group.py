"""Former home of process stopping, kept as an alias until the CLI backends import
:mod:`core.process_tree` directly: ``stop_group`` is :func:`core.process_tree.stop_tree`."""

from core.process_tree import stop_tree as stop_group

__all__ = ["stop_group"]
