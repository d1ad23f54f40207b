"""The executors by name (``--executor NAME``) and how each is made.

A registry apart from :mod:`core.batch.executors` (the seam every executor implements) so the
arrows point one way: an executor imports the seam, this module imports the executors — the
optional ones only when asked for, since their extras (Ray) may be missing. An optional executor
whose extra is missing raises :class:`~core.batch.executors.ExecutorUnavailable` with the
install command.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from core.batch.executors import (
    BatchExecutor,
    ExecutorOptions,
    ExecutorUnavailable,
    LocalExecutor,
)

ExecutorFactory = Callable[[ExecutorOptions], BatchExecutor]

RAY_MISSING = "the Ray executor needs the ray extra: pip install 'baton[ray]'"


def _ray(options: ExecutorOptions) -> BatchExecutor:
    """The Ray executor, imported only when asked for: Ray is an optional extra."""
    try:
        importlib.import_module("ray")
    except ImportError:
        raise ExecutorUnavailable(RAY_MISSING) from None
    try:
        from core.batch.ray_executor import RayExecutor
    except ImportError as error:
        raise ExecutorUnavailable(f"the Ray executor cannot be loaded: {error}") from None
    return RayExecutor(options)


EXECUTORS: dict[str, ExecutorFactory] = {"local": LocalExecutor, "ray": _ray}
"""``--executor`` names → factories. Add an executor by adding an entry."""


def create_executor(name: str, options: ExecutorOptions) -> BatchExecutor:
    factory = EXECUTORS.get(name)
    if factory is None:
        raise ExecutorUnavailable(
            f"unknown executor '{name}' (available: {', '.join(sorted(EXECUTORS))})"
        )
    return factory(options)
