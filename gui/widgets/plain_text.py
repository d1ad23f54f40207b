"""Markdown source as one plain line, for summaries and snippets (a folded step, a document
in the list): the marks that read as noise are dropped, the words — identifiers with
underscores included — are kept."""

from __future__ import annotations

import re

from PySide6.QtGui import Qt

_MARKS = re.compile(
    r"""`+                      # code spans
    | \*\* | __                 # bold
    | ^\s{0,3}\#{1,6}\s+        # heading marks
    | ^\s{0,3}>\s?              # quote marks
    | ^\s*\|?[\s:|-]*-{3,}[\s:|-]*$  # table rules and horizontal rules
    | \|                        # table cell bars
    | !?\[(?=[^\]]*\]\()        # the opening bracket of a link or image
    | \]\([^)]*\)               # and its target
    """,
    re.MULTILINE | re.VERBOSE,
)


def plain_markdown(text: str) -> str:
    """``text`` without Markdown marks: inline ones vanish (``**a**`` reads ``a``), the ones
    that stand between cells or lines become a space (see :func:`markdown_line`)."""
    return _MARKS.sub(lambda m: "" if m.group()[0] in "`*_[]!" else " ", text)


def markdown_line(text: str) -> str:
    """``text`` as one plain line. The marks go first, while headings, quotes and tables
    still start their lines; then the whitespace is folded, so no line begins with a gap."""
    return " ".join(plain_markdown(text).split())


def plain_tip(text: str) -> str:
    """``text`` as a tooltip that shows it as written.

    Qt renders a tooltip as HTML when it looks like HTML (``Qt.mightBeRichText``): a command,
    a file name or an answer from a model or a checkout would restyle itself, or load a local
    image. Such a text is escaped inside a paragraph that keeps its spaces and line breaks;
    any other is returned as it is."""
    if not Qt.mightBeRichText(text):
        return text
    import html  # rarely needed, and not on the way to the first paint

    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=False)}</p>"
