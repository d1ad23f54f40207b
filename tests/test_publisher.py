"""The event publisher: isolated subscribers, run files flushed once per loop turn, a full disk."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from core.backends.base import StepContext
from core.model.events import Event, Log, RunFinished, StepFinished, TextDelta
from core.record.publisher import EventPublisher, RunFileSink
from core.record.run_files import RunIndex, RunWriter, load_run, run_file
from core.safety.redaction import Redactor
from tests.test_runner import chain, echo_script, make_runner
from tests.waiting import until


def delta(n: int) -> TextDelta:
    return TextDelta(run_id="r1", step=None, ts=n, text=f"piece {n} ")


def test_a_failing_subscriber_is_detached_and_named_while_the_others_go_on() -> None:
    seen: list[Event] = []
    calls = 0

    def broken(event: Event) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("widget gone")

    sink = RunFileSink(RunWriter("r1", Redactor()))
    publisher = EventPublisher(Redactor(), sink, [broken, seen.append])
    for n in range(3):
        publisher.publish(delta(n))
    assert publisher.close() is None
    assert calls == 1 and publisher.listeners == [seen.append]
    assert [e for e in seen if isinstance(e, TextDelta)] == [delta(0), delta(1), delta(2)]
    [notice] = [e for e in load_run(run_file("r1")) if isinstance(e, Log)]
    assert notice.level == "warning" and "widget gone" in notice.message
    assert "broken" in notice.message and "detached" in notice.message


async def test_a_loop_turns_events_are_flushed_together_at_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Group commit: 2 000 events published in one turn of the loop reach the file with one
    flush, at the end of that turn — before anything else the loop runs next."""
    flushes = 0
    flush = RunWriter.flush

    def counted(self: RunWriter) -> None:
        nonlocal flushes
        flushes += 1
        flush(self)

    monkeypatch.setattr(RunWriter, "flush", counted)
    publisher = EventPublisher(Redactor(), RunFileSink(RunWriter("r1", Redactor())))
    events = [delta(n) for n in range(2_000)]
    for event in events:
        publisher.publish(event)
    assert flushes == 0
    loop = asyncio.get_running_loop()
    next_callback: asyncio.Future[int] = loop.create_future()
    loop.call_soon(lambda: next_callback.set_result(flushes))  # what the loop runs next
    assert await next_callback == 1  # flushed once, before it
    assert load_run(run_file("r1")) == events  # on disk while the run is still open
    assert publisher.close() is None
    assert publisher.close() is None  # closing twice is harmless


def test_a_loop_closed_before_its_turn_ended_holds_back_no_later_flush() -> None:
    """A loop closed with its turn's flush still to run (an app quitting, a test's loop): the
    thread's next loop flushes its runs' lines at its own turn's end, not only at close."""
    left = EventPublisher(Redactor(), RunFileSink(RunWriter("r1", Redactor())))
    first = asyncio.new_event_loop()

    async def publish_and_stop() -> None:
        left.publish(delta(1))
        first.stop()  # the flush would run at the next turn, which never comes

    stopping = first.create_task(publish_and_stop())
    first.run_forever()
    assert stopping.done()
    first.close()
    publisher = EventPublisher(Redactor(), RunFileSink(RunWriter("r2", Redactor())))

    async def next_loop() -> None:
        publisher.publish(delta(2))
        # On disk while the run is still open: flushed by the loop, not by close().
        await until(lambda: load_run(run_file("r2")) == [delta(2)], "r2's line never flushed")

    asyncio.run(next_loop())
    assert load_run(run_file("r1")) == [delta(1)]  # flushed with it
    assert publisher.close() is None and left.close() is None


def test_without_a_running_loop_each_event_is_flushed_as_published() -> None:
    publisher = EventPublisher(Redactor(), RunFileSink(RunWriter("r1", Redactor())))
    publisher.publish(delta(1))
    assert load_run(run_file("r1")) == [delta(1)]
    assert publisher.close() is None


def test_subscribe_returns_the_way_to_unsubscribe() -> None:
    seen: list[Event] = []
    publisher = EventPublisher(Redactor())
    unsubscribe = publisher.subscribe(seen.append)
    publisher.publish(delta(1))
    unsubscribe()
    publisher.publish(delta(2))
    assert seen == [delta(1)]


async def test_a_failing_listener_never_fails_the_step(tmp_path: Path) -> None:
    def broken(event: Event) -> None:
        if isinstance(event, TextDelta):
            raise ValueError("a GUI bug")

    runner, events = make_runner(chain(tmp_path, ("scout", "a"), ("planner", "b")), echo_script)
    runner.listeners.insert(0, broken)
    result = await runner.run()
    assert result.status == "ok" and result.error is None
    assert [e.status for e in events if isinstance(e, StepFinished)] == ["ok", "ok"]
    saved = load_run(run_file(runner.run_id))
    assert any(isinstance(e, Log) and "a GUI bug" in e.message for e in saved)
    assert isinstance(saved[-1], RunFinished) and saved[-1].status == "ok"


def never_ending(ctx: StepContext) -> AsyncGenerator[Event, None]:
    async def steps() -> AsyncGenerator[Event, None]:
        yield ctx.make(TextDelta, text="thinking about it… ")
        await asyncio.Event().wait()  # only the runner's cancel ends this step
        yield ctx.make(StepFinished, status="ok")  # pragma: no cover

    return steps()


