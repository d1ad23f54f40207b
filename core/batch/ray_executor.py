"""The Ray executor: a batch's items on a Ray cluster by address, or on a local Ray.

Ray is the optional extra ``baton[ray]``: this module imports it where it is used
(:func:`_ray`), so the module itself imports on a machine without Ray; it is used only when
``--executor ray`` is chosen (:data:`core.batch.executor_registry.EXECUTORS` checks Ray is
there first and names the extra when it is not).

One actor per worker (an async :class:`~core.batch.worker_host.WorkerHost`, one CPU each) runs
items concurrently on its own event loop, the core runner as-is
(:func:`~core.batch.jobs.item_runner`, as the local executor runs it) with the supervisor's
settings and checked definitions, shipped once per batch. Each item's events come back through
the actor's ``collect``, which the supervisor long-polls, and are recorded by
:func:`~core.batch.relay.relay` into the batch's ordinary recording. An actor that dies fails
the items it held (their run files end ``error``, saying the worker died) and is replaced for
the items still to run.

``--concurrency N`` is the number of items running at once, spread over ``min(N, the
cluster's CPUs)`` workers. With no address a local Ray is started with this machine's CPUs
(at most N) and shut down after the batch; its workers see this process's Baton folders, so
documents and project rules are shared. A cluster's workers use their own (what a worker needs
is in the guide's page on Ray clusters). Where no folder is shared, ``--repo``/``--ref`` gives
each item a fresh copy of a git ref on its worker (:mod:`core.batch.checkout`). Provider
settings are never a worker's own: the submitter's travel with the items
(:mod:`core.batch.provider_world`).

A cluster that stops answering mid-batch (its head node died) ends the batch: the items
running end ``error`` naming the cluster, the others stay pending, and the executor raises
:class:`~core.batch.executors.ExecutorLost`. Ray itself would otherwise wait a minute and then
end the whole process.

Ray's own chatter stays out of the person's terminal (``--json`` output must stay NDJSON): its
Python logging goes to ``<data>/logs/ray.log`` (:mod:`core.batch.ray_setup`, which also names
the cause when a cluster refuses), workers' output is not forwarded, and the raylet's reports
("a worker died…") are not printed; they stay in Ray's log folder.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from core.batch.executors import ExecutorLost, ExecutorOptions, ItemHost, run_on_workers
from core.batch.jobs import Definitions, ItemJob
from core.batch.provider_world import capture
from core.batch.ray_setup import (
    RayLogFile,
    check_speaks_ray,
    explain_connect_error,
    local_ray_token,
)
from core.batch.relay import WorkerLost, relay
from core.batch.worker_host import Outgoing, WorkerHost
from core.config import paths
from core.config.settings import Settings
from core.model.errors import RunError
from core.run.gates import GateChoice


def _ray() -> Any:
    """Ray, imported when first used: the extra ``baton[ray]`` is optional, and this module
    must import (for the layering checks, the executor registry) on a machine without it."""
    import ray
    import ray.exceptions

    return ray


class RayExecutor:
    """Runs a batch's items on Ray workers (see the module docstring)."""

    name = "ray"

    def __init__(self, options: ExecutorOptions) -> None:
        if options.concurrency < 1:
            raise RunError("--concurrency must be at least 1")
        self.options = options

    async def run(self, jobs: Sequence[ItemJob], host: ItemHost) -> None:
        if not jobs:
            return
        workers = RayWorkers(self.options)
        await asyncio.to_thread(workers.start)
        try:
            await self._run(jobs, host, workers)
        finally:
            await asyncio.to_thread(workers.close)

    async def _run(self, jobs: Sequence[ItemJob], host: ItemHost, workers: RayWorkers) -> None:
        # Shipped once; trust was checked here (BatchRun.prepare), against this machine's store.
        workers.ship(host.settings, host.definitions, host.gates)
        running: set[_ActorChannel] = set()
        item_workers: set[asyncio.Task[None]] = set()  # each runs one item at a time

        async def one(job: ItemJob) -> None:
            # Started before it is recorded: an item whose start never comes back (the
            # cluster went away meanwhile) stays pending, with no run file.
            channel = await workers.start_item(_trusted(job))
            recording = host.remote(job)
            if isinstance(channel, str):
                host.item_ended(recording.close(channel))
                return
            running.add(channel)
            try:
                await relay(channel, recording, host.responder, host.item_ended)
            finally:
                running.discard(channel)
                channel.release()

        async def cancel_on_request() -> None:
            await host.cancelled.wait()
            for channel in list(running):
                channel.cancel()

        async def end_when_the_cluster_goes() -> None:
            while True:  # polled: Ray tells a driver nothing when its cluster goes away
                gone = await asyncio.to_thread(workers.cluster_gone)
                if gone is not None:
                    break
                await asyncio.sleep(CLUSTER_CHECK_S)
            workers.lost = gone
            for task in list(item_workers):
                task.cancel()  # a started item's relay still records how it ended

        watchers = [
            asyncio.create_task(cancel_on_request()),
            asyncio.create_task(end_when_the_cluster_goes()),
        ]
        try:
            await run_on_workers(
                jobs,
                self.options.concurrency,
                one,
                stop=lambda: host.cancelled.is_set() or bool(workers.lost),
                workers=item_workers,
            )
        finally:
            for watcher in watchers:
                watcher.cancel()
                with suppress(asyncio.CancelledError):
                    await watcher
        if workers.lost:
            raise ExecutorLost(f"{workers.lost}; the items not started stay pending")


