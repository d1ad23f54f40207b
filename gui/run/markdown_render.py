"""Markdown → the HTML subset QTextDocument understands, and where a growing source may be cut.

Two jobs, both free of widgets so they can be tested and timed alone:

* :func:`render_html` turns Markdown into HTML with markdown-it-py (CommonMark, tables,
  strikethrough, task lists). Raw HTML is **off**: ``<script>`` or ``<img>`` in a model's answer
  reaches the screen as text. Images are never loaded, not even requested: they become their
  alt text. Fenced code is highlighted by Pygments with inline styles (QTextDocument has no
  class-based CSS) and framed in a table whose header carries a ``Copy`` link
  (``baton-copy:<n>``), so the browser can copy the code without parsing HTML back.
* :class:`BlockSplitter` finds the *finished* prefix of a Markdown source that is still
  growing: everything before a blank line that no later text can change. The live renderer
  renders that prefix once and keeps it; only the open tail is re-rendered.

The cut rule is deliberately conservative — a wrong cut changes how the text renders, a missed
one only costs a little time: a cut lies at the start of a line that follows a blank line,
begins in column 0, is not a list item (so lists stay whole and numbered), and is outside a
code fence (fences are tracked with their marker and length, at any indentation).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from mdit_py_plugins.tasklists import tasklists_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

COPY_SCHEME = "baton-copy"
"""Anchors ``baton-copy:<n>`` copy the n-th code block of the view that rendered them."""

_HIGHLIGHT_LIMIT = 200_000
"""Code blocks longer than this are shown plain: Pygments would take seconds on them."""


@dataclass(frozen=True)
class MarkdownColors:
    """Colours and fonts the HTML is rendered with, taken from the widget's palette.

    Frozen and hashable so a view can tell whether a palette change really changes the look.
    """

    muted: str = "#6b6f76"
    code_background: str = "#f5f6f8"
    code_border: str = "#dfe2e6"
    inline_code_background: str = "#eef0f3"
    table_border: str = "#d5d8dc"
    table_header: str = "#f0f2f4"
    background: str = "#ffffff"
    """What the text is shown on: a table's cells are painted with it (see
    :func:`_render_table_open`)."""
    link: str = "#2f6fd0"
    quote_bar: str = "#c9cdd2"
    monospace: str = "monospace"
    dark: bool = False

    @property
    def pygments_style(self) -> str:
        return "github-dark" if self.dark else "default"


@dataclass
class RenderedHtml:
    html: str
    code_blocks: list[str] = field(default_factory=list)
    """The code of each fenced block, in order; ``baton-copy:<base + i>`` refers to item i."""


# ----------------------------------------------------------------------------------- rendering

_BLOCK_NEWLINE = re.compile(
    r"(</?(?:p|h[1-6]|ul|ol|li|blockquote|table|thead|tbody|tr|th|td)(?:\s[^>]*)?>|<hr />)\n"
)
"""Newlines markdown-it puts between block tags: Qt would turn them into trailing spaces."""


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.use(tasklists_plugin)
    for name, rule in _RULES.items():
        md.add_render_rule(name, rule)
    return md


COMMON_LANGUAGES = (
    *("python", "bash", "json", "javascript", "typescript", "yaml", "toml", "diff", "sql"),
    *("rust", "go", "c", "cpp", "java", "html", "css", "markdown", "text"),
)
"""Lexers prepared ahead of time (:func:`prepare_highlighting`)."""


def prepare_highlighting() -> None:
    """Build the common Pygments lexers on a worker thread. A lexer class compiles its
    regular expressions when first used — 20-100 ms each, which would otherwise stall the
    window at the first code block in that language of a session."""
    threading.Thread(target=_build_lexers, name="baton-lexers", daemon=True).start()


def _build_lexers() -> None:
    for language in COMMON_LANGUAGES:
        try:
            highlight("x", get_lexer_by_name(language), HtmlFormatter(noclasses=True))
        except ClassNotFound:
            continue


@lru_cache(maxsize=64)
def _highlighted(code: str, language: str, style: str) -> str | None:
    """Pygments HTML spans for ``code``; cached, so a closed fence in a re-rendered tail (or a
    palette switch back and forth) is highlighted once."""
    if not language or len(code) > _HIGHLIGHT_LIMIT:
        return None
    lexer = _lexer(language)
    return None if lexer is None else highlight(code, lexer, _formatter(style))


@lru_cache(maxsize=32)
def _lexer(language: str) -> Lexer | None:
    """The lexer for a fence's language, looked up once: the lookup walks Pygments' whole
    table (and its plugins for an unknown name), a few milliseconds per code block."""
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=4)
def _formatter(style: str) -> HtmlFormatter[str]:
    """One formatter per style: building one compiles the style's CSS (~1 ms)."""
    return HtmlFormatter(noclasses=True, nowrap=True, style=style)


