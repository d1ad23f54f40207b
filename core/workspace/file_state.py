"""What the editor remembers about a file on disk: its identity (for conflict detection) and
its text format (so saving keeps the user's BOM and line endings).

Qt-free on purpose: this is plain file logic, tested without widgets.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from core.config.atomic import atomic_write_text

BOM = "\ufeff"


@dataclass(frozen=True)
class DiskState:
    """A file's identity at one moment. Two states differ when the content may have changed.

    mtime and size alone miss a same-size rewrite within the clock's resolution; the hash
    alone would need a read on every check. Together they are cheap and certain.
    """

    mtime_ns: int
    size: int
    digest: str

    @classmethod
    def of(cls, path: Path) -> DiskState | None:
        """The current state of ``path``, or None when it does not exist (or cannot be read)."""
        try:
            stat = path.stat()
            data = path.read_bytes()
        except OSError:
            return None
        return cls(stat.st_mtime_ns, stat.st_size, hashlib.sha256(data).hexdigest())

    def same_content(self, other: DiskState | None) -> bool:
        return other is not None and other.size == self.size and other.digest == self.digest


@dataclass(frozen=True)
class TextFormat:
    """How a file's text is stored: UTF-8 with or without a BOM, and its newline style."""

    bom: bool = False
    newline: str = "\n"
    lossy: bool = False
    """The bytes were not valid UTF-8; undecodable bytes were replaced when reading."""


@dataclass(frozen=True)
class LoadedText:
    text: str
    """The text with ``\\n`` newlines and no BOM, as the editor shows it."""
    format: TextFormat
    state: DiskState | None


def decode(raw: bytes) -> tuple[str, TextFormat]:
    """Bytes → editor text (``\\n`` newlines, no BOM) and the format to restore on save."""
    lossy = False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        lossy = True
    bom = text.startswith(BOM)
    text = text.removeprefix(BOM)
    crlf = text.count("\r\n")
    lone_cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    newline = "\r\n" if crlf > lf and crlf >= lone_cr else "\r" if lone_cr > lf else "\n"
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, TextFormat(bom=bom, newline=newline, lossy=lossy)


def encode(text: str, text_format: TextFormat) -> str:
    """Editor text → the file's text in its original format (BOM, newline style)."""
    body = text.replace("\n", text_format.newline) if text_format.newline != "\n" else text
    return (BOM if text_format.bom else "") + body


def load(path: Path) -> LoadedText:
    """Read ``path`` for editing. Raises OSError when it cannot be read."""
    raw = path.read_bytes()
    text, text_format = decode(raw)
    state = DiskState.of(path)
    return LoadedText(text, text_format, state)


def save(path: Path, text: str, text_format: TextFormat) -> DiskState | None:
    """Write atomically in the file's own format; return the new state to compare against."""
    atomic_write_text(path, encode(text, text_format))
    return DiskState.of(path)
