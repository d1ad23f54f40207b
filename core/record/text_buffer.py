"""Text that grows by appends: a list of chunks joined only when someone asks for the whole.

Streamed output arrives in small pieces (a token per text delta, a line per bash chunk).
``text += piece`` copies everything received so far at every piece: 5 MB of tool output in
80-byte chunks is 65,000 appends and ~200 GB of copying. :class:`TextBuffer` keeps the pieces
instead and joins them at most once per read of the whole text (the join is cached until the
next append), so folding N pieces costs O(N) characters copied in total.

Readers that only need part of the text never trigger a join: the length and line count are
kept as pieces arrive, :meth:`TextBuffer.since` returns what came after a given offset (a view
appending only what is new) and :meth:`TextBuffer.tail` the last characters (the tail of a huge
log), each walking only the pieces they need.

:attr:`TextBuffer.copied` counts the characters copied by joins, so tests can pin the O(N)
bound instead of timing it.

Small pieces are compacted as they come: every :data:`COMPACT_PIECES` pieces are joined into
one. A 40-character delta kept as its own ``str`` costs more in object headers and offsets
(~90 bytes) than in text; joined, a 2 MB answer in 50,000 deltas is held in ~1,500 strings,
and each character is copied once more at most (:attr:`TextBuffer.compacted`).
"""

from __future__ import annotations

from bisect import bisect_right

COMPACT_PIECES = 32
"""Pieces joined into one as they arrive (what a piece costs beyond its text: its object, its
list slot and its end offset)."""


class TextBuffer:
    """Append-only text. Not thread-safe: one owner (the fold that appends) at a time."""

    __slots__ = ("_chunks", "_ends", "_length", "_lines", "_loose", "compacted", "copied", "joins")

    def __init__(self, text: str = "") -> None:
        self._chunks: list[str] = []
        self._ends: list[int] = []  # offset just past each chunk, for slicing without joining
        self._length = 0
        self._lines = 0
        self._loose = 0  # pieces appended since the last compaction
        self.compacted = 0
        """Characters copied by compacting pieces (at most each character once)."""
        self.copied = 0
        """Characters copied by joins so far (tests pin O(N) accumulation with it)."""
        self.joins = 0
        """How many times the pieces were joined into one string."""
        if text:
            self.append(text)

    # ------------------------------------------------------------------ writing

    def append(self, piece: str) -> None:
        if not piece:
            return
        self._chunks.append(piece)
        self._length += len(piece)
        self._ends.append(self._length)
        self._lines += piece.count("\n")
        self._loose += 1
        if self._loose == COMPACT_PIECES:
            self._compact()

    def _compact(self) -> None:
        """Join the loose pieces into one (their end offset is the last one's)."""
        count, self._loose = self._loose, 0
        joined = "".join(self._chunks[-count:])
        self.compacted += len(joined)
        self._chunks[-count:] = [joined]
        self._ends[-count:] = [self._length]

    def replace(self, text: str) -> None:
        """Start over with ``text`` (a backend re-sent the whole output)."""
        self._chunks, self._ends, self._length, self._lines = [], [], 0, 0
        self._loose = 0
        self.append(text)

    # ------------------------------------------------------------------ reading

    @property
    def text(self) -> str:
        """The whole text; joined once and cached until the next append."""
        if len(self._chunks) > 1:
            joined = "".join(self._chunks)
            self.copied += len(joined)
            self.joins += 1
            self._chunks = [joined]
            self._ends = [self._length]
            self._loose = 0
        return self._chunks[0] if self._chunks else ""

    def __len__(self) -> int:
        return self._length

    def __bool__(self) -> bool:
        return self._length > 0

    @property
    def newlines(self) -> int:
        """Newline characters in the text (a line count without scanning it)."""
        return self._lines

    def since(self, offset: int) -> str:
        """The text after the first ``offset`` characters, touching only those pieces."""
        return self.slice(offset, self._length)

    def slice(self, start: int, end: int) -> str:
        """``text[start:end]`` (offsets clamped), copying only the pieces in that range."""
        start, end = max(0, start), min(end, self._length)
        if start >= end:
            return ""
        if start == 0 and end == self._length:
            return self.text
        first = bisect_right(self._ends, start)
        last = bisect_right(self._ends, end - 1)
        base = self._ends[first - 1] if first else 0
        if first == last:
            return self._chunks[first][start - base : end - base]
        pieces = self._chunks[first : last + 1]
        last_base = self._ends[last - 1]
        pieces[0] = pieces[0][start - base :]
        pieces[-1] = pieces[-1][: end - last_base]
        return "".join(pieces)

    def tail(self, chars: int) -> str:
        """The last ``chars`` characters (all of them when shorter)."""
        return self.since(self._length - chars)
