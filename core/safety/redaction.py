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

Each known value is also looked for as the model could be shown it by a command that
encodes it (:func:`encoded_forms`): base64 and base64url (at each of the three byte
alignments, so ``KEY=<value>`` encoded whole is caught too), hex, URL-encoding and reversed.
A key printed over several tool outputs of a step is caught by :class:`OutputJoiner`.

What no redactor can catch: a value transformed in any other way (split into short pieces,
interleaved, encrypted, compressed, ROT13, spelled out, gzip + base64); a secret Baton does
not know (a password in a file the agent reads); short values (< 8 characters), which are
never treated as secrets: they would redact ordinary words and are no real key anyway.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast
from urllib.parse import quote, quote_plus, urlsplit

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from core.model.events import (
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
    from core.config.settings import Settings

_E = TypeVar("_E", bound=BaseModel)

REDACTED = "[redacted]"
REDACTED_VALUE = REDACTED.replace("\\", "\\\\")
""":data:`REDACTED` as a replacement template for ``re.sub`` (no group references in it)."""
MIN_SECRET_LENGTH = 8
MAX_URL_HOLD = 2_048
"""A URL still waiting for its ``@`` is released anyway after this many characters."""
LONG_TEXT = 512
"""Texts longer than this are checked for encoded forms with substring searches first."""
ONE_BY_ONE_FORMS = 100
"""Up to this many known forms, a text is searched for each in turn before any expression
runs (:attr:`_Compiled.searched_one_by_one`)."""
FRAGMENT = 12
"""A piece of a known value this long is redacted from tool outputs on its own."""

_SECRET_NAME = re.compile(
    r"(API_KEY|TOKEN|SECRET)$|PASSWORD|^AWS_|^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS$",
    re.IGNORECASE,
)
_NOT_SECRET_NAMES = frozenset({"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"})
"""``AWS_*`` settings that name things rather than prove identity."""

_URL_CREDENTIALS = r"(?P<scheme>://)[^\s/?#@:]*:[^\s/?#@]+@"
_BEARER = r"(?P<bearer>\b[Bb]earer\s+)[A-Za-z0-9._~+/=\-]{8,}"
_SHORTEST_MATCH = 6
"""No shorter text holds anything :meth:`Redactor.scrub` replaces (``://:k@`` is 6)."""
_REMEMBERED = 256
_REMEMBERED_MAX = 4096
"""Field values up to ``_REMEMBERED`` characters are scrubbed once per stream redactor (at most
``_REMEMBERED_MAX`` kept)."""
_URL_TAIL = re.compile(r":(?://?)?[^\s/?#@]*$")
"""The end of a text that may still become ``://user:key@`` (the scheme is not needed: it
may have been released with an earlier piece)."""
_BEARER_TAIL = re.compile(r"\b[Bb](?:e(?:a(?:r(?:e(?:r\s*[A-Za-z0-9._~+/=\-]*)?)?)?)?)?$")
"""The end of a text that may still become ``Bearer <token>`` (from its first letter on)."""


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret: ``*_API_KEY``,
    ``*_TOKEN`` (``GITHUB_TOKEN``), ``*_SECRET`` (also without the underscore),
    ``*PASSWORD*``, ``AWS_*`` (except the region and profile names), the OTLP exporter's
    headers (``OTEL_EXPORTER_OTLP_HEADERS``: ``name=value`` pairs, see :func:`header_values`).
    Remembered per name: every run and step reads the whole environment's names."""
    return bool(_SECRET_NAME.search(name)) and name.upper() not in _NOT_SECRET_NAMES


def header_values(headers: str) -> list[str]:
    """The values of an OTLP headers string (``api_key=abc,authorization=Bearer%20xyz``),
    each also as percent-decoded, so a key in a header is hidden however it is written."""
    from urllib.parse import unquote

    values: list[str] = []
    for pair in headers.split(","):
        _, _, value = pair.partition("=")
        for form in {value.strip(), unquote(value).strip()}:
            if form:
                values.append(form)
                bearer = form.removeprefix("Bearer ").removeprefix("bearer ").strip()
                if bearer and bearer != form:
                    values.append(bearer)
    return values


def url_password(url: str) -> str | None:
    """The password (or token) inside a URL's credentials, if any."""
    try:
        return urlsplit(url).password or None
    except ValueError:
        return None


def encoded_forms(secret: str) -> set[str]:
    """``secret`` and the forms a command could print it in: base64 and base64url at the three
    byte alignments (only the characters that depend on the secret's bytes alone), hex (both
    cases), URL-encoded and reversed. Forms shorter than :data:`MIN_SECRET_LENGTH` are left
    out: they would match ordinary text."""
    raw = secret.encode("utf-8")
    forms = {secret, secret[::-1], quote(secret, safe=""), quote_plus(secret)}
    hexed = binascii.hexlify(raw).decode("ascii")
    forms |= {hexed, hexed.upper()}
    for offset, skip in ((0, 0), (1, 2), (2, 3)):
        whole = (offset + len(raw)) // 3 * 4  # characters of complete 3-byte groups
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")[skip:whole]
        forms |= {encoded, encoded.replace("+", "-").replace("/", "_")}
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def mcp_project_folders() -> list[Path]:
    """The projects whose ``.mcp.json`` secrets every redactor knows: the working folder, the
    trusted projects (their servers may run) and the recent ones (where the window runs)."""
    from core.config.recent_projects import recent_projects
    from core.safety.trust import TrustStore

    folders: list[Path] = []
    with contextlib.suppress(OSError):  # the working folder was removed
        folders.append(Path.cwd())
    with contextlib.suppress(ValueError):  # a damaged trust file: it trusts nothing either
        folders += [Path(record.folder) for record in TrustStore().records()]
    return list(dict.fromkeys([*folders, *recent_projects()]))


def _environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of ``environ``'s secret-named variables and of OTLP exporter headers."""
    values = [environ[k].strip() for k in environ if is_secret_name(k)]  # names first
    for name, value in environ.items():
        if name.upper().startswith("OTEL_EXPORTER_OTLP_") and name.upper().endswith("HEADERS"):
            values += header_values(value)
    return values


def _environment_snapshot() -> tuple[tuple[Any, Any], ...]:
    """The process environment as it is now, undecoded: ``os.environ``'s own dict (CPython's,
    which ``os.environ[...] = `` and ``del`` keep current) copied in one step; through the
    mapping, a call per variable cost 13 µs for 40 variables."""
    data = getattr(os.environ, "_data", None)
    if isinstance(data, dict):
        return tuple(data.items())
    return tuple(os.environ.items())  # not CPython's mapping: decoded already


def _decoded(value: Any) -> str:
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)


