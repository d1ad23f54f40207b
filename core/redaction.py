"""Keeping secrets out of everything Baton shows or saves.

Two layers:

* :class:`Redactor` replaces known secret values (provider keys from the settings, the keyring
  or the environment; values of environment variables named like a secret), URL credentials
  (``http://user:key@host`` → ``http://[redacted]@host``) and bearer tokens in one piece of
  text. Callers with whole texts (document content, an error message) use :meth:`Redactor.scrub`.
* :class:`StreamRedactor` applies it to the event *stream*. A secret can arrive split across
  text deltas (or bash output chunks), and a consumer that joins them (the Markdown export, the
  terminal, the window) would put it back together. So each stream (a step's text, its
  thinking, one tool call's output) keeps back the shortest tail that could still grow into a
  secret — a proper prefix of a known value, a URL whose credentials are not complete yet, a
  token running up to the end — and releases it, redacted, with the next piece or when the
  stream ends (a tool call starts, the step finishes). Ordinary text has no such tail, so
  nothing is delayed; a tail is never longer than the longest secret (URLs and bearer tokens:
  :data:`MAX_URL_HOLD`).

Every other string field of every event (tool arguments and results, tasks, errors, logs) is
scrubbed whole. The result is a stream that is safe to write, print, export or show.

Short values (< 8 characters) are never treated as secrets: they would redact ordinary words
and are no real key anyway.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast
from urllib.parse import urlsplit

from pydantic import BaseModel

from core.events import (
    Event,
    Log,
    Retry,
    RunFinished,
    StepFinished,
    StepStarted,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallOutput,
    ToolCallStarted,
    UserMessage,
)

if TYPE_CHECKING:
    from core.settings import Settings

_E = TypeVar("_E", bound=BaseModel)

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
MAX_URL_HOLD = 2_048
"""A URL still waiting for its ``@`` is released anyway after this many characters."""

_SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET)$|PASSWORD|^AWS_", re.IGNORECASE)
_NOT_SECRET_NAMES = frozenset({"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"})
"""``AWS_*`` settings that name things rather than prove identity."""

_URL_CREDENTIALS = r"(?P<scheme>://)[^\s/?#@:]*:[^\s/?#@]+@"
_BEARER = r"(?P<bearer>\b[Bb]earer\s+)[A-Za-z0-9._~+/=\-]{8,}"
_URL_TAIL = re.compile(r":(?://?)?[^\s/?#@]*$")
"""The end of a text that may still become ``://user:key@`` (the scheme is not needed: it
may have been released with an earlier piece)."""
_BEARER_TAIL = re.compile(r"\b[Bb](?:e(?:a(?:r(?:e(?:r\s*[A-Za-z0-9._~+/=\-]*)?)?)?)?)?$")
"""The end of a text that may still become ``Bearer <token>`` (from its first letter on)."""


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret: ``*_API_KEY``,
    ``*_TOKEN`` (``GITHUB_TOKEN``), ``*_SECRET`` (also without the underscore),
    ``*PASSWORD*``, ``AWS_*`` (except the region and profile names)."""
    return bool(_SECRET_NAME.search(name)) and name.upper() not in _NOT_SECRET_NAMES


def url_password(url: str) -> str | None:
    """The password (or token) inside a URL's credentials, if any."""
    try:
        return urlsplit(url).password or None
    except ValueError:
        return None


