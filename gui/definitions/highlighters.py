"""Syntax highlighting for definition files: YAML frontmatter + a Markdown body.

One highlighter serves agent files (``---`` frontmatter, then Markdown), preset files (pure
YAML) and plain Markdown, chosen by ``mode``. It works line by line with a block state
(frontmatter / body / fenced code), so typing re-highlights only the edited line and the
ones whose state changed — never the whole document.

Colours come from the palette (:func:`gui.theme.foreground`): call :meth:`set_palette` when
the colour scheme changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from typing import Literal

from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)

from gui.theme import foreground, secondary_text, tint

Mode = Literal["frontmatter", "yaml", "markdown"]

# Block states (QSyntaxHighlighter uses -1 for "no previous block").
_FRONTMATTER, _BODY, _FENCE, _YAML = 1, 2, 3, 4


class _Pattern:
    """A regular expression compiled when first used: the editor is built with the window's
    first view, but highlights nothing until a file is opened, and compiling these fifteen
    took ~10 ms of start-up."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags = source, flags

    @cached_property
    def _compiled(self) -> re.Pattern[str]:
        return re.compile(self._source, self._flags)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self._compiled.match(text, pos)

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self._compiled.search(text, pos)

    def finditer(self, text: str, pos: int = 0) -> Iterator[re.Match[str]]:
        return self._compiled.finditer(text, pos)


_YAML_KEY = _Pattern(r"""^(\s*(?:-\s+)?)((?:"[^"]*"|'[^']*'|[^\s#'"{\[][^:#]*?))\s*:(?=\s|$)""")
_YAML_STRING = _Pattern(r"""(?<!\w)(?:"(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?)""")
_YAML_CONSTANT = _Pattern(
    r"(?<![\w.-])(?:true|false|yes|no|null|inherit|~|-?\d+(?:\.\d+)?)(?![\w.-])", re.IGNORECASE
)
_YAML_DASH = _Pattern(r"^\s*(-)(?=\s|$)")
_YAML_BLOCK = _Pattern(r"[|>][-+]?\s*$")