@functools.lru_cache(maxsize=8)
def _process_environment_secrets(snapshot: tuple[tuple[Any, Any], ...]) -> tuple[str, ...]:
    """:func:`_environment_secrets` of the process environment, worked out once per state of
    it: every run asks (its redactor), and decoding and scanning every variable was half of a
    redactor's making, 50 µs of a batch item's (benchmarks/batch.py). ``snapshot`` is the
    key; the values are read from it, so a variable changed since is seen the next time."""
    return tuple(_environment_secrets({_decoded(k): _decoded(v) for k, v in snapshot}))


class Redactor:
    """Replaces known secret values (and their encoded forms), URL credentials and bearer
    tokens with ``[redacted]``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = frozenset(s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH)
        compiled = _compiled(values)
        self._secrets = compiled.secrets
        self._whole = compiled.whole
        self._pattern = compiled.pattern
        self._encoded = compiled.encoded
        self._values = compiled.values
        self._plain_pattern = compiled.plain_pattern
        self._values_only = compiled.values_only
        self._plain_values_only = compiled.plain_values_only
        self._prefix_ends = compiled.prefix_ends
        self._prefix_at_end = compiled.prefix_at_end
        self._longest = compiled.longest
        self._json_plain = compiled.json_plain
        self._searched_one_by_one = compiled.searched_one_by_one

    @classmethod
    def from_environment(
        cls, extra: Iterable[str] = (), environ: Mapping[str, str] | None = None
    ) -> Redactor:
        """Values of secret-named environment variables, plus ``extra``."""
        if environ is None:
            return cls([*_process_environment_secrets(_environment_snapshot()), *extra])
        return cls([*_environment_secrets(environ), *extra])

    @classmethod
    def for_settings(cls, settings: Settings, projects: Iterable[Path] = ()) -> Redactor:
        """Everything a run could leak: the providers' keys (environment or keyring), the
        credentials inside their ``base_url``, secret-named environment variables, and the
        literal secrets of MCP server entries — the user's, and the ``.mcp.json`` of
        ``projects``, of the working folder, of every trusted project and of the recent ones
        (a run's recording does not know its folder; those are where a run can be)."""
        from core.safety.secrets import api_key_for, telemetry_headers  # keyring: lazily

        providers = list(settings.providers)
        default = settings.provider()
        if default is not None:
            providers.append(default)
        extra: list[str] = []
        for provider in providers:
            extra += [v for v in (api_key_for(provider), url_password(provider.base_url)) if v]
        endpoint_password = url_password(settings.telemetry.endpoint or "")
        if endpoint_password:
            extra.append(endpoint_password)
        headers = telemetry_headers(settings)
        if headers:
            extra += [headers, *header_values(headers)]
        from core.config.mcp_servers import configured_secret_values

        folders = [*projects, *mcp_project_folders()]
        return cls.from_environment([*extra, *configured_secret_values(folders)])

    @classmethod
    def configured(cls, projects: Iterable[Path] = ()) -> Redactor:
        """:meth:`for_settings` of the saved settings; from the environment alone when they
        cannot be read (a command that prints must still scrub)."""
        from core.config.settings import SettingsError, load_settings

        try:
            return cls.for_settings(load_settings(), projects)
        except SettingsError:
            from core.config.mcp_servers import configured_secret_values

            folders = [*projects, *mcp_project_folders()]
            return cls.from_environment(configured_secret_values(folders))

    def scrub(self, text: str) -> str:
        if not text:
            return text
        plain = len(text) > LONG_TEXT and not any(form in text for form in self._encoded)
        # A long text is searched for each encoded form first (a fast substring search
        # each); without one, the smaller expression of the plain values scans it.
        if "://" not in text and "earer" not in text:
            # No URL credentials nor bearer token can be in it: the known values alone are
            # searched for (those two expressions, tried at every position, cost nine tenths
            # of a scan of an event's line, and every event's line is scanned).
            values = self._plain_values_only if plain else self._values_only
            if values is None or not self._may_hold_a_value(text):
                return text
            return values.sub(REDACTED_VALUE, text)
        pattern = self._plain_pattern if plain else self._pattern
        return pattern.sub(_replacement, text)

    def _may_hold_a_value(self, text: str) -> bool:
        """False when no known value (in any form) is in ``text``: found without the
        expression when there are few forms."""
        forms = self._searched_one_by_one
        return forms is None or any(form in text for form in forms)

    def split(self, text: str) -> tuple[str, str]:
        """``text`` — the unredacted start of a stream — as (what can be released now,
        redacted; what must wait for the next piece). What waits is the first part that might
        still grow into a secret: a proper prefix of a known value, a URL whose credentials
        are not complete, a bearer token, or any match that touches the end (a token may go
        on in the next piece)."""
        size = len(text)
        cut = self.secret_prefix_start(text)
        if ":" in text and (url := _URL_TAIL.search(text, max(0, size - MAX_URL_HOLD))):
            cut = min(cut, url.start())
        recent = max(0, size - 256)
        maybe_bearer = text[-1:] in ("b", "B", "e", "a", "r") or "earer" in text[recent:]
        if maybe_bearer and (bearer := _BEARER_TAIL.search(text, recent)):
            cut = min(cut, bearer.start())
        pattern: re.Pattern[str] | None
        if "://" in text or "earer" in text:
            pattern = self._pattern
        else:
            pattern = self._values_only if self._may_hold_a_value(text) else None
        if pattern is None or pattern.search(text) is None:  # the usual case: nothing found
            return text[:cut], text[cut:]
        for match in pattern.finditer(text):
            if match.end() > cut or match.end() == size:
                cut = min(cut, match.start())
        return self.scrub(text[:cut]), text[cut:]

    @property
    def values(self) -> list[str]:
        """The known values themselves (not their encoded forms)."""
        return list(self._values)

    @property
    def json_plain(self) -> bool:
        """Whether no known value (or form) holds a character JSON escapes (``"``, ``\\``,
        control characters): each is then itself in an event's JSON line."""
        return self._json_plain

    @property
    def longest(self) -> int:
        """The length of the longest known value or encoded form (0: none known)."""
        return self._longest

    @property
    def pattern(self) -> re.Pattern[str]:
        """What :meth:`scrub` replaces (known values and their forms, URL credentials,
        bearer tokens)."""
        return self._pattern

    def secret_prefix_start(self, text: str) -> int:
        """Where the longest end of ``text`` that is a proper prefix of a known secret begins
        (``len(text)`` when none is)."""
        size = len(text)
        if self._prefix_at_end is None or text[-1:] not in self._prefix_ends:
            return size
        found = self._prefix_at_end.search(text, max(0, size - self._longest + 1))
        if found is None or found.group() in self._whole:
            return size
        return found.start()


@dataclass(frozen=True)
class _Compiled:
    """What a :class:`Redactor` searches with, built from one set of known values."""

    secrets: list[str]
    whole: frozenset[str]
    pattern: re.Pattern[str]
    encoded: list[str]
    values: list[str]
    plain_pattern: re.Pattern[str]
    values_only: re.Pattern[str] | None
    """The known values and their forms, without URL credentials and bearer tokens (None:
    no value known)."""
    plain_values_only: re.Pattern[str] | None
    prefix_ends: frozenset[str]
    """A proper prefix of a known value can only end in a character some value has before its
    last: text ending otherwise (a space, most punctuation) is released at once."""
    prefix_at_end: re.Pattern[str] | None
    longest: int
    json_plain: bool
    searched_one_by_one: tuple[str, ...] | None
    """The forms, when few enough that a substring search for each (C's fast search over the
    text) finds nothing sooner than one scan with the expression — what nearly every event's
    line has to show: 0.99 against 2.65 µs for a 330-character line and 8 forms, 6.7 against
    14.6 µs for 71; alike near 180 (None: more than :data:`ONE_BY_ONE_FORMS`)."""


@functools.lru_cache(maxsize=64)
def _compiled(values: frozenset[str]) -> _Compiled:
    """Built once per set of values, not once per redactor: every run, step and agent loop
    makes a redactor of the same keys, and building the expressions took ~4 ms each — most of
    a batch item's supervisor CPU (measured in benchmarks/batch.py). Nothing here is mutable."""
    forms = {form for value in values for form in encoded_forms(value)}
    secrets = sorted(forms, key=len, reverse=True)
    return _Compiled(
        secrets=secrets,
        whole=frozenset(secrets),
        pattern=_pattern(secrets),
        encoded=sorted(forms - values),
        values=sorted(values),
        plain_pattern=_pattern(sorted(values, key=len, reverse=True)),
        values_only=re.compile(_trie_pattern(secrets)) if secrets else None,
        plain_values_only=(
            re.compile(_trie_pattern(sorted(values, key=len, reverse=True))) if values else None
        ),
        prefix_ends=frozenset(char for secret in secrets for char in secret[:-1]),
        prefix_at_end=(
            re.compile(_trie_pattern(secrets, partial=True) + r"\Z") if secrets else None
        ),
        longest=max((len(s) for s in secrets), default=0),
        json_plain=not any(char in '"\\' or char < " " for form in secrets for char in form),
        searched_one_by_one=tuple(secrets) if len(secrets) <= ONE_BY_ONE_FORMS else None,
    )


@functools.lru_cache(maxsize=64)
def _fragment_pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    """Every :data:`FRAGMENT`-long piece of ``values`` (built once per set of values)."""
    grams = {value[i : i + FRAGMENT] for value in values for i in range(len(value) - FRAGMENT + 1)}
    return re.compile(_trie_pattern(sorted(grams))) if grams else None


def _pattern(secrets: list[str]) -> re.Pattern[str]:
    alternatives = [_trie_pattern(secrets)] if secrets else []
    return re.compile("|".join([*alternatives, _URL_CREDENTIALS, _BEARER]))


def _trie_pattern(words: Iterable[str], *, partial: bool = False) -> str:
    """One regular expression matching any of ``words``, longest first, with common prefixes
    shared: a text position is tried against each distinct first character once, not against
    every word (each secret has several encoded forms, and this runs on every event).
    ``partial``: any non-empty prefix of a word matches too."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        ends = partial or "" in node
        branches = [re.escape(char) + build(child) for char, child in node.items() if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return build(trie)


def _replacement(match: re.Match[str]) -> str:
    prefix = match.group("scheme") or match.group("bearer")
    if match.group("scheme"):
        return f"{prefix}{REDACTED}@"
    return f"{prefix or ''}{REDACTED}"


class OutputJoiner:
    """Scrubs the tool outputs of one step for the model, as if they were one text: a command
    that prints a key in pieces (``echo ${KEY:0:20}``, then ``echo ${KEY:20}``) would otherwise
    hand the model all of them.

    * Any run of :data:`FRAGMENT` or more characters of a known value is redacted wherever it
      appears, so each piece that long is caught on its own — the first one too, before the
      rest is printed.
    * Each output is also checked joined to the tail of the ones before (as long as the
      longest known form): a value that begins in an earlier output and ends in this one has
      its part here redacted (the earlier part was already sent).
    * An output that *ends* in the beginning of a known value (at least
      :data:`MIN_SECRET_LENGTH` characters of it) has that end redacted.

    A value cut into pieces shorter than :data:`FRAGMENT`, in outputs with other text between
    them, still gets through: the model can join the pieces itself.
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._tail = ""
        self._fragments = _fragment_pattern(tuple(redactor.values))

    def scrub(self, output: str) -> str:
        redactor = self.redactor
        keep = redactor.longest
        if not keep:
            return redactor.scrub(output)
        tail = self._tail
        self._tail = (tail + output)[-keep:]
        start = 0
        if tail:
            joined = tail + output[:keep]
            for match in redactor.pattern.finditer(joined, max(0, len(tail) - keep)):
                if match.start() < len(tail) < match.end():
                    start = match.end() - len(tail)  # the rest of a value begun earlier
                    break
        cleaned = redactor.scrub(output[start:])
        if start:
            cleaned = REDACTED + cleaned
        if self._fragments is not None:
            cleaned = self._without_fragments(cleaned)
        cut = redactor.secret_prefix_start(cleaned)
        if len(cleaned) - cut >= MIN_SECRET_LENGTH:
            cleaned = cleaned[:cut] + REDACTED
        return cleaned

    def _without_fragments(self, text: str) -> str:
        """``text`` with every maximal run that is a piece (of :data:`FRAGMENT` characters or
        more) of a known value redacted: a match is grown while it is still such a piece."""
        assert self._fragments is not None
        values = self.redactor.values
        out: list[str] = []
        position = 0
        while (found := self._fragments.search(text, position)) is not None:
            start, end = found.span()
            while end < len(text) and any(text[start : end + 1] in value for value in values):
                end += 1
            out += [text[position:start], REDACTED]
            position = end
        return "".join(out) + text[position:] if out else text


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
        self._plain_values = redactor.json_plain
        self._seen: dict[str, str] = {}
        """Short field values already scrubbed: a run's events repeat the same ids, names,
        models and folders in every event."""

    def feed(self, event: Event) -> list[Event]:
        if isinstance(event, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(event, TextDelta) else "thinking"
            other = "thinking" if kind == "text" else "text"
            out = (  # nothing held (the usual case): nothing to release
                self._release([_StreamKey(other, event.run_id, event.step)])
                if self._streams
                else []
            )
            return out + self._stream(_StreamKey(kind, event.run_id, event.step), event, event.text)
        if isinstance(event, ToolCallOutput):
            key = _StreamKey("output", event.run_id, event.step, event.call_id)
            return self._stream(key, event, event.chunk)
        out = self._release(self._ended_by(event))
        out.append(self.scrub_event(event))
        return out

    def flush(self) -> list[Event]:
        return self._release(list(self._streams))

    def release_step(self, run_id: str, step: int) -> list[Event]:
        """Release the held tails of one step's streams (the step ended without the event
        that would release them)."""
        return self._release([k for k in self._streams if k.run_id == run_id and k.step == step])

    def _line_says_all(self, line: str) -> bool:
        """Whether scanning the JSON line finds whatever scanning each field would. Escapes
        change the text: a known value with a character JSON escapes (``"``, ``\\``, control
        characters) is not itself in the line, and an escaped whitespace next to ``Bearer``
        hides the token's match. URL credentials cannot hold whitespace, and ``"`` escaped
        still matches."""
        if "\\" not in line:
            return True
        return self._plain_values and "earer" not in line

    def feed_encoded(self, event: Event) -> list[tuple[Event, str | None]]:
        """:meth:`feed`, each event paired with its JSON line when that was made on the way
        (None: not made). A whole event is checked as its line first: one scan of the line
        instead of a walk over every field, and the line is what the run file writes. Only
        a line without escapes says the same as the fields (an escaped character could
        hide a match); anything found, or any escape, takes the field walk."""
        if isinstance(event, TextDelta | ThinkingDelta | ToolCallOutput):
            return [(safe, None) for safe in self.feed(event)]
        out: list[tuple[Event, str | None]] = [
            (safe, None) for safe in self._release(self._ended_by(event))
        ]
        out.append(self.scrub_encoded(event))
        return out

    def scrub_encoded(self, event: _E) -> tuple[_E, str | None]:
        """:meth:`scrub_event`, checking the event's JSON line first (see
        :meth:`feed_encoded`); with that line when the event had nothing to scrub."""
        try:
            line = event.model_dump_json()
        except PydanticSerializationError:  # a lone surrogate from a hostile model: no line
            return self.scrub_event(event), None
        if self._line_says_all(line) and self.redactor.scrub(line) == line:
            return event, line
        return self.scrub_event(event), None

    # -- internals ------------------------------------------------------------------------

    def _ended_by(self, event: Event) -> list[_StreamKey]:
        """The streams an event closes: a new block starts after it in every view."""
        if not self._streams:
            return []  # nothing held: the usual case
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
        """A stream is kept only while it holds a tail: a piece released whole (the usual
        case) leaves nothing behind."""
        stream = self._streams.get(key)
        replace = isinstance(event, ToolCallOutput) and event.replace
        text = piece if stream is None or replace else stream.held + piece
        released, held = self.redactor.split(text)
        if replace:
            # A cumulative chunk is the whole output so far: show its safe part; the next
            # chunk (or the end of the call) carries the rest.
            if held:
                self._streams[key] = _Stream(held=text, template=event)
            else:
                self._streams.pop(key, None)
            return [event if released == piece else _with_text(event, released)]
        if held:
            if stream is None:
                stream = self._streams[key] = _Stream()
            stream.held, stream.template = held, event
        elif stream is not None:
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
            if len(value) < _SHORTEST_MATCH:
                return value
            if len(value) <= _REMEMBERED:
                known = self._seen.get(value)
                if known is None:
                    if len(self._seen) >= _REMEMBERED_MAX:
                        self._seen.clear()
                    known = self._seen[value] = self.redactor.scrub(value)
                return value if known == value else known
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