CLUSTER_CHECK_S = 1.0
"""How often a batch checks that its Ray cluster still answers (a connect to its control
service: cheap). Ray's own calls to a cluster that went away may wait for minutes."""


@dataclass
class _Worker:
    actor: Any
    where: str = "a Ray worker"
    """Its process and host once known (named when it dies)."""
    items: int = 0
    alive: bool = True


class RayWorkers:
    """Ray for one batch: connect (or start a local Ray), keep the workers, let go.

    :meth:`start` and :meth:`close` block (Ray starts processes, or connects): call them in
    a thread. A Ray already initialised in this process (a test's, a notebook's) is used as it
    is and left running.
    """

    def __init__(self, options: ExecutorOptions) -> None:
        self._address = options.address
        self._concurrency = options.concurrency
        self._checkout = options.checkout
        self._connect_timeout_s = options.connect_timeout_s
        self._owns_ray = False
        self._workers: list[_Worker] = []
        self._capacity = 1
        self._host_class: Any = None
        self._shipped: tuple[Any, Any] | None = None
        self._environment: Any = None
        self._gates: GateChoice | None = None
        self._control: tuple[str, int] | None = None
        self._log = RayLogFile()
        self._given_environment: dict[str, str] = {}
        self.lost: str | None = None
        """Why the cluster is gone, once it is (a batch then ends, its unstarted items
        pending)."""

    def start(self) -> None:
        """Connect or start Ray; raises :class:`RunError` when it cannot, naming the cause."""
        if not _ray().is_initialized():
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.INFO,  # into <data>/logs/ray.log, not the terminal
            }
            if self._address is None:
                options["num_cpus"] = min(os.cpu_count() or 1, self._concurrency)
                self._given_environment = local_ray_token()
                for name, value in self._given_environment.items():
                    os.environ[name] = value
                _reread_authentication()
            else:
                target = wait_for_address(self._address, self._connect_timeout_s)
                if target is not None:
                    check_speaks_ray(target, self._address)
            self._log.open()
            try:
                _ray().init(address=self._address, **options)
            except Exception as error:  # Ray raises many kinds; each is told as its cause
                self._let_go()
                where = f"the Ray cluster at {self._address}" if self._address else "a local Ray"
                raise RunError(explain_connect_error(where, error)) from None
            self._owns_ray = True
        _quiet_driver()
        host, _, port = _ray().get_runtime_context().gcs_address.rpartition(":")
        self._control = (host.strip("[]"), int(port))
        cpus = int(_ray().cluster_resources().get("CPU", 1))
        self._capacity = max(1, min(self._concurrency, cpus))
        env = _local_environment() if self._address is None else {}
        self._host_class = (
            _ray()
            .remote(WorkerHost)
            .options(num_cpus=1, max_restarts=0, runtime_env={"env_vars": env} if env else None)
        )

    def cluster_gone(self) -> str | None:
        """Why the cluster no longer answers (its control service is gone: the head node
        died, or the local Ray was killed), or None while it does. Blocks up to a few
        seconds: call it in a thread."""
        if self._control is None:
            return None
        try:
            with socket.create_connection(self._control, timeout=CONNECT_CHECK_S):
                return None
        except OSError as error:
            where = f"the Ray cluster at {self._address}" if self._address else "the local Ray"
            return f"{where} stopped answering ({error.strerror or error})"

    def close(self) -> None:
        """End every worker (its provider clients closed first), and the local Ray this
        started."""
        live = [w.actor for w in self._workers if w.alive and not self.lost]  # a lost
        # cluster's workers are gone with it
        with suppress(_ray().exceptions.RayError, TimeoutError):  # killed below all the same
            _ray().get([actor.close.remote() for actor in live], timeout=CLOSE_S)
        for actor in live:
            _ray().kill(actor)
        self._workers.clear()
        if self._owns_ray:
            _ray().shutdown()
            self._owns_ray = False
        self._let_go()

    def _let_go(self) -> None:
        """Put back what :meth:`start` changed in this process: Ray's logging, the token
        variables of a local Ray."""
        self._log.close()
        for name in self._given_environment:
            os.environ.pop(name, None)
        if self._given_environment:
            _reread_authentication()
        self._given_environment = {}

    def ship(
        self, settings: Settings, definitions: Definitions, gates: GateChoice | None = None
    ) -> None:
        """Put what every item needs in Ray's object store once, not once per item: the
        definitions, and this machine's provider world (settings and provider variables,
        which the workers put in place of their own). ``gates`` (``--gate``, a word) goes
        with each item."""
        self._gates = gates
        world = capture(settings)
        self._shipped = (_ray().put(world.settings), _ray().put(definitions))
        self._environment = _ray().put(dict(world.environment))

    async def start_item(self, job: ItemJob) -> _ActorChannel | str:
        """Start ``job`` on the least busy worker; its channel, or why it could not start."""
        assert self._shipped is not None, "ship() first"
        worker = self._place()
        try:
            if worker.where == _Worker.where:
                pid, node = await worker.actor.whereabouts.remote()
                worker.where = f"Ray worker process {pid} on {node}"
            await worker.actor.start.remote(
                job, *self._shipped, self._checkout, self._environment, self._gates
            )
        except _ray().exceptions.RayError as error:
            worker.alive = False
            worker.items -= 1
            return f"the item could not start on {worker.where}: {_first_line(error)}"
        return _ActorChannel(worker, job.run_id, self)

    def _place(self) -> _Worker:
        """The least busy live worker (its item count raised), starting one while there are
        fewer than the batch's share of the cluster."""
        self._workers = [w for w in self._workers if w.alive or w.items]
        alive = [w for w in self._workers if w.alive]
        if len(alive) < self._capacity:
            worker = _Worker(self._host_class.remote())
            self._workers.append(worker)
        else:
            worker = min(alive, key=lambda w: w.items)
        worker.items += 1
        return worker


