"""Markdown on screen: safe rendering, code blocks, links, and incremental streaming."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QTextDocument, QTextTable
from PySide6.QtWidgets import QScrollArea
from pytestqt.qtbot import QtBot

import gui.run.markdown_view as markdown_view
from gui.run.markdown_render import BlockSplitter, RenderedHtml, extends_plainly, render_html
from gui.run.markdown_stream import (
    HIDDEN_BATCH_CHARS,
    MarkdownStream,
)
from gui.run.markdown_view import MarkdownView
from gui.run.slice_cost import SliceCost

DOCUMENT = """# Report

Intro with **bold**, *emphasis*, `code` and a [link](https://example.com/docs).

## Lists

- one
- two
  - nested
- three

1. first

2. second

   continuation of the second item

3. third

| Name | Value |
|------|------:|
| a    | 1     |
| b    | 2     |

```python
def double(x):

    return x * 2
```

> a quote
> over two lines

---

- [x] done
- [ ] to do

Final words.
"""


def make_view(qtbot: QtBot, source: str = "") -> MarkdownView:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    if source:
        view.set_markdown(source)
    return view


def anchor_point(view: MarkdownView, href: str) -> QPoint:
    """Viewport position of the link ``href``, found in the document like a reader's eye."""
    block = view.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.charFormat().anchorHref() == href:
                cursor = view.textCursor()
                cursor.setPosition(fragment.position() + 1)
                return view.cursorRect(cursor).center()
            iterator += 1
        block = block.next()
    raise AssertionError(f"no link {href!r} in the document")


def click(qtbot: QtBot, view: MarkdownView, point: QPoint) -> None:
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)


# ------------------------------------------------------------------------------ safety


def test_raw_html_is_shown_as_text_and_never_executed(qtbot: QtBot) -> None:
    view = make_view(qtbot, "<script>alert('x')</script>\n\nSome <b>bold</b> text.\n")

    text = view.toPlainText()
    assert "<script>alert('x')</script>" in text
    assert "<b>bold</b>" in text
    assert "alert" not in view.toHtml().replace("&lt;script&gt;alert", "")


def test_remote_images_are_never_requested_and_show_their_alt_text(qtbot: QtBot) -> None:
    source = (
        "![build status](https://ci.example.com/badge.png)\n\n"
        '<img src="http://tracker.example.com/pixel.gif">\n'
    )
    view = make_view(qtbot, source)

    assert "[image: build status]" in view.toPlainText()
    assert '<img src="http://tracker.example.com/pixel.gif">' in view.toPlainText()
    assert not [url for url in view.requested_resources if "://" in url]
    remote = QUrl("https://ci.example.com/badge.png")
    assert view.loadResource(int(QTextDocument.ResourceType.ImageResource.value), remote) is None
    assert view.requested_resources == ["https://ci.example.com/badge.png"]


