"""One plain line from Markdown source: marks dropped, words (identifiers too) kept."""

from __future__ import annotations

from gui.widgets.plain_text import markdown_line, plain_markdown


def test_marks_go_and_identifiers_stay() -> None:
    source = (
        "## Goal\nAdd a `--json` flag **now** to load_items and __init__\n"
        "| File | Lines |\n|---|---|\n| a.py | 3 |\n> see [the docs](http://x)"
    )
    assert markdown_line(source) == (
        "Goal Add a --json flag now to load_items and init File Lines a.py 3 see the docs"
    )


def test_inline_marks_leave_no_gap() -> None:
    assert plain_markdown("**bold** and `code`") == "bold and code"


def test_a_heading_first_leaves_no_leading_gap() -> None:
    assert markdown_line("## Plan for `load_run`\n\n## Steps\n- read it") == (
        "Plan for load_run Steps - read it"
    )