class _ActorChannel:
    """One item on one actor, as :func:`relay` reaches it."""

    def __init__(self, worker: _Worker, run_id: str, workers: RayWorkers) -> None:
        self._worker = worker
        self._run_id = run_id
        self._workers = workers

    async def collect(self) -> list[Outgoing]:
        try:
            messages: list[Outgoing] = await self._worker.actor.collect.remote(self._run_id)
        except _ray().exceptions.RayError as error:  # the actor died, or its node, or the cluster
            self._worker.alive = False
            cluster = self._workers.lost or await asyncio.to_thread(self._workers.cluster_gone)
            if cluster:
                raise WorkerLost(f"{self._worker.where}: {cluster}") from None
            raise WorkerLost(f"{self._worker.where}: {_first_line(error)}") from None
        return messages

    def answer(self, request_id: str, answer: str) -> None:
        with suppress(_ray().exceptions.RayError):  # a dead worker's collect says so
            self._worker.actor.answer.remote(self._run_id, request_id, answer)

    def cancel(self) -> None:
        with suppress(_ray().exceptions.RayError):
            self._worker.actor.cancel.remote(self._run_id)

    def release(self) -> None:
        """The item is over: its worker has room for another."""
        self._worker.items -= 1


CLOSE_S = 10.0
"""How long a batch's workers get to close their connections before they are killed."""