def test_clicking_a_link_opens_it_in_the_system_browser(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    view = make_view(qtbot, "Read [the docs](https://example.com/docs) or [ftp](ftp://x/y).\n")

    assert opened == []  # nothing opens by merely rendering
    click(qtbot, view, anchor_point(view, "https://example.com/docs"))
    click(qtbot, view, anchor_point(view, "ftp://x/y"))

    assert opened == ["https://example.com/docs"]
    assert view.toPlainText().startswith("Read the docs")  # the view did not navigate


# ------------------------------------------------------------------------------ rendering


def test_code_blocks_are_highlighted_and_copied_from_their_link(qtbot: QtBot) -> None:
    code = "def double(x):\n    return x * 2"
    view = make_view(qtbot, f"Before.\n\n```python\n{code}\n```\n")

    keyword = view.document().find("def")
    assert keyword.charFormat().foreground().color().name() != "#000000"
    assert keyword.charFormat().fontWeight() > 400
    click(qtbot, view, anchor_point(view, "baton-copy:0"))

    assert QGuiApplication.clipboard().text() == code


def test_context_menu_inside_a_code_block_offers_copy_code_block(qtbot: QtBot) -> None:
    view = make_view(qtbot, "Text.\n\n```sh\nls -la\n```\n\nAfter.\n")
    inside = view.cursorRect(view.document().find("ls -la")).center()
    outside = view.cursorRect(view.document().find("After")).center()

    menu = view.context_menu_at(inside)
    actions = {action.text(): action for action in menu.actions()}
    assert "Copy code block" in actions
    assert "Copy code block" not in [a.text() for a in view.context_menu_at(outside).actions()]
    actions["Copy code block"].trigger()

    assert QGuiApplication.clipboard().text() == "ls -la"


def test_tables_task_lists_and_strikethrough_are_rendered(qtbot: QtBot) -> None:
    view = make_view(qtbot, DOCUMENT + "\n~~gone~~\n")

    tables = [f for f in view.document().rootFrame().childFrames() if isinstance(f, QTextTable)]
    data = [t for t in tables if t.rows() == 3 and t.columns() == 2]
    assert data, "the Name/Value table"
    assert data[0].cellAt(0, 0).firstCursorPosition().block().text() == "Name"
    text = view.toPlainText()
    assert "☑ done" in text and "☐ to do" in text
    assert view.document().find("gone").charFormat().fontStrikeOut()


def test_a_table_is_drawn_as_a_grid_of_one_pixel_lines(qtbot: QtBot) -> None:
    view = make_view(qtbot, "| Name | Value |\n|---|---|\n| alpha | 1 |\n| beta | 2 |\n")
    colors = view._colors
    table = next(f for f in view.document().rootFrame().childFrames() if isinstance(f, QTextTable))
    image = view.viewport().grab().toImage()
    layout = view.document().documentLayout()

    def cell_box(row: int, column: int) -> QRectF:
        return layout.blockBoundingRect(table.cellAt(row, column).firstCursorPosition().block())

    def shown(x: float, y: float) -> str:
        return str(image.pixelColor(round(x), round(y)).name())

    header, first = cell_box(0, 0), cell_box(1, 0)
    # Inside a cell, left of its text: the cell's padding, painted.
    assert shown(header.left() - 3, header.center().y()) == colors.table_header
    assert shown(first.left() - 3, first.center().y()) == colors.background
    # Down the first column, from the header to the last row: a line of one pixel between
    # two cells, and one at each end.
    column = [shown(first.left() - 3, y) for y in range(image.height())]
    lines = [y for y, color in enumerate(column) if color == colors.table_border]
    assert len(lines) == 4, column
    assert all(b - a > 1 for a, b in itertools.pairwise(lines))


def test_render_html_numbers_code_blocks_from_a_base() -> None:
    rendered = render_html("```\na\n```\n\n```\nb\n```\n", code_base=5)

    assert rendered.code_blocks == ["a", "b"]
    assert "baton-copy:5" in rendered.html and "baton-copy:6" in rendered.html


# ------------------------------------------------------------------------------ streaming


def stream_in_pieces(stream: MarkdownStream, text: str, seed: int, flush_every: float) -> None:
    rng = random.Random(seed)
    position = 0
    while position < len(text):
        size = rng.randint(1, 14)
        stream.feed(text[position : position + size])
        position += size
        if rng.random() < flush_every:
            stream.flush()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_streamed_text_ends_identical_to_rendering_it_once(qtbot: QtBot, seed: int) -> None:
    once = make_view(qtbot, DOCUMENT)
    stream = MarkdownStream()
    qtbot.addWidget(stream)

    stream_in_pieces(stream, DOCUMENT, seed, flush_every=0.3)
    stream.finish()

    assert stream.shown_text() == once.toPlainText()
    assert stream.block_renders > 2  # it really went block by block


def test_finished_blocks_are_rendered_once_and_kept(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources: list[str] = []

    def recording(source: str, *args: object, **kwargs: object) -> RenderedHtml:
        sources.append(source)
        return render_html(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(markdown_view, "render_html", recording)
    stream = MarkdownStream()
    qtbot.addWidget(stream)
    stream.feed("First paragraph, finished once the next block starts.\n\nSecond")
    stream.flush()
    for word in ["", "paragraph", "grows", "word", "by", "word"]:
        stream.feed(word + " ")
        stream.flush()
    stream.feed("\n\nThird.")
    stream.finish()

    assert sum("First paragraph" in source for source in sources) == 1
    # The tail rendered once, then plain words appended; rendered again as a finished block.
    assert sum(source.startswith("Second") for source in sources) == 2
    assert stream.tail_appends == 6
    assert stream.shown_text() == (
        "First paragraph, finished once the next block starts.\n"
        "Second paragraph grows word by word\nThird."
    )


def test_the_open_tail_is_rendered_at_most_once_per_interval(qtbot: QtBot) -> None:
    stream = MarkdownStream()
    qtbot.addWidget(stream)
    for index in range(300):
        stream.feed(f"word{index} ")

    assert stream.tail_renders == 0  # nothing is rendered inside feed()
    with qtbot.waitSignal(stream.rendered):
        pass
    assert stream.tail_renders == 1
    assert stream.shown_text().startswith("word0 word1")
    assert stream.shown_text().strip().endswith("word299")


def test_finish_renders_the_final_state_at_once(qtbot: QtBot) -> None:
    stream = MarkdownStream()
    qtbot.addWidget(stream)
    stream.feed("# Title\n\nBody with `code`")
    stream.finish()

    assert stream.is_finished()
    assert stream.shown_text() == "Title\nBody with code"


def test_only_words_that_cannot_change_markup_skip_rendering(qtbot: QtBot) -> None:
    stream = MarkdownStream()
    qtbot.addWidget(stream)
    for piece in ["Plain start", " and more", " **bold", " still", "** done", " after it"]:
        stream.feed(piece)
        stream.flush()
    tail = stream.shown_text()
    assert tail == "Plain start and more bold still done after it"
    # Rendered: 'Plain start', ' **bold', '** done'; appended: the other three.
    assert (stream.tail_renders, stream.tail_appends) == (3, 3)


def test_words_after_a_rendered_trailing_space_keep_it(qtbot: QtBot) -> None:
    """A tail ending in a space renders without it (Markdown drops a paragraph's trailing
    spaces); plain words appended next must bring the space back, not glue onto the last
    word ("settingsand" was shown while the answer streamed)."""
    stream = MarkdownStream()
    qtbot.addWidget(stream)
    shown = []
    for piece in ["The function ", "`load` ", "reads ", "**settings** ", "and ", "validates "]:
        stream.feed(piece)
        stream.flush()
        shown.append(stream.shown_text().strip())
    assert shown[2:] == [
        "The function load reads",
        "The function load reads settings",
        "The function load reads settings and",
        "The function load reads settings and validates",
    ]
    assert stream.tail_appends == 1  # "validates ": after a closed span, words are rendered
    weights = dict(line_fragments(stream, "settings"))
    assert weights["settings"] > weights[" and validates "]  # the words after bold are not bold


def line_fragments(stream: MarkdownStream, word: str) -> list[tuple[str, int]]:
    """(text, font weight) of each run of characters in the shown line with ``word``."""
    (view,) = [v for v in stream.findChildren(MarkdownView) if word in v.toPlainText()]
    block = view.document().lastBlock()
    fragments = []
    iterator = block.begin()
    while not iterator.atEnd():
        fragment = iterator.fragment()
        fragments.append((fragment.text(), fragment.charFormat().fontWeight()))
        iterator += 1
    return fragments


def test_a_short_live_answer_lives_in_one_view_from_first_word_to_last(qtbot: QtBot) -> None:
    """A text item costs its views: while the answer streams, only the tail shows it; when
    it finishes, that same view keeps it (re-rendered whole only if its last words were
    appended plainly or came after the last render) — none made, none deleted."""
    stream, shown = streaming(qtbot, "The function `load` reads ")
    assert stream.views() == []  # no finished text yet: no view for it either
    stream.feed("**settings** and")
    stream.finish()

    assert stream.findChildren(MarkdownView) == [shown]
    assert stream.views() == [shown]
    assert stream.shown_text() == "The function load reads settings and"
    once = QTextDocument()
    once.setHtml(render_html("The function `load` reads **settings** and").html)
    assert shown.document().toPlainText() == once.toPlainText()


def test_a_finished_fence_gets_its_colours_in_the_kept_view(qtbot: QtBot) -> None:
    stream, shown = streaming(qtbot, "```python\nx = 1\n")
    plain = shown.document().toHtml()
    stream.finish()  # an unclosed fence in a finished answer: highlighted like a closed one
    assert stream.views() == [shown]
    assert shown.document().toHtml() != plain


def streaming(qtbot: QtBot, first: str) -> tuple[MarkdownStream, MarkdownView]:
    """A shown stream that has rendered ``first``, and the one view showing it."""
    stream = MarkdownStream()
    qtbot.addWidget(stream)
    stream.show()
    stream.feed(first)
    stream.flush()
    (shown,) = stream.findChildren(MarkdownView)
    return stream, shown


def read_to_the_end(area: QScrollArea) -> bool:
    """The reader scrolls to the end — again while the end still moves: Qt lays a long
    document out a time slice at a time, so on a busy machine the text keeps growing after
    the first scroll and a single ``setValue(maximum())`` can land above the end. Caught up
    once, when seen: the tail renders once however often the reader scrolls."""
    bar = area.verticalScrollBar()
    bar.setValue(bar.maximum())
    return True


def stream_in_area(qtbot: QtBot, width: int, height: int) -> tuple[MarkdownStream, QScrollArea]:
    """A stream in a shown scroll area, as the run view stacks it."""
    stream = MarkdownStream()
    area = QScrollArea()
    qtbot.addWidget(area)
    area.setWidgetResizable(True)
    area.setWidget(stream)
    area.resize(width, height)
    area.show()
    return stream, area


def test_behind_a_flood_being_laid_out_only_finished_text_shows(qtbot: QtBot) -> None:
    """A flood finishes far more text in one interval than a turn lays out: the screen shows
    a prefix of the answer while the backlog is laid out a slice per turn, never the open
    last block after a gap; that block shows once the backlog is done."""
    stream, _area = stream_in_area(qtbot, 600, 400)
    blocks = "".join(f"Paragraph {n} of a flood, with **bold** words.\n\n" for n in range(400))
    once = MarkdownView()
    qtbot.addWidget(once)
    once.set_markdown(blocks + "The open line still open")
    stream.feed(blocks + "The open line")
    stream.flush()

    assert not stream.is_laid_out()
    shown = [view for view in stream.findChildren(MarkdownView) if view.isVisible()]
    assert shown == [view for view in stream.views() if view.isVisible()]  # no tail view
    prefix = "\n".join(view.plain_text() for view in shown)
    assert prefix.startswith("Paragraph 0") and once.toPlainText().startswith(prefix)
    stream.feed(" still open")  # more words while the backlog is laid out: still not shown
    stream.flush()
    assert not any(v.toPlainText().endswith("open") for v in stream.findChildren(MarkdownView))

    qtbot.waitUntil(stream.is_laid_out, timeout=20_000)
    qtbot.waitUntil(
        lambda: any(
            v.isVisible() and v.toPlainText() == "The open line still open"
            for v in stream.findChildren(MarkdownView)
        )
    )
    assert stream.shown_text() == once.toPlainText()


def test_a_slice_is_priced_by_its_tables_and_code_not_its_length() -> None:
    """Tables' rows and code blocks cost most to lay out; the estimate scales to the machine,
    towards a slow slice at once and a fast one slowly."""
    prose = "Words of a paragraph, plain. " * 60 + "\n\n"
    table = "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 28 + "\n"
    code = "```python\nx = 1\n```\n\n" * 4
    cost = SliceCost()
    assert len(table) < len(prose)
    assert cost.estimate(table, 0, len(table)) > 2 * cost.estimate(prose, 0, len(prose))
    assert cost.estimate(code, 0, len(code)) > cost.estimate(prose, 0, len(prose))
    both = prose + table
    assert cost.estimate(both, len(prose), len(both)) == cost.estimate(table, 0, len(table))

    before = cost.estimate(prose, 0, len(prose))
    cost.learn(prose, 0, len(prose), 3 * before)  # slower than thought: believed at once
    slow = cost.estimate(prose, 0, len(prose))
    assert slow > 1.9 * before
    cost.learn(prose, 0, len(prose), before / 3)  # faster: believed a little
    assert before < cost.estimate(prose, 0, len(prose)) < slow


def scrolled_to_the_top(qtbot: QtBot) -> tuple[MarkdownStream, QScrollArea]:
    """A stream in a short scroll area, 60 paragraphs in, the reader back at the top."""
    stream, area = stream_in_area(qtbot, 500, 300)
    stream.feed("".join(f"Paragraph {n} of the answer.\n\n" for n in range(60)) + "Open")
    stream.flush()
    qtbot.waitUntil(lambda: area.verticalScrollBar().maximum() > 0)
    area.verticalScrollBar().setValue(0)  # the reader went back to the top
    return stream, area


def test_a_tail_scrolled_out_of_sight_waits_until_it_is_seen(qtbot: QtBot) -> None:
    stream, area = scrolled_to_the_top(qtbot)
    renders = stream.tail_renders
    for word in [" **tail", "** words", " `more`"]:
        stream.feed(word)
        stream.flush()
    assert stream.tail_renders == renders  # nothing drawn where nobody looks

    qtbot.waitUntil(lambda: read_to_the_end(area) and stream.tail_renders == renders + 1)
    assert stream.shown_text().endswith("Open tail words more")


def test_finished_blocks_out_of_sight_wait_for_a_batch_or_the_reader(qtbot: QtBot) -> None:
    """Each append re-fits heights and repaints whatever its size: blocks nobody sees are
    appended a batch at a time, or when the reader scrolls down to them."""
    stream, area = scrolled_to_the_top(qtbot)

    def finished_text() -> str:
        return "\n".join(view.toPlainText() for view in stream.views())

    blocks = stream.block_renders
    for n in range(10):
        stream.feed(f" end.\n\nShort block {n}")
        stream.flush()
    assert stream.block_renders == blocks  # ten finished blocks, none appended yet
    assert "Short block 0" not in finished_text()

    long_blocks = "".join(f" end.\n\nLong block {n} " + "word " * 30 for n in range(30))
    assert HIDDEN_BATCH_CHARS < len(long_blocks) < 2 * HIDDEN_BATCH_CHARS - 300
    stream.feed(long_blocks)
    stream.flush()  # a batch is waiting: appended in one go, still out of sight
    assert stream.block_renders == blocks + 1
    assert "Short block 9 end." in finished_text()
    assert "Long block 28" in finished_text()

    stream.feed(" end.\n\nLast block")
    stream.flush()
    assert "Long block 29" not in finished_text()
    qtbot.waitUntil(lambda: read_to_the_end(area) and "Long block 29" in finished_text())
    assert stream.shown_text().endswith("Last block")


def long_answer(paragraphs: int) -> str:
    return "".join(
        f"## Part {n}\n\nParagraph {n} with **bold** and `code`: " + "words " * 40 + "\n\n"
        for n in range(paragraphs)
    )


def test_segments_out_of_sight_are_parked_and_rendered_again_when_seen(qtbot: QtBot) -> None:
    """A long answer's rendering is dropped where nobody looks, without moving anything; the
    reader who scrolls back finds it rendered, and the text is the text rendered at once."""
    text = long_answer(300)  # ~100,000 characters: 8 or more segments
    stream, area = stream_in_area(qtbot, 600, 400)
    for start in range(0, len(text), 2_000):
        stream.feed(text[start : start + 2_000])
        stream.flush()
        read_to_the_end(area)  # the reader follows the answer
    stream.finish()
    qtbot.waitUntil(stream.is_laid_out)
    views = stream.views()
    assert len(views) >= 8
    qtbot.waitUntil(lambda: read_to_the_end(area) and views[0].is_parked())
    parked = [view for view in views if view.is_parked()]
    assert len(parked) >= len(views) - 3
    assert all(view.document().isEmpty() for view in parked)

    height = stream.sizeHint().height()
    once = QTextDocument()
    once.setHtml(render_html(text).html)
    assert stream.shown_text() == once.toPlainText()  # parked segments included

    area.verticalScrollBar().setValue(0)  # the reader goes back to the top
    qtbot.waitUntil(lambda: not views[0].is_parked())
    assert views[0].toPlainText().startswith("Part 0\nParagraph 0 with bold and code:")
    assert abs(stream.sizeHint().height() - height) <= 2  # nothing moved
    qtbot.waitUntil(lambda: views[-2].is_parked())  # and the end, out of sight, parks again


def test_a_search_renders_the_parked_segments_it_marks(qtbot: QtBot) -> None:
    stream, _area = stream_in_area(qtbot, 600, 400)
    stream.set_text(long_answer(300), finished=True)
    qtbot.waitUntil(stream.is_laid_out)
    assert stream.views()[3].is_parked()

    woken = stream.unpark_matching(re.compile("Paragraph 150 "))

    assert woken == 1
    (shown,) = [view for view in stream.views() if "Paragraph 150 " in view.toPlainText()]
    assert not shown.is_parked()


@pytest.mark.parametrize(
    ("source", "added", "plain"),
    [
        ("Some text", " more words", True),
        ("Some text,", " 42 more.", True),
        ("Some **bold**", " more", False),  # right after a closing delimiter
        ("Some **bold** ", "more", False),  # a space after it changes nothing
        ("Some text ", "more", True),
        ("Some text", " with *emphasis", False),
        ("A [link](https://exa", "mple", False),  # the destination may still close
        ("A [link](https://example.com) and", " more", True),
        ("Text ", " two spaces", False),  # HTML would collapse them
        ("Line", "\nnext", False),
        ("", "start", False),
    ],
)
def test_plain_extension_rule(source: str, added: str, plain: bool) -> None:
    assert extends_plainly(source, added) is plain


# ------------------------------------------------------------------------------ splitting


def finished_prefix(text: str) -> str:
    splitter = BlockSplitter()
    return text[: splitter.advance(text)]


def test_blocks_are_cut_before_a_new_unindented_block() -> None:
    assert finished_prefix("One.\n\nTwo.\n\nThree") == "One.\n\nTwo.\n\n"


def test_code_fences_with_blank_lines_are_never_cut() -> None:
    text = "Intro.\n\n````md\n```\ninner\n\n```\nstill code\n\nmore\n"
    assert finished_prefix(text) == "Intro.\n\n"
    closed = text + "````\n\nAfter.\n"
    assert finished_prefix(closed) == closed.removesuffix("After.\n")


def test_lists_and_indented_continuations_stay_whole() -> None:
    text = "- a\n\n- b\n\n  more of b\n\n1. x\n\n2. y\n\nAfter"
    assert finished_prefix(text) == text.removesuffix("After")
    assert finished_prefix("Para\n\n    indented code\n\n") == ""
    assert finished_prefix("Para\n\n1") == ""  # "1" may still become "1. item"
