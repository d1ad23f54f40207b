"""Streaming a 200 KB Markdown answer through the live renderer vs rendering it once.

The document is generated deterministically: sections with headings, paragraphs with inline
markup and links, bulleted, numbered and nested lists, task lists, tables and fenced code in
three languages. The baseline renders it once into a view like the run view's (auto-height,
inside a scroll area) and lays it out.

The stream gets it in 20,000 deltas (10 characters each) into a
:class:`~gui.run.markdown_stream.MarkdownStream` inside the same kind of scroll area. Four ways,
each against the one-shot render's CPU time:

* ``paced_ratio`` (goal ≤ 2): a model's pace — a delta every 50 ms, replayed on a virtual clock
  (the 20 Hz throttle would fire between two deltas, so every delta is rendered, then Qt lays
  out and paints, then the next comes): 20,000 renders, CPU time;
* ``paced_following_ratio``: the same with the reader following the end, as the run view does
  while they are at the bottom — the open tail is in sight, so it is rendered for every delta
  (while it is out of sight it is not: that is the ``paced_ratio`` case, a reader at the top);
* ``ratio``: a turn every 2 ms with 25 deltas each — as fast as a busy backend floods (some
  12,000 deltas a second) while the loop runs the renderer's 20 Hz timer; CPU time to the final
  rendered state.
* ``burst_ratio``: all turns back to back, ``processEvents()`` between them; the whole stream
  takes less than one timer interval, so this mostly shows that throttling works.
* ``every_turn_ratio``: a render forced after every turn (800 renders, each also painted and
  laid out by Qt): the worst case, where only incremental rendering keeps the cost bounded.

Clocks stop once the final state is rendered (``finish()``, then pending layout, including
finished text still being laid out a slice per turn). All views
must end with the same text as the one-shot render. Last line, JSON: the ratios, the times,
render counts and ``identical``.
"""

from __future__ import annotations

import json
import os
import random
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TARGET_BYTES = 200_000
DELTAS = 20_000
PER_TURN = 25
PACE_PER_S = 20

WORDS = (
    *("agent", "chain", "step", "planner", "worker", "scout", "output", "result", "model"),
    *("token", "stream", "render", "block", "table", "list", "code", "fence", "event"),
    *("view", "window", "pane", "usage", "cost", "context", "tool", "call", "bash", "read"),
    *("write", "edit", "grep", "find", "approval", "policy", "trust", "project", "folder"),
    *("settings", "provider", "run"),
)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 18))]
    index = rng.randrange(len(words))
    words[index] = rng.choice(
        [f"**{words[index]}**", f"*{words[index]}*", f"`{words[index]}()`", words[index]]
    )
    if rng.random() < 0.2:
        words.append(f"[docs](https://example.com/{rng.choice(WORDS)})")
    return " ".join(words).capitalize() + "."


def _code(rng: random.Random) -> str:
    language = rng.choice(["python", "bash", "json"])
    if language == "python":
        body = "\n".join(
            f"def {rng.choice(WORDS)}_{i}(value: int) -> int:\n"
            f"    # {rng.choice(WORDS)} the {rng.choice(WORDS)}\n"
            f"    return value * {i} + len('{rng.choice(WORDS)}')\n"
            for i in range(rng.randint(2, 5))
        )
    elif language == "bash":
        body = "\n".join(
            f"baton run {rng.choice(WORDS)} --json | jq '.{rng.choice(WORDS)}'"
            for _ in range(rng.randint(2, 6))
        )
    else:
        pairs = ", ".join(f'"{rng.choice(WORDS)}": {rng.randint(0, 999)}' for _ in range(6))
        body = "{" + pairs + "}"
    return f"```{language}\n{body}\n```"


