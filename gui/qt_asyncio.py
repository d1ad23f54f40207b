"""The one place where asyncio meets Qt: a qasync event loop on the Qt (GUI) thread.

Baton's core is asyncio; the window is Qt. qasync runs both on one thread, so coroutines may
touch widgets directly and Qt signals may start coroutines (``qasync.asyncSlot``). Two ways in:

* :func:`run_event_loop` — the application's main loop (``baton`` with no sub-command). It
  owns the loop: creates it, runs Qt's event loop through it, cancels what is left, closes it.
* :func:`attached_event_loop` — for code that already runs inside Qt's event loop (pytest-qt,
  which spins Qt through ``qtbot.wait*``). The loop is made the *running* asyncio loop without
  entering ``QApplication.exec()``; its callbacks fire whenever Qt processes events.

Pitfall kept here so nobody rediscovers it: never call ``QDialog.exec()`` (or any modal
``QMessageBox`` helper) from inside a running coroutine — the nested Qt loop re-enters asyncio
("Cannot enter into task ... while another task is being executed"). From an async slot, wrap
the dialog with ``qasync.asyncWrap`` or open it non-modally and await a future.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, ParamSpec

# qasync picks its Qt binding from what is already imported: PySide6 must come first.
import qasync
from PySide6.QtCore import QCoreApplication
from PySide6.QtCore import QEventLoop as QtEventLoop

__all__ = ["asyncClose", "asyncSlot", "asyncWrap", "attached_event_loop", "run_event_loop"]

_P = ParamSpec("_P")


def asyncSlot(
    *types: object, **options: object
) -> Callable[[Callable[_P, Coroutine[Any, Any, object]]], Callable[_P, asyncio.Task[object]]]:
    """``qasync.asyncSlot`` with its types written down (qasync ships none): a coroutine
    function becomes a slot that starts it as a task on the running loop and returns it."""
    decorator: Callable[
        [Callable[_P, Coroutine[Any, Any, object]]], Callable[_P, asyncio.Task[object]]
    ] = qasync.asyncSlot(*types, **options)
    return decorator


asyncClose = qasync.asyncClose
asyncWrap = qasync.asyncWrap


def run_event_loop(app: QCoreApplication) -> int:
    """Run ``app`` with a qasync loop as the asyncio loop; return Qt's exit code.

    Returns when Qt's event loop ends (last window closed, ``app.quit()``). Tasks still
    pending then are cancelled and given one chance to clean up before the loop closes.
    """
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    # qasync's run_forever() does not install asyncio's async-generator hooks (see
    # attached_event_loop): without them httpx's byte streams of runs started from the window
    # are finalised at garbage collection, outside the loop ("ignored GeneratorExit").
    previous_hooks = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(
        firstiter=loop._asyncgen_firstiter_hook,
        finalizer=loop._asyncgen_finalizer_hook,
    )
    try:
        code = loop.run_forever()
        _cancel_pending(loop)
        gc.collect()
        _drive(loop, asyncio.ensure_future(loop.shutdown_asyncgens(), loop=loop))
        return int(code) if isinstance(code, int) else 0
    finally:
        sys.set_asyncgen_hooks(*previous_hooks)
        loop.close()
        asyncio.set_event_loop(None)


@contextlib.contextmanager
def attached_event_loop(app: QCoreApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """Make a qasync loop the running asyncio loop while Qt is driven by someone else.

    Inside the ``with`` block ``asyncio.get_running_loop()``, ``asyncio.create_task`` and
    ``qasync.asyncSlot`` work; tasks advance whenever Qt processes events. On exit, pending
    tasks are cancelled, the loop is detached and closed. ``QApplication.exit()`` is never
    called (qasync's ``stop()`` would, and that makes every later nested Qt loop return at once).
    """
    if asyncio.events._get_running_loop() is not None:
        raise RuntimeError("an asyncio loop is already running on this thread")
    loop = qasync.QEventLoop(app)
    asyncio.events._set_running_loop(loop)
    # run_forever() would install these: an async generator left suspended (httpx leaves its
    # byte streams for the loop to close) must be finalised on the loop, not at garbage
    # collection outside any loop.
    previous_hooks = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(
        firstiter=loop._asyncgen_firstiter_hook,
        finalizer=loop._asyncgen_finalizer_hook,
    )
    try:
        yield loop
    finally:
        try:
            _cancel_pending(loop)
            gc.collect()
            _drive(loop, asyncio.ensure_future(loop.shutdown_asyncgens(), loop=loop))
        finally:
            sys.set_asyncgen_hooks(*previous_hooks)
            asyncio.events._set_running_loop(None)
            loop.close()


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel tasks left on ``loop`` and let Qt deliver their cancellation."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not pending:
        return
    for task in pending:
        task.cancel()
    _drive(loop, *pending)


def _drive(loop: asyncio.AbstractEventLoop, *futures: asyncio.Future[object]) -> None:
    """Process Qt events until ``futures`` are done (bounded: a stubborn task must not hang
    shutdown). Each pass lets cancelled tasks run their ``finally`` blocks."""
    app = QCoreApplication.instance()
    attach = asyncio.events._get_running_loop() is None
    if attach:  # After run_forever() the loop is detached; tasks need it to finish.
        asyncio.events._set_running_loop(loop)
    try:
        for _ in range(50):
            if all(future.done() for future in futures) or app is None:
                break
            app.processEvents(QtEventLoop.ProcessEventsFlag.AllEvents, 10)
    finally:
        if attach:
            asyncio.events._set_running_loop(None)