def _render_fence(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    token = tokens[idx]
    colors: MarkdownColors = env["colors"]
    language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    code = token.content.removesuffix("\n")
    plain = env.get("plain_fence") == idx
    body = None if plain else _highlighted(code, language.lower(), colors.pygments_style)
    if body is None:
        body = escapeHtml(code)
    body = body.removesuffix("\n")
    codes: list[str] = env["codes"]
    number = env["code_base"] + len(codes)
    codes.append(code)
    label = escapeHtml(language) if language else "&nbsp;"
    line = f"1px solid {colors.code_border}"
    head = f"padding:3px 10px; border-top:{line}; border-bottom:{line}"
    # border="0" plus per-cell borders: a table border would also draw a divider between the
    # two header cells.
    return (
        f'<table width="100%" border="0" cellspacing="0" cellpadding="0" '
        f'style="border-collapse:collapse; margin-top:2px; margin-bottom:4px; '
        f'background-color:{colors.code_background}">'
        f'<tr><td style="{head}; border-left:{line}">'
        f'<span style="color:{colors.muted}; font-size:small">{label}</span></td>'
        f'<td align="right" style="{head}; border-right:{line}">'
        f'<a href="{COPY_SCHEME}:{number}" style="color:{colors.link}; text-decoration:none; '
        f'font-size:small">Copy</a></td></tr>'
        f'<tr><td colspan="2" style="padding:6px 10px; border-left:{line}; '
        f'border-right:{line}; border-bottom:{line}">'
        f'<pre style="margin:0; white-space:pre-wrap; font-family:{colors.monospace}">{body}'
        "</pre></td></tr></table>"
    )


def _render_code_inline(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    colors: MarkdownColors = env["colors"]
    return (
        f'<span style="font-family:{colors.monospace}; '
        f'background-color:{colors.inline_code_background}">'
        f"{escapeHtml(tokens[idx].content)}</span>"
    )


def _render_image(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    """Images are never fetched (privacy, and no network surprises): the alt text stands in."""
    colors: MarkdownColors = env["colors"]
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    return f'<span style="color:{colors.muted}">[image: {escapeHtml(alt)}]</span>'


def _render_html(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    """Raw HTML is disabled in the parser; the only HTML tokens left come from the task-list
    plugin (checkboxes). Anything else is shown as text, never passed through."""
    content = tokens[idx].content
    if content.startswith('<input class="task-list-item-checkbox"'):
        return "☑" if 'checked="checked"' in content else "☐"
    return escapeHtml(content)


def _render_table_open(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    """The grid is the table's own background showing through one pixel between the cells
    (painted with the text's background), not cell borders: Qt lays out and paints a table
    with ``border-collapse`` two to three times slower (a 30-row table: 25 vs 13 ms), which
    made tables most of a long answer's layout time."""
    colors: MarkdownColors = env["colors"]
    return (
        f'<table cellspacing="1" cellpadding="0" bgcolor="{colors.table_border}" '
        'style="margin-top:2px; margin-bottom:4px">'
    )


def _render_cell_open(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    colors: MarkdownColors = env["colors"]
    token = tokens[idx]
    style = str(token.attrGet("style") or "")
    fill = colors.table_header if token.tag == "th" else colors.background
    style += f"; padding:4px 8px; background-color:{fill}; vertical-align:middle"
    token.attrSet("style", style.lstrip("; "))
    return str(self.renderToken(tokens, idx, options, env))


def _render_blockquote_open(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    """A quote is a table whose thin first cell draws the bar (Qt has no border-left)."""
    colors: MarkdownColors = env["colors"]
    return (
        '<table border="0" cellspacing="0" cellpadding="0" style="margin-top:2px; '
        f'margin-bottom:6px"><tr><td width="3" style="background-color:{colors.quote_bar}">'
        f'</td><td style="padding-left:10px; color:{colors.muted}">'
    )


def _render_blockquote_close(
    self: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    return "</td></tr></table>"


_RULES = {
    "fence": _render_fence,
    "code_block": _render_fence,
    "code_inline": _render_code_inline,
    "image": _render_image,
    "html_inline": _render_html,
    "html_block": _render_html,
    "table_open": _render_table_open,
    "th_open": _render_cell_open,
    "td_open": _render_cell_open,
    "blockquote_open": _render_blockquote_open,
    "blockquote_close": _render_blockquote_close,
}


def render_html(
    source: str,
    colors: MarkdownColors | None = None,
    *,
    code_base: int = 0,
    open_fence: bool = False,
) -> RenderedHtml:
    """Render ``source``; code blocks are numbered from ``code_base`` for their copy links.

    ``open_fence`` says the source ends inside an unclosed fence that is still streaming: that
    block is shown unhighlighted, since highlighting it again at every update would cost more
    than everything else together. It gets its colours once the fence closes.
    """
    md = _parser()
    env: dict[str, Any] = {"colors": colors or MarkdownColors(), "codes": [], "code_base": 0}
    env["code_base"] = code_base
    tokens = md.parse(source, env)
    if open_fence:
        fences = [i for i, t in enumerate(tokens) if t.type in ("fence", "code_block")]
        if fences:
            env["plain_fence"] = fences[-1]
    html = md.renderer.render(tokens, md.options, env)
    return RenderedHtml(_BLOCK_NEWLINE.sub(r"\1", html), env["codes"])


# ------------------------------------------------------------------------------- plain deltas

_MARKUP = frozenset("\\`*_[]()<>!&|~#=+\n\r\t")
"""Characters that may open, close or change a Markdown construct (or a line's meaning)."""
_PLAIN_END = frozenset(" .,;:?'\"-/%$@^")
"""Besides letters and digits, what ``source`` may end with for plain text to follow it."""


def extends_plainly(source: str, added: str) -> bool:
    """Whether ``source + added`` renders as ``source``'s rendering with ``added`` appended as
    ordinary text in the current format — so a live view may append ``added`` as it is instead
    of rendering Markdown again.

    Conservative, like the block splitter: ``added`` has no markup character and no line break,
    no run of spaces (HTML would collapse it), and ``source``'s last character other than a
    space is a letter, digit or simple punctuation (not a closing delimiter such as ``**`` or
    a link's, even with a space after it) and not inside a link destination that ``added``
    could still close.
    """
    if not source or not added or "  " in added or not _MARKUP.isdisjoint(added):
        return False
    if source[-1] == " " and added[0] == " ":
        return False
    # The last visible character decides: after "**bold** " the next words would still take
    # the bold format of the text they are appended to. Found by index: the source is the
    # whole open paragraph, and this runs at every delta (no copy of it).
    end = len(source)
    while end and source[end - 1] == " ":
        end -= 1
    last = source[end - 1 : end]
    if not (last.isalnum() or last in _PLAIN_END):
        return False
    line = source[source.rfind("\n") + 1 :]
    return "](" not in line[line.rfind(")") + 1 :]


# ----------------------------------------------------------------------------------- splitting

_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})(.*)")
_LIST_ITEM = re.compile(r"(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_UNDECIDED_STARTS = frozenset(" \t\r-+*0123456789")
"""First characters of a line that may turn out to be a list item or a continuation."""


class BlockSplitter:
    """Tracks, line by line, how much of a growing Markdown source is finished.

    Feed it the whole source each time (it only scans the lines added since the last call, so
    the cost is linear in the total length); :attr:`finished` is the offset up to which the
    source renders the same whatever comes next. :attr:`in_fence` tells whether the complete
    lines seen so far end inside an open code fence.
    """

    def __init__(self) -> None:
        self.finished = 0
        self._scanned = 0
        self._fence: tuple[str, int] | None = None
        self._after_blank = False
        self._seen_content = False

    @property
    def in_fence(self) -> bool:
        return self._fence is not None

    def advance(self, source: str, limit: int | None = None) -> int:
        """Scan the complete lines added since the last call; return :attr:`finished`.

        A line still being written already closes the block before it when its first
        character cannot start a list item or an indented continuation (a letter, ``#``,
        ``>``, a backtick...): the previous paragraph need not wait for the line to end.
        ``limit``: treat ``source[:limit]`` as all there is so far (lays out a long text in
        slices without copying prefixes of it).
        """
        end_of_source = len(source) if limit is None else min(limit, len(source))
        pos = self._scanned
        while (end := source.find("\n", pos, end_of_source)) >= 0:
            self._scan_line(source, pos, end)
            pos = end + 1
        self._scanned = pos
        if (
            self._after_blank
            and self._fence is None
            and pos < end_of_source
            and source[pos] not in _UNDECIDED_STARTS
        ):
            self.finished = pos
        return self.finished

    def rebase(self, offset: int) -> None:
        """The first ``offset`` characters were cut off the source (rendered and kept): from
        now on offsets count from there. Lets the live renderer keep only the open tail."""
        self.finished -= offset
        self._scanned -= offset

    def _scan_line(self, source: str, start: int, end: int) -> None:
        line = source[start:end]
        stripped = line.strip()
        if self._fence is not None:
            char, length = self._fence
            if (
                stripped.startswith(char * length)
                and stripped.rstrip(char) == ""
                and len(stripped) >= length
            ):
                self._fence = None
            return
        if not stripped:
            self._after_blank = self._seen_content
            return
        if self._after_blank and line[0] not in " \t" and not _LIST_ITEM.match(line):
            self.finished = start
        self._after_blank = False
        self._seen_content = True
        opening = _FENCE_OPEN.match(stripped)
        if opening is not None:
            marker, info = opening.groups()
            if not (marker[0] == "`" and "`" in info):  # ```a``` is inline code, not a fence
                self._fence = (marker[0], len(marker))
