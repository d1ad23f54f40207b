"""Batches: one preset over many inputs, every item an ordinary run grouped under a batch id.

How the parts fit (read in this order):

* :mod:`core.batch.inputs` — the inputs file (JSONL or CSV) → :class:`BatchItem` rows;
* :mod:`core.batch.store` — the batch record in ``runs.sqlite``: the :class:`BatchSpec` (preset
  and options), each row's latest run id and status; ``runs.batch_id`` groups the runs;
* :mod:`core.batch.jobs` — :class:`ItemJob` (plain data, shippable to a worker) and
  :func:`item_runner` / :func:`run_item`: the core :class:`~core.run.runner.Runner`, unchanged,
  running one item; its ``run_started`` carries ``batch_id`` and ``batch_item``;
* :mod:`core.batch.executors` — THE SEAM: ``BatchExecutor.run(jobs, host)``. The local
  executor runs items on ``concurrency`` asyncio workers; a remote one (Ray) runs
  ``item_runner(job, record=False, listeners=[forward])`` on a worker and publishes the
  forwarded events into ``host.remote(job)`` (:mod:`core.batch.recording`), which writes the
  same run file and index row a local item gets. Executors are registered by name in
  :data:`core.batch.executor_registry.EXECUTORS`;
* :mod:`core.batch.supervisor` — :class:`BatchRun`: the host; checks every row up front,
  keeps the record, tags events with their row for listeners, cancels;
* :mod:`core.batch.results` — status and export rows (``baton batch status|export``, the
  window's batch view).
"""