def _table(rng: random.Random) -> str:
    columns = rng.randint(2, 4)
    head = "| " + " | ".join(rng.choice(WORDS).title() for _ in range(columns)) + " |"
    rule = "|" + "|".join("---" for _ in range(columns)) + "|"
    rows = [
        "| "
        + " | ".join(f"`{rng.choice(WORDS)}` {rng.randint(1, 99)}" for _ in range(columns))
        + " |"
        for _ in range(rng.randint(3, 7))
    ]
    return "\n".join([head, rule, *rows])


def _list(rng: random.Random) -> str:
    kind = rng.choice(["bullet", "numbered", "tasks"])
    lines = []
    for i in range(rng.randint(3, 7)):
        marker = {"bullet": "-", "numbered": f"{i + 1}.", "tasks": rng.choice(["- [ ]", "- [x]"])}
        lines.append(f"{marker[kind]} {_sentence(rng)}")
        if kind == "bullet" and rng.random() < 0.3:
            lines.append(f"  - {_sentence(rng)}")
    return "\n".join(lines)


def generate(size: int = TARGET_BYTES, seed: int = 7) -> str:
    rng = random.Random(seed)
    blocks: list[str] = []
    length = 0
    section = 0
    while length < size:
        section += 1
        parts = [f"## {section}. {_sentence(rng).rstrip('.')}"]
        for _ in range(rng.randint(2, 5)):
            kind = rng.random()
            if kind < 0.45:
                parts.append(" ".join(_sentence(rng) for _ in range(rng.randint(2, 5))))
            elif kind < 0.65:
                parts.append(_list(rng))
            elif kind < 0.8:
                parts.append(_table(rng))
            elif kind < 0.95:
                parts.append(_code(rng))
            else:
                parts.append(f"> {_sentence(rng)}")
        block = "\n\n".join(parts)
        blocks.append(block)
        length += len(block) + 2
    return "\n\n".join(blocks) + "\n"