class Redactor:
    """Replaces known secret values, URL credentials and bearer tokens with ``[redacted]``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted(
            {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True
        )
        alternatives = [re.escape(s) for s in self._secrets]
        alternatives += [_URL_CREDENTIALS, _BEARER]
        self._pattern = re.compile("|".join(alternatives))
        self._by_first: dict[str, list[str]] = {}
        for secret in self._secrets:
            self._by_first.setdefault(secret[0], []).append(secret)
        firsts = "".join(sorted(re.escape(first) for first in self._by_first))
        self._first_chars = re.compile(f"[{firsts}]") if firsts else None
        self._longest = max((len(s) for s in self._secrets), default=0)

    @classmethod
    def from_environment(
        cls, extra: Iterable[str] = (), environ: Mapping[str, str] | None = None
    ) -> Redactor:
        """Values of secret-named environment variables, plus ``extra``."""
        environ = os.environ if environ is None else environ
        values = [v.strip() for k, v in environ.items() if is_secret_name(k)]
        return cls([*values, *extra])

    @classmethod
    def for_settings(cls, settings: Settings) -> Redactor:
        """Everything a run could leak: the providers' keys (environment or keyring), the
        credentials inside their ``base_url``, and secret-named environment variables."""
        from core.secrets import api_key_for  # keyring is imported lazily there

        providers = list(settings.providers)
        default = settings.provider()
        if default is not None:
            providers.append(default)
        extra: list[str] = []
        for provider in providers:
            extra += [v for v in (api_key_for(provider), url_password(provider.base_url)) if v]
        return cls.from_environment(extra)

    def scrub(self, text: str) -> str:
        if not text:
            return text
        return self._pattern.sub(_replacement, text)

    def split(self, text: str) -> tuple[str, str]:
        """``text`` — the unredacted start of a stream — as (what can be released now,
        redacted; what must wait for the next piece). What waits is the first part that might
        still grow into a secret: a proper prefix of a known value, a URL whose credentials
        are not complete, a bearer token, or any match that touches the end (a token may go
        on in the next piece)."""
        size = len(text)
        cut = self._secret_prefix_start(text)
        if ":" in text and (url := _URL_TAIL.search(text, max(0, size - MAX_URL_HOLD))):
            cut = min(cut, url.start())
        recent = max(0, size - 256)
        maybe_bearer = text[-1:] in ("b", "B", "e", "a", "r") or "earer" in text[recent:]
        if maybe_bearer and (bearer := _BEARER_TAIL.search(text, recent)):
            cut = min(cut, bearer.start())
        if self._pattern.search(text) is None:  # the usual case: one scan, nothing to replace
            return text[:cut], text[cut:]
        for match in self._pattern.finditer(text):
            if match.end() > cut or match.end() == size:
                cut = min(cut, match.start())
        return self.scrub(text[:cut]), text[cut:]

    def _secret_prefix_start(self, text: str) -> int:
        """Where the longest end of ``text`` that is a proper prefix of a known secret begins
        (``len(text)`` when none is)."""
        size = len(text)
        if self._first_chars is not None:
            for candidate in self._first_chars.finditer(text, max(0, size - self._longest + 1)):
                rest = text[candidate.start() :]
                if any(s.startswith(rest) for s in self._by_first[rest[0]] if len(s) > len(rest)):
                    return candidate.start()
        return size


def _replacement(match: re.Match[str]) -> str:
    prefix = match.group("scheme") or match.group("bearer")
    if match.group("scheme"):
        return f"{prefix}{REDACTED}@"
    return f"{prefix or ''}{REDACTED}"


# ------------------------------------------------------------------------------------------
# Streams


@dataclass
class _Stream:
    held: str = ""
    template: Event | None = None
    """The last event of the stream: what a released tail is sent as."""


class _StreamKey(NamedTuple):
    """``text``/``thinking`` per step, ``output`` per tool call; per run, so one redactor
    can serve the events of several runs (a batch's supervisor)."""

    kind: str
    run_id: str
    step: int | None
    call_id: str = ""


class StreamRedactor:
    """Redacts an event stream, keeping each text stream's unsafe tail until it is safe.

    :meth:`feed` takes one event and returns the events to pass on (the held tails a boundary
    releases come first). :meth:`flush` releases every tail (the end of a run or a producer).
    Not thread-safe: one producer at a time.
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._streams: dict[_StreamKey, _Stream] = {}

    def feed(self, event: Event) -> list[Event]:
        if isinstance(event, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(event, TextDelta) else "thinking"
            other = "thinking" if kind == "text" else "text"
            out = self._release([_StreamKey(other, event.run_id, event.step)])
            return out + self._stream(_StreamKey(kind, event.run_id, event.step), event, event.text)
        if isinstance(event, ToolCallOutput):
            key = _StreamKey("output", event.run_id, event.step, event.call_id)
            return self._stream(key, event, event.chunk)
        out = self._release(self._ended_by(event))
        out.append(self.scrub_event(event))
        return out

    def flush(self) -> list[Event]:
        return self._release(list(self._streams))

    # -- internals ------------------------------------------------------------------------

    def _ended_by(self, event: Event) -> list[_StreamKey]:
        """The streams an event closes: a new block starts after it in every view."""
        run = [k for k in self._streams if k.run_id == event.run_id]
        if isinstance(event, ToolCallFinished):
            return [k for k in run if k.kind == "output" and k.call_id == event.call_id]
        if isinstance(event, RunFinished):
            return run
        if isinstance(event, StepFinished | StepStarted):
            return [k for k in run if k.step == event.step]
        if isinstance(event, ToolCallStarted | Retry | UserMessage) or (
            isinstance(event, Log) and event.level != "debug"
        ):
            return [k for k in run if k.step == event.step and k.kind != "output"]
        return []

    def _stream(self, key: _StreamKey, event: Event, piece: str) -> list[Event]:
        stream = self._streams.get(key)
        replace = isinstance(event, ToolCallOutput) and event.replace
        if stream is None or replace:
            stream = self._streams[key] = _Stream()
        stream.template = event
        text = stream.held + piece
        released, held = self.redactor.split(text)
        if replace:
            # A cumulative chunk is the whole output so far: show its safe part; the next
            # chunk (or the end of the call) carries the rest.
            if held:
                stream.held = text
            else:
                del self._streams[key]
            return [event if released == piece else _with_text(event, released)]
        stream.held = held
        if not held:
            del self._streams[key]
        if not released:
            return []
        return [event if released == piece else _with_text(event, released)]

    def _release(self, keys: list[_StreamKey]) -> list[Event]:
        out: list[Event] = []
        for key in keys:
            stream = self._streams.pop(key, None)
            if stream is None or stream.template is None or not stream.held:
                continue
            out.append(_with_text(stream.template, self.redactor.scrub(stream.held)))
        return out

    def scrub_event(self, event: _E) -> _E:
        """The event with every string field scrubbed whole (no stream state involved)."""
        return cast("_E", self._scrub_value(event))

    def _scrub_value(self, value: Any) -> Any:
        """The value with secrets replaced — the same object when nothing changed, so an
        event without secrets is passed on as it is."""
        if isinstance(value, str):
            cleaned = self.redactor.scrub(value)
            return value if cleaned == value else cleaned
        if isinstance(value, list):
            items = [self._scrub_value(v) for v in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, dict):
            entries = {k: self._scrub_value(v) for k, v in value.items()}
            same = all(entries[k] is v for k, v in value.items())
            return value if same else entries
        if isinstance(value, BaseModel):
            changes = {
                name: cleaned
                for name, field in value.__dict__.items()
                if (cleaned := self._scrub_value(field)) is not field
            }
            return value.model_copy(update=changes) if changes else value
        return value


def redact_all(events: Iterable[Event], redactor: Redactor) -> list[Event]:
    """A whole recorded stream, redacted (imports, exports of files from elsewhere)."""
    streaming = StreamRedactor(redactor)
    out = [safe for event in events for safe in streaming.feed(event)]
    return out + streaming.flush()


def _with_text(event: Event, text: str) -> Event:
    if isinstance(event, ToolCallOutput):
        return event.model_copy(update={"chunk": text})
    return event.model_copy(update={"text": text})
