"""Batch items on Ray: a cluster by address, or a local Ray started on demand.

Ray is the optional extra ``baton[ray]`` and is imported only here, only when this executor
is chosen; without it :func:`import_ray` says how to install it.

:class:`RayWorkers` keeps one actor per worker (an :class:`~core.batch.item_host.ItemHost`,
async, one CPU each) and places each item on the least busy one; a worker runs its items
concurrently on its own event loop, exactly as the local executor runs them here. The core
runner is shipped as-is with the item's request, settings and checked definitions
(:class:`~core.batch.item_host.ItemJob`); its events come back over the actor's ``collect``
method, which the supervisor long-polls, and are recorded by :class:`RemoteRun` through the
ordinary publisher. An actor that dies fails the items it held (:class:`WorkerLost`) and is
replaced for the next items.

Ray's own chatter stays out of the person's terminal (``--json`` output must stay NDJSON):
its driver logging is set to errors only, workers' output is not forwarded, and the error
messages its raylet pushes to the driver are not printed (it lands in Ray's log folder).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from core import paths
from core.approvals import Responder
from core.batch.item_host import ItemHost, ItemJob, Outgoing
from core.batch.remote_run import RemoteRun, WorkerLost
from core.errors import RunError
from core.events import RunFinished
from core.publisher import EventListener

RAY_MISSING = (
    "the Ray executor needs Ray, an optional extra: install it with pip install 'baton[ray]'"
)


def import_ray() -> ModuleType:
    """Ray, or a :class:`RunError` that says how to get it."""
    try:
        import ray
    except ImportError:
        raise RunError(RAY_MISSING) from None
    return ray


@dataclass
class _Worker:
    actor: Any
    pid: int
    node: str
    items: int = 0
    alive: bool = True


class RayWorkers:
    """Ray for one batch: connect (or start a local Ray), host items, let go.

    ``address`` None starts a local Ray with ``workers`` CPUs (default: this machine's), and
    shuts it down at :meth:`close`; with an address, Baton connects to that cluster and leaves
    it running. A Ray already initialised in this process (a test's, a notebook's) is used
    as it is. Local workers see this process's Baton folders, so documents and project rules
    are shared with the supervisor; a cluster's workers use their own.
    """

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self._ray = import_ray()
        self._address = address
        self._wanted = workers
        self._owns_ray = False
        self._workers: list[_Worker] = []
        self._capacity = 0
        self._host_class: Any = None

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Connect or start Ray; raises :class:`RunError` if no cluster answers."""
        ray = self._ray
        if not ray.is_initialized():
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.ERROR,
            }
            if self._address is None:
                options["num_cpus"] = self._wanted or os.cpu_count() or 1
            try:
                ray.init(address=self._address, **options)
            except (ConnectionError, ValueError, RuntimeError) as error:
                raise RunError(
                    f"could not reach the Ray cluster {self._address}: {error}"
                ) from None
            self._owns_ray = True
        _quiet_driver(ray)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self._capacity = max(1, min(self._wanted or cpus, cpus))
        env = {} if self._address is not None else _local_environment()
        self._host_class = ray.remote(ItemHost).options(
            num_cpus=1, max_restarts=0, runtime_env={"env_vars": env} if env else None
        )

    def close(self) -> None:
        """End every worker (and the local Ray this started)."""
        for worker in self._workers:
            if worker.alive:
                self._ray.kill(worker.actor)
        self._workers.clear()
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False

    @property
    def capacity(self) -> int:
        """How many workers the batch gets (one CPU each)."""
        return self._capacity

    # -- items ----------------------------------------------------------------------------

    async def run_item(
        self,
        job: ItemJob,
        *,
        responder: Responder,
        listeners: list[EventListener] | None = None,
        record: bool = True,
        on_start: Callable[[RemoteRun], None] | None = None,
    ) -> RunFinished:
        """Run one item on a worker and record it here; the ``run_finished`` it ended with.

        ``on_start`` (optional) receives the :class:`RemoteRun` once placed, so a caller can
        cancel it. Raises :class:`RunError` when the worker could not start the run.
        """
        worker = await self._place()
        worker.items += 1
        try:
            channel = _ActorChannel(self._ray, worker, job.run_id)
            try:
                await worker.actor.start.remote(_shipped(job))
            except self._ray.exceptions.RayActorError as error:
                worker.alive = False
                raise RunError(
                    f"the Ray worker could not start the item: {_first_line(error)}"
                ) from None
            remote = RemoteRun(
                job.run_id, channel, responder=responder, listeners=listeners, record=record
            )
            if on_start is not None:
                on_start(remote)
            return await remote.run()
        finally:
            worker.items -= 1

    async def _place(self) -> _Worker:
        """The least busy live worker, starting one while there are fewer than capacity."""
        self._workers = [w for w in self._workers if w.alive or w.items]
        alive = [w for w in self._workers if w.alive]
        if len(alive) < self._capacity:
            actor = self._host_class.remote()
            pid, node = await actor.whereabouts.remote()
            worker = _Worker(actor, pid=pid, node=node)
            self._workers.append(worker)
            return worker
        return min(alive, key=lambda w: w.items)


class _ActorChannel:
    """One item on one actor, as :class:`RemoteRun` reaches it."""

    def __init__(self, ray: ModuleType, worker: _Worker, run_id: str) -> None:
        self._ray = ray
        self._worker = worker
        self._run_id = run_id

    async def collect(self) -> list[Outgoing]:
        try:
            messages: list[Outgoing] = await self._worker.actor.collect.remote(self._run_id)
        except self._ray.exceptions.RayActorError as error:
            self._worker.alive = False
            where = f"Ray worker process {self._worker.pid} on {self._worker.node}"
            raise WorkerLost(f"{where}: {_first_line(error)}") from None
        return messages

    def answer(self, request_id: str, answer: str) -> None:
        self._worker.actor.answer.remote(self._run_id, request_id, answer)

    def cancel(self) -> None:
        self._worker.actor.cancel.remote(self._run_id)


def _shipped(job: ItemJob) -> ItemJob:
    """The job as a worker runs it: trust was checked here, against this machine's store."""
    return dataclasses.replace(job, request=dataclasses.replace(job.request, trust_project=True))


def _local_environment() -> dict[str, str]:
    """Baton's folders, for workers of a local Ray (they share this machine's)."""
    return {"BATON_CONFIG_DIR": str(paths.config_dir()), "BATON_DATA_DIR": str(paths.data_dir())}


def _quiet_driver(ray: ModuleType) -> None:
    """Keep the raylet's error reports (a worker died…) off stdout: they go to Ray's logs.
    Ray has no public switch for this; its own debugger flips the same flag."""
    worker_module = getattr(getattr(ray, "_private", None), "worker", None)
    if worker_module is not None and hasattr(worker_module, "_worker_logs_enabled"):
        worker_module._worker_logs_enabled = False


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