def deltas(text: str, count: int) -> list[str]:
    size = max(1, len(text) // count)
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return pieces


def main() -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QScrollArea

    from gui.app import create_application
    from gui.run.markdown_render import _highlighted
    from gui.run.markdown_stream import MarkdownStream, warm_up
    from gui.run.markdown_view import MarkdownView

    document = generate()
    pieces = deltas(document, DELTAS)
    print(f"document: {len(document):,} characters, streamed in {len(pieces):,} deltas")

    app = create_application([])
    warm_up()

    def framed(widget: MarkdownView | MarkdownStream) -> QScrollArea:
        area = QScrollArea()
        area.setWidgetResizable(True)
        area.setWidget(widget)
        area.resize(1000, 800)
        area.show()
        return area

    def report(label: str, seconds: float, stream: MarkdownStream) -> None:
        print(
            f"stream, {label}: {seconds:.3f} s, {stream.block_renders} block renders, "
            f"{stream.tail_renders} tail renders"
        )

    once = MarkdownView(auto_height=True)
    area_once = framed(once)
    _highlighted.cache_clear()
    app.processEvents()
    start, cpu = time.perf_counter(), time.process_time()
    once.set_markdown(document)
    app.processEvents()
    once_s = time.perf_counter() - start
    once_cpu_s = time.process_time() - cpu
    print(f"render once: {once_s:.3f} s, {once_cpu_s:.3f} s CPU")

    def settle(stream: MarkdownStream) -> None:
        """Until the final state is on screen: a finished text may still be laid out a slice
        per event-loop turn, and that work counts."""
        app.processEvents()
        while not stream.is_laid_out():
            app.processEvents()

    def fresh() -> tuple[MarkdownStream, QScrollArea]:
        _highlighted.cache_clear()  # no run may reuse the code highlighting of another
        stream = MarkdownStream()
        area = framed(stream)
        app.processEvents()
        return stream, area

    # Burst: as fast as possible, the event loop turning between batches.
    burst, area_burst = fresh()
    start = time.perf_counter()
    for index in range(0, len(pieces), PER_TURN):
        for piece in pieces[index : index + PER_TURN]:
            burst.feed(piece)
        app.processEvents()
    burst.finish()
    settle(burst)
    burst_s = time.perf_counter() - start
    report("burst", burst_s, burst)

    # Worst case: a render after every turn.
    every, area_every = fresh()
    start = time.perf_counter()
    for index in range(0, len(pieces), PER_TURN):
        for piece in pieces[index : index + PER_TURN]:
            every.feed(piece)
        every.flush()
        app.processEvents()
    every.finish()
    settle(every)
    every_s = time.perf_counter() - start
    report("rendered every turn", every_s, every)

    # Paced like a model: a delta every 50 ms (20 a second) on a virtual clock. The renderer's
    # 50 ms throttle would fire between two deltas, so each delta is rendered (flush) before
    # the next, with Qt's layout and painting in between; CPU time, no waiting.
    paced, area_paced = fresh()
    cpu = time.process_time()
    for piece in pieces:
        paced.feed(piece)
        paced.flush()
        app.processEvents()
    paced.finish()
    settle(paced)
    paced_cpu_s = time.process_time() - cpu
    report(f"paced, {PACE_PER_S} deltas/s on a virtual clock (CPU time)", paced_cpu_s, paced)

    # The same pace with the reader following the end (the run view does while they are at
    # the bottom): the open tail is in sight, so it is rendered for every delta.
    following, area_following = fresh()
    bar = area_following.verticalScrollBar()
    cpu = time.process_time()
    for piece in pieces:
        following.feed(piece)
        following.flush()
        bar.setValue(bar.maximum())
        app.processEvents()
    following.finish()
    settle(following)
    following_cpu_s = time.process_time() - cpu
    report("paced, following the end (CPU time)", following_cpu_s, following)

    # Flooded: a turn every 2 ms, renders at 20 Hz; CPU time counts.
    stream, area_stream = fresh()
    loop = QEventLoop()
    position = [0]

    def deliver() -> None:
        for piece in pieces[position[0] : position[0] + PER_TURN]:
            stream.feed(piece)
        position[0] += PER_TURN
        if position[0] >= len(pieces):
            producer.stop()
            stream.finish()
            loop.quit()

    producer = QTimer()
    producer.setInterval(2)
    producer.timeout.connect(deliver)
    start = time.perf_counter()
    cpu = time.process_time()
    producer.start()
    loop.exec()
    settle(stream)
    paced_wall = time.perf_counter() - start
    paced_cpu = time.process_time() - cpu
    report(f"flooded over {paced_wall:.2f} s (CPU time)", paced_cpu, stream)
    expected = once.toPlainText()
    same = all(s.shown_text() == expected for s in (burst, every, stream, paced, following))
    print(f"final text identical to the one-shot rendering: {same}")
    for area in (area_once, area_burst, area_every, area_stream, area_paced, area_following):
        area.close()
    print(
        json.dumps(
            {
                "ratio": round(paced_cpu / once_cpu_s, 2),
                "paced_ratio": round(paced_cpu_s / once_cpu_s, 2),
                "paced_following_ratio": round(following_cpu_s / once_cpu_s, 2),
                "burst_ratio": round(burst_s / once_s, 2),
                "every_turn_ratio": round(every_s / once_s, 2),
                "once_s": round(once_s, 3),
                "flooded_cpu_s": round(paced_cpu, 3),
                "paced_cpu_s": round(paced_cpu_s, 3),
                "once_cpu_s": round(once_cpu_s, 3),
                "burst_s": round(burst_s, 3),
                "every_turn_s": round(every_s, 3),
                "paced_renders": paced.block_renders + paced.tail_renders,
                "flooded_renders": stream.block_renders + stream.tail_renders,
                "every_turn_renders": every.block_renders + every.tail_renders,
                "bytes": len(document.encode()),
                "deltas": len(pieces),
                "identical": same,
            }
        )
    )


if __name__ == "__main__":
    main()
