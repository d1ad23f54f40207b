"""What laying out a slice of finished Markdown will cost, told from what is in it.

A long answer that arrives faster than it can be laid out (a flood, a reopened 2 MB answer) is
laid out a slice per event-loop turn (:mod:`gui.run.markdown_stream`), and a slice should fit
what the turn's budget has left. Its length says little: measured over the 1,200 slices of a
2 MB answer, a slice costs ~2.8 ms whatever it holds (a scratch document, the insertion, the
view's new height), 0.7 µs a character, 0.3 ms a table row (Markdown parses each cell, Qt lays
out each) and 1.6 ms a code block (highlighted, framed) — 2,000 characters of prose take 4 ms,
of tables and code 15. :class:`SliceCost` counts those in the text (``str.count``: no parsing)
and scales the sum by how the machine has done so far.
"""

from __future__ import annotations

FIXED_S = 0.0028
"""A slice's cost whatever it holds."""
CHAR_S = 0.7e-6
TABLE_ROW_S = 0.0003
CODE_BLOCK_S = 0.0016


class SliceCost:
    """Estimates in seconds, learned to this machine's speed (one for the process)."""

    def __init__(self) -> None:
        self.scale = 1.0
        """Seconds measured / seconds estimated, leaning to the slow slices."""

    def estimate(self, text: str, start: int, end: int) -> float:
        return self.scale * _model(text, start, end)

    def learn(self, text: str, start: int, end: int, seconds: float) -> None:
        """Fold one slice's measured time in: a slower one at once, a faster one slowly (the
        decision is made before the slice is laid out, so it leans to what the slow ones took:
        a paint or a busy machine's hiccup inflates one, and then the next few are smaller)."""
        model = _model(text, start, end)
        if model <= 0 or seconds <= 0:
            return
        ratio = seconds / model
        weight = 0.5 if ratio > self.scale else 0.05
        self.scale += weight * (ratio - self.scale)


def _model(text: str, start: int, end: int) -> float:
    """The cost on the machine it was measured on."""
    rows = text.count("\n|", start, end) + text.startswith("|", start)
    fences = (text.count("```", start, end) + text.count("~~~", start, end)) / 2
    return FIXED_S + CHAR_S * (end - start) + TABLE_ROW_S * rows + CODE_BLOCK_S * fences