async def test_a_full_disk_stops_the_run_cleanly_with_an_honest_index(tmp_path: Path) -> None:
    run_id = "20261203-000000-full00"
    run_file(run_id).symlink_to("/dev/full")  # every flush fails: "No space left on device"
    runner, events = make_runner(
        chain(tmp_path, ("scout", "a"), ("planner", "b")), never_ending, run_id=run_id
    )
    result = await asyncio.wait_for(runner.run(), timeout=30)
    assert result.status == "error"
    assert result.error is not None and "could not be written" in result.error
    assert "No space left on device" in result.error
    assert isinstance(events[-1], RunFinished) and events[-1] == result
    [step] = [e for e in events if isinstance(e, StepFinished)]
    assert step.status == "aborted"
    record = RunIndex().get(run_id)
    assert record is not None and record.status == "error" and record.error == result.error


async def test_runs_open_at_once_start_no_thread_and_each_keeps_its_own_lines() -> None:
    before = set(threading.enumerate())
    first = EventPublisher(Redactor(), RunFileSink(RunWriter("r1", Redactor())))
    second = EventPublisher(Redactor(), RunFileSink(RunWriter("r2", Redactor())))
    first.publish(delta(1))
    second.publish(delta(2).model_copy(update={"run_id": "r2"}))
    assert first.close() is None
    second.publish(delta(3).model_copy(update={"run_id": "r2"}))
    await until(lambda: len(load_run(run_file("r2"))) == 2, "the turn's lines flushed")
    assert set(threading.enumerate()) == before
    assert second.close() is None
    assert load_run(run_file("r1")) == [delta(1)]
    assert [e.ts for e in load_run(run_file("r2"))] == [2, 3]


@pytest.mark.parametrize(
    "message",
    [
        'the key is pa"ss\\word-0123456789',  # escaped in JSON: the line alone cannot tell
        "sent Authorization: Bearer\tsk-live-abcdefghijklmnop",  # a tab is \t in the line
        'line one\nthen pa"ss\\word-0123456789 on the next',
        'plain pa"ss\\word-0123456789',
        "a line\nBearer sk-live-abcdefghijklmnop",  # no word start before Bearer in JSON
    ],
    ids=["quoted-key", "bearer-after-tab", "after-newline", "plain", "bearer-after-newline"],
)
def test_a_secret_behind_a_json_escape_is_redacted_in_the_file_and_for_subscribers(
    message: str,
) -> None:
    """The attack: a whole event is checked as its JSON line first, where an escape changes
    the text; a secret next to (or inside) an escaped character must still be found."""
    secret = 'pa"ss\\word-0123456789'
    seen: list[Event] = []
    publisher = EventPublisher(
        Redactor([secret]), RunFileSink(RunWriter("r1", None)), [seen.append]
    )
    publisher.publish(Log(run_id="r1", step=0, ts=1, level="info", message=message))
    assert publisher.close() is None
    [written] = load_run(run_file("r1"))
    for event in (written, *seen):
        assert isinstance(event, Log)
        assert "[redacted]" in event.message
        assert secret not in event.message and "abcdefghijklmnop" not in event.message


def test_a_plain_secret_in_an_event_with_escapes_is_redacted() -> None:
    """The line is scanned even when it has escapes, when no known value has a character
    JSON escapes: the secret on the second line of an output is found there."""
    secret = "sk-plain-0123456789abcdef"
    publisher = EventPublisher(Redactor([secret]), RunFileSink(RunWriter("r1", None)))
    output = f"first line\nthe key: {secret}\n"
    publisher.publish(StepFinished(run_id="r1", step=0, ts=1, status="ok", output=output))
    assert publisher.close() is None
    [written] = load_run(run_file("r1"))
    assert isinstance(written, StepFinished)
    assert written.output == "first line\nthe key: [redacted]\n"


@pytest.mark.parametrize(
    "message",
    ["sent Bearer\tsk-live-abcdefghijklmnop", "a line\nBearer sk-live-abcdefghijklmnop"],
    ids=["tab", "newline"],
)
def test_a_bearer_token_next_to_an_escaped_whitespace_is_redacted(message: str) -> None:
    publisher = EventPublisher(
        Redactor(["sk-plain-0123456789abcdef"]), RunFileSink(RunWriter("r1", None))
    )
    publisher.publish(Log(run_id="r1", step=0, ts=1, level="info", message=message))
    assert publisher.close() is None
    [written] = load_run(run_file("r1"))
    assert isinstance(written, Log) and "abcdefghijklmnop" not in written.message


def test_an_event_that_cannot_be_encoded_still_reaches_the_subscribers() -> None:
    """A hostile model's lone surrogate cannot be written as JSON: publishing it must not fail
    the step (the line is left out of the file, as before)."""
    seen: list[Event] = []
    publisher = EventPublisher(
        Redactor(["sk-plain-0123456789abcdef"]), RunFileSink(RunWriter("r1", None)), [seen.append]
    )
    odd = Log(run_id="r1", step=0, ts=1, level="info", message="notes-\ud800.txt")
    publisher.publish(odd)
    publisher.publish(delta(2))
    assert publisher.close() is None
    assert seen == [odd, delta(2)]
    assert load_run(run_file("r1")) == [delta(2)]