CONNECT_CHECK_S = 3.0
"""How long the cluster's control service gets to accept a connection before it counts as
gone (a loaded head node answers within this; a dead one refuses at once)."""

RAY_PORT = 6379
"""A head node's port when an address names none (Ray's default)."""
RAY_CLIENT_PORT = 10001
"""The Ray Client server's default port (``ray://HOST``)."""


def wait_for_address(address: str, timeout_s: float) -> tuple[str, int] | None:
    """Return once something listens at the cluster's address (its host and port; None for
    ``auto``); raise :class:`RunError` naming it when nothing did within ``timeout_s``.

    Given an address nobody answers at, ``ray.init`` retries for minutes without a word
    (measured: over 200 s). A cluster that is still starting gets the whole wait; ``auto``
    (find the cluster started on this machine) is Ray's own to look up."""
    if address == "auto":
        return None
    client = address.startswith("ray://")
    where = address.removeprefix("ray://").split("/", 1)[0]
    host, _, port = where.rpartition(":") if ":" in where else (where, "", "")
    try:
        target = (host.strip("[]"), int(port) if port else RAY_CLIENT_PORT if client else RAY_PORT)
    except ValueError:
        raise RunError(f"--ray-address {address!r} is not HOST:PORT") from None
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = deadline - time.monotonic()
        try:
            with socket.create_connection(target, timeout=max(0.1, min(remaining, 5.0))):
                return target
        except OSError as error:
            if time.monotonic() + 0.5 >= deadline:
                raise RunError(
                    f"the Ray cluster at {address} did not answer within {timeout_s:g} s "
                    f"({error.strerror or error}); check the address and that the cluster "
                    "runs (--ray-timeout waits longer)"
                ) from None
        time.sleep(0.5)


def _trusted(job: ItemJob) -> ItemJob:
    """The job as a worker runs it: its project's trust was checked by the supervisor, against
    the supervisor's trust store; a worker's own store may not know the project."""
    return job.model_copy(update={"spec": job.spec.model_copy(update={"trust_project": True})})


def _local_environment() -> dict[str, str]:
    """Baton's folders, for workers of a local Ray (they share this machine's)."""
    return {"BATON_CONFIG_DIR": str(paths.config_dir()), "BATON_DATA_DIR": str(paths.data_dir())}


def _reread_authentication() -> None:
    """Make Ray read its authentication variables again: it reads them once per process
    (what Ray itself does when it turns token authentication on for a local Ray)."""
    raylet = getattr(_ray(), "_raylet", None)
    with suppress(Exception):  # private API: without it, Ray's own default applies
        raylet.Config.initialize("")  # type: ignore[union-attr]
        raylet.AuthenticationTokenLoader.instance().reset_cache()  # type: ignore[union-attr]


def _quiet_driver() -> None:
    """Keep the raylet's error reports ("a worker died…") off stdout: they stay in Ray's
    logs. Ray has no public switch for this; its own debugger flips the same flag."""
    worker_module = getattr(getattr(_ray(), "_private", None), "worker", None)
    if worker_module is not None and hasattr(worker_module, "_worker_logs_enabled"):
        worker_module._worker_logs_enabled = False


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
