"""Syntax colours (readable in light and dark palettes) and the file format kept on save."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication

from core.definitions.checks import validate_agent_text
from core.workspace.file_state import DiskState, decode, encode, load, save
from gui.definitions.highlighters import DefinitionHighlighter

AGENT = """---
name: scout   # the name
description: "Finds code"
tools: [read, grep]
---
# Heading
Use `grep -n` and **bold** and *soft* words.
```
---
name: not frontmatter
```
"""


def _palette(dark: bool) -> QPalette:
    palette = QPalette(QApplication.palette())
    window, base, text = (
        ("#2b2b2b", "#1e1e1e", "#e6e6e6") if dark else ("#efefef", "#ffffff", "#1a1a1a")
    )
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        palette.setColor(group, QPalette.ColorRole.Window, QColor(window))
        palette.setColor(group, QPalette.ColorRole.Base, QColor(base))
        palette.setColor(group, QPalette.ColorRole.Text, QColor(text))
    return palette


def _format_at(document: QTextDocument, line: int, column: int) -> str | None:
    """The name of the highlighter format at (0-based) line/column, if any."""
    block = document.findBlockByNumber(line)
    for fmt_range in block.layout().formats():
        if fmt_range.start <= column < fmt_range.start + fmt_range.length:
            return fmt_range.format.foreground().color().name()
    return None


def _contrast(first: QColor, second: QColor) -> float:
    def luminance(color: QColor) -> float:
        def channel(value: float) -> float:
            return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

        return (
            0.2126 * channel(color.redF())
            + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF())
        )

    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_keys_headings_and_code_get_readable_colours(qapp: QApplication, dark: bool) -> None:
    palette = _palette(dark)
    document = QTextDocument()
    document.setPlainText(AGENT)
    highlighter = DefinitionHighlighter(document, palette)
    highlighter.rehighlight()  # attaching to a filled document highlights on the next event
    formats = highlighter.formats
    base = palette.color(QPalette.ColorRole.Base)

    assert _format_at(document, 1, 0) == formats["key"].foreground().color().name()  # name:
    assert _format_at(document, 1, 16) == formats["comment"].foreground().color().name()
    assert _format_at(document, 2, 14) == formats["string"].foreground().color().name()
    assert _format_at(document, 5, 2) == formats["heading"].foreground().color().name()
    assert _format_at(document, 6, 5) == formats["code"].foreground().color().name()
    # Inside a fenced code block, '---' and 'name:' are code, not frontmatter.
    assert _format_at(document, 9, 0) == formats["fence"].foreground().color().name()
    for name in ("key", "string", "comment", "heading", "code", "constant", "link"):
        color = formats[name].foreground().color()
        assert _contrast(color, base) >= 3.0, f"{name} is hard to read on this palette"


def test_a_palette_change_recolours(qapp: QApplication) -> None:
    document = QTextDocument()
    document.setPlainText(AGENT)
    highlighter = DefinitionHighlighter(document, _palette(dark=False))
    highlighter.rehighlight()
    light_key = _format_at(document, 1, 0)
    highlighter.set_palette(_palette(dark=True))
    assert _format_at(document, 1, 0) != light_key


def test_yaml_mode_for_presets(qapp: QApplication) -> None:
    document = QTextDocument()
    document.setPlainText('name: implement\nsteps:\n  - {agent: scout, task: "Find: $@"}\n')
    highlighter = DefinitionHighlighter(document, _palette(dark=False), mode="yaml")
    highlighter.rehighlight()
    assert _format_at(document, 0, 0) == highlighter.formats["key"].foreground().color().name()
    assert _format_at(document, 2, 4) is not None


@pytest.mark.parametrize(
    "raw",
    [
        b"---\nname: a\n---\nbody\n",
        b"---\r\nname: a\r\n---\r\nbody\r\n",
        b"\xef\xbb\xbf---\r\nname: a\r\n---\r\nbody",
        b"old mac\rnewlines\r",
    ],
)
def test_decode_then_encode_gives_back_the_same_bytes(raw: bytes) -> None:
    text, text_format = decode(raw)
    assert "\r" not in text
    assert "\ufeff" not in text
    assert encode(text, text_format).encode("utf-8") == raw


def test_not_utf8_is_shown_lossily_and_flagged(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes(b"---\nname: caf\xe9\n---\n")
    loaded = load(path)
    assert loaded.format.lossy
    assert "caf\ufffd" in loaded.text


def test_disk_state_tells_content_changes_apart_from_touches(tmp_path: Path) -> None:
    path = tmp_path / "agent.md"
    first = save(path, "one\n", decode(b"")[1])
    assert first is not None
    path.touch()
    assert first.same_content(DiskState.of(path))
    path.write_text("two\n", encoding="utf-8")
    assert not first.same_content(DiskState.of(path))
    path.unlink()
    assert DiskState.of(path) is None


def test_agent_validator_reports_errors_with_lines_and_warnings() -> None:
    assert validate_agent_text("---\nname: a\ndescription: b\n---\nbody") == []
    [error] = validate_agent_text("---\ndescription: a: b\n---\n")
    assert (error.severity, error.line) == ("error", 2)
    [warning] = validate_agent_text("---\nname: a\ndescription: b\ntools: Read, Teleport\n---\n")
    assert warning.severity == "warning"
    assert "Teleport" in warning.message
    [no_front] = validate_agent_text("just text")
    assert no_front.severity == "error"
    assert no_front.message.startswith("No frontmatter")