_MD_HEADING = _Pattern(r"^\s{0,3}#{1,6}(?:\s.*)?$")
_MD_QUOTE = _Pattern(r"^\s{0,3}>.*$")
_MD_BULLET = _Pattern(r"^\s*(?:[-*+]|\d+[.)])(?=\s)")
_MD_RULE = _Pattern(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
_MD_FENCE = _Pattern(r"^\s{0,3}(```|~~~)")
_MD_CODE = _Pattern(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_MD_STRONG = _Pattern(r"(\*\*|__)(?=\S).+?(?<=\S)\1")
_MD_EMPHASIS = _Pattern(
    r"(?<![*\w])\*(?=[^\s*])[^*]+?(?<=\S)\*(?!\*)|(?<![_\w])_(?=\S)[^_]+?(?<=\S)_(?![_\w])"
)
_MD_LINK = _Pattern(r"\[[^\]]+\]\([^)\s]+\)|<https?://[^>]+>|https?://\S+")
_MD_PLACEHOLDER = _Pattern(r"\{[A-Za-z_][\w-]*\}|\$(?:@|ARGUMENTS|\d+)")


class DefinitionHighlighter(QSyntaxHighlighter):
    """Highlights one :class:`QTextDocument`; see the module docstring for the modes."""

    def __init__(self, document: QTextDocument, palette: QPalette, mode: Mode = "frontmatter"):
        super().__init__(document)
        self._mode: Mode = mode
        self.formats: dict[str, QTextCharFormat] = {}
        self._build_formats(palette)

    # -- public API ----------------------------------------------------------------------

    def set_palette(self, palette: QPalette) -> None:
        self._build_formats(palette)
        self.rehighlight()

    # -- formats -------------------------------------------------------------------------

    def _build_formats(self, palette: QPalette) -> None:
        def fmt(
            color: QColor | None = None,
            *,
            bold: bool = False,
            italic: bool = False,
            background: QColor | None = None,
            underline: bool = False,
        ) -> QTextCharFormat:
            result = QTextCharFormat()
            if color is not None:
                result.setForeground(color)
            if bold:
                result.setFontWeight(QFont.Weight.Bold)
            if italic:
                result.setFontItalic(True)
            if background is not None:
                result.setBackground(background)
            if underline:
                result.setFontUnderline(True)
            return result

        muted = secondary_text(palette)
        self.formats = {
            "delimiter": fmt(muted, bold=True),
            "key": fmt(foreground(palette, 208, 0.7), bold=True),
            "string": fmt(foreground(palette, 135, 0.55)),
            "constant": fmt(foreground(palette, 28, 0.75)),
            "comment": fmt(muted, italic=True),
            "punctuation": fmt(muted),
            "heading": fmt(foreground(palette, 250, 0.6), bold=True),
            "quote": fmt(muted, italic=True),
            "bullet": fmt(foreground(palette, 28, 0.75), bold=True),
            "code": fmt(foreground(palette, 335, 0.6), background=tint(palette, 335, 0.07)),
            "fence": fmt(muted, background=tint(palette, 220, 0.06)),
            "strong": fmt(bold=True),
            "emphasis": fmt(italic=True),
            "link": fmt(foreground(palette, 208, 0.7), underline=True),
            "placeholder": fmt(foreground(palette, 28, 0.75), bold=True),
        }

    # -- highlighting --------------------------------------------------------------------

    def highlightBlock(self, text: str) -> None:
        previous = self.previousBlockState()
        if self._mode == "yaml":
            self.setCurrentBlockState(_YAML)
            self._yaml(text)
            return
        if previous == -1:  # first line
            if self._mode == "frontmatter" and text.strip() == "---":
                self._apply(0, len(text), "delimiter", text)
                self.setCurrentBlockState(_FRONTMATTER)
                return
            previous = _BODY
        if previous == _FRONTMATTER:
            if text.strip() in ("---", "..."):
                self._apply(0, len(text), "delimiter", text)
                self.setCurrentBlockState(_BODY)
            else:
                self.setCurrentBlockState(_FRONTMATTER)
                self._yaml(text)
            return
        if previous == _FENCE:
            self._apply(0, len(text), "fence", text)
            self.setCurrentBlockState(_BODY if _MD_FENCE.match(text) else _FENCE)
            return
        self.setCurrentBlockState(_BODY)
        self._markdown(text)

    def _yaml(self, text: str) -> None:
        comment = _comment_start(text)
        code = text if comment is None else text[:comment]
        dash = _YAML_DASH.match(code)
        if dash:
            self._apply(dash.start(1), 1, "punctuation", text)
        key = _YAML_KEY.match(code)
        value_start = 0
        if key:
            self._apply(key.start(2), len(key.group(2)), "key", text)
            value_start = key.end()
        for match in _YAML_CONSTANT.finditer(code, value_start):
            self._apply(match.start(), match.end() - match.start(), "constant", text)
        for match in _YAML_STRING.finditer(code, value_start):
            self._apply(match.start(), match.end() - match.start(), "string", text)
        for match in _MD_PLACEHOLDER.finditer(code, value_start):
            self._apply(match.start(), match.end() - match.start(), "placeholder", text)
        block = _YAML_BLOCK.search(code, value_start)
        if block:
            self._apply(block.start(), 1, "punctuation", text)
        if comment is not None:
            self._apply(comment, len(text) - comment, "comment", text)

    def _markdown(self, text: str) -> None:
        if _MD_FENCE.match(text):
            self._apply(0, len(text), "fence", text)
            self.setCurrentBlockState(_FENCE)
            return
        if _MD_RULE.match(text):
            self._apply(0, len(text), "delimiter", text)
            return
        if _MD_HEADING.match(text):
            self._apply(0, len(text), "heading", text)
            return
        if _MD_QUOTE.match(text):
            self._apply(0, len(text), "quote", text)
        bullet = _MD_BULLET.match(text)
        if bullet:
            self._apply(bullet.start(), bullet.end() - bullet.start(), "bullet", text)
        for pattern, name in (
            (_MD_STRONG, "strong"),
            (_MD_EMPHASIS, "emphasis"),
            (_MD_LINK, "link"),
            (_MD_PLACEHOLDER, "placeholder"),
            (_MD_CODE, "code"),  # last: code spans win over emphasis inside them
        ):
            for match in pattern.finditer(text):
                self._apply(match.start(), match.end() - match.start(), name, text)

    def _apply(self, start: int, length: int, name: str, text: str) -> None:
        """setFormat with Python indices converted to Qt's UTF-16 positions."""
        if length <= 0:
            return
        if text.isascii() or all(ord(ch) <= 0xFFFF for ch in text):
            self.setFormat(start, length, self.formats[name])
            return
        begin = _utf16_len(text[:start])
        self.setFormat(begin, _utf16_len(text[start : start + length]), self.formats[name])


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _comment_start(text: str) -> int | None:
    """Index of a YAML comment's ``#`` (outside quotes, at the start or after a space)."""
    quote: str | None = None
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"" and (index == 0 or not text[index - 1].isalnum()):
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return index
    return None
