"""Full-text search for every language: how text is indexed, how a query is planned, snippets.

Two FTS5 indexes cover the whole document (title, content, tags):

* ``documents_seg`` uses ``unicode61`` over *segmented* text produced by :func:`segment`. Words
  of space-separated scripts are its tokens; every run of CJK characters is rewritten as its
  overlapping unigrams and bigrams (``登录功能`` → ``登 登录 录 录功 功 功能 能``), so a one-
  or two-character CJK query (``登录`` "log in", ``数据``, ``ログ``) is one token lookup. It
  stores one- and two-character prefixes too (``a*``, ``qu*`` are one lookup), and two filter
  columns — ``kind`` (the type) and ``tagset`` (:func:`tag_tokens`) — so a type or tag filter
  narrows inside the MATCH instead of costing a row lookup per match.
* ``documents_tri`` uses the ``trigram`` tokenizer: any substring of three or more characters,
  in any script, case-insensitively (``登录功能``, ``ログイン``, ``C++``, ``user_id``).

How :func:`plan_query` reads a query (terms are separated by spaces; all must match):

* a term is tokenised the way the index tokenises text, so punctuation never hides a word:
  ``fox,`` ``(fox`` ``fox:`` are ``fox``; ``fox's`` is ``fox`` (an English possessive or
  contraction is dropped); ``lazy-dog``, ``node.js``, ``user_id`` are the phrases ``lazy dog``,
  ``node js``, ``user id``;
* each word matches words *starting* with it (``release``, ``Auth``, ``v2``; ``qu*`` says the
  same explicitly), through the word index: a single-token lookup, ~20× cheaper than the
  trigram phrase at 100,000 documents (``benchmarks/documents.py``);
* symbols that belong to a name (``C++``, ``C#``, ``a@b``: ``+ # @ $ & % = ~ |``) also require
  that exact text (trigram), so ``C++`` does not find every word starting with ``c``;
* CJK text matches as a substring anywhere: one or two characters through the word index,
  three or more through the trigram index;
* ``"quoted text"`` matches as an exact substring anywhere (trigram), punctuation included, so
  ``"auth"`` also finds ``OAuth``;
* terms without letters or digits (``-``, ``#``, ``*``) are ignored.

Every term reaches FTS5 as a quoted string, so no user input is ever parsed as FTS5 syntax.

Snippets are built here rather than by FTS5's ``snippet()``: the segmented index is contentless
(its tokens are not the document's text), so one implementation gives every query the same
markers and windows whichever index answered it.

Token estimate for read budgets: one token per CJK character, one per four other characters
(:func:`estimate_tokens`). Tokenizers of current models average about four characters of
English per token and about one token per Chinese/Japanese character; the estimate errs a
little high for CJK, which keeps reads within budget.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# Letters of scripts written without spaces between words (or, for Hangul, with particles glued
# to words), so a word can start anywhere inside a run. Punctuation in these blocks (、。・゠)
# and combining sound marks are left out: unicode61 treats them as separators, and a token
# generated here must survive unicode61 unchanged.
_CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3005-\u3007"  # 々 〆 〇
    "\u3041-\u3096"  # Hiragana
    "\u309d-\u309f"  # ゝ ゞ ゟ
    "\u30a1-\u30fa"  # Katakana
    "\u30fc-\u30ff"  # ー ヽ ヾ ヿ
    "\u3105-\u312f"  # Bopomofo
    "\u3131-\u318e"  # Hangul compatibility Jamo
    "\u31a0-\u31bf"  # Bopomofo extended
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7a3"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # Halfwidth katakana
    "\U00020000-\U0003134f"  # CJK extensions B-H
)
_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
_CJK_RUN = re.compile(f"[{_CJK_RANGES}]+")
_QUERY_TERM = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"[^\W_]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WORD_START = r"(?<![^\W_])"
"""Snippet pattern prefix for word-prefix terms: not preceded by a letter or digit."""

TRIGRAM_MIN = 3
"""The shortest substring the trigram index can find."""
MAX_TERMS = 16
"""Terms beyond this many are ignored: a query is a few keywords, not a paragraph."""

RANK_WEIGHTS = "10.0, 1.0, 5.0"
"""bm25 weights of title, content and tags: a hit in the title counts ten times one in text."""

RANK_CANDIDATES = 200
"""A query matching more documents than this ranks the newest this many (by creation) and lists
the older ones after them, newest first. bm25 costs 3-8 µs per ranked document (it reads each
one's positions), so this bounds a search for a word found nearly everywhere ("data", "数据",
the prefix ``b``) to a few milliseconds at any store size, where ranking 2,000 took 10-16 ms and
all of them 40-120 ms at 100,000 documents (``benchmarks/documents.py``): ten ranked pages.
Recent and relevant first is what a person browsing a broad result wants anyway; a narrower
query is ranked in full."""

RANK_MAX_MATCHES = 2_000
"""A query matching more documents than this is not ranked by bm25: its newest
:data:`RANK_CANDIDATES` matches come title matches first, then the rest, newest first. bm25
first reads every match's entry to weigh each term (its IDF): for a term in 25,000 documents
("配", the prefix ``t``) that alone cost 5-20 ms per search, and in a flood of matches recency
with title hits first is what a person browsing wants anyway."""

COUNT_CAP = 10_000
"""Counting stops here: past it a total is "10,000+" (``Page.exact`` False). Counting every
match of a one-letter prefix reads its whole doclist (60,000 documents: ~10 ms); the newest
10,000 cost a sixth of that, and nobody pages through more than 500 pages of results."""


def segment(text: str) -> str:
    """Rewrite every CJK run as space-separated unigrams and overlapping bigrams.

    Registered as the SQL function ``baton_segment``; the FTS5 triggers call it on insert and on
    delete, so it must stay deterministic: changing its output needs a migration that rebuilds
    ``documents_seg`` (a contentless FTS5 table is deleted from by re-tokenizing the old text).
    """
    return _CJK_RUN.sub(_grams, text)


def _grams(match: re.Match[str]) -> str:
    run = match.group()
    if len(run) == 1:
        return f" {run} "
    parts: list[str] = [""] * (2 * len(run) - 1)
    parts[::2] = run  # unigrams at even places, the bigram starting there after each
    parts[1::2] = [run[i : i + 2] for i in range(len(run) - 1)]
    return " " + " ".join(parts) + " "


def is_cjk(char: str) -> bool:
    return _CJK_CHAR.fullmatch(char) is not None


def estimate_tokens(text: str) -> int:
    """One token per CJK character plus one per four other characters, rounded up."""
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def cut_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of ``text`` whose estimate fits ``budget``, ended at a line or word
    break when one is near, so a cut read does not end mid-word."""
    if estimate_tokens(text) <= budget:
        return text
    cost = 0.0
    end = 0
    while end < len(text):
        cost += 1.0 if is_cjk(text[end]) else 0.25
        if cost > budget:
            break
        end += 1
    head = text[:end]
    for separator in ("\n", " "):
        at = head.rfind(separator)
        if at >= len(head) * 0.8:
            return head[: at + 1]
    return head


def _fts_string(text: str) -> str:
    """An FTS5 string literal: the one form in which user text can never be FTS5 syntax."""
    return '"' + text.replace('"', '""') + '"'


@dataclass(frozen=True)
class QueryPlan:
    """How one user query is answered.

    ``trigram`` and ``segmented`` are FTS5 MATCH expressions (empty: that index is not needed);
    ``patterns`` find the matched text again for snippets. ``empty`` means the query had no
    searchable terms at all (blank, or only one- or two-character punctuation).
    """

    trigram: str = ""
    segmented: str = ""
    patterns: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not self.trigram and not self.segmented


def query_terms(query: str) -> list[tuple[str, bool]]:
    """``(term, quoted)`` pairs: whitespace separates terms, ``"quoted text"`` stays one term.
    Repeats (ignoring case) are dropped."""
    terms: list[tuple[str, bool]] = []
    seen: set[str] = set()
    query = _CONTROL.sub(" ", query)  # FTS5 ends a string at NUL; none of them is searchable
    for match in _QUERY_TERM.finditer(query):
        quoted, bare = match.groups()
        term = (quoted if quoted is not None else bare.strip('"')).strip()
        if term and term.casefold() not in seen:
            seen.add(term.casefold())
            terms.append((term, quoted is not None))
    return terms[:MAX_TERMS]


def tag_tokens(tags_json: str) -> str:
    """One opaque word per tag for the ``tagset`` column of the word index, so a tag filter is
    a single-token MATCH. Case folded as the tag table folds it (ASCII, ``COLLATE NOCASE``);
    hashed so every tag, whatever its script or punctuation, is exactly one unicode61 token.
    Registered as ``baton_tag_tokens``: deterministic, like :func:`segment`."""
    try:
        tags = json.loads(tags_json)
    except ValueError:
        return ""
    if not isinstance(tags, list):
        return ""
    return " ".join(tag_token(str(tag)) for tag in tags)


def tag_token(tag: str) -> str:
    folded = " ".join(tag.split()).translate(_ASCII_LOWER)
    return "t" + hashlib.blake2b(folded.encode("utf-8"), digest_size=8).hexdigest()


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def plan_query(query: str) -> QueryPlan:
    """Send each term to the index that answers it exactly and fast (module docstring)."""
    plan = _Planner()
    for term, quoted in query_terms(query):
        if quoted:
            plan.quoted(term)
        else:
            plan.bare(term)
    return QueryPlan(
        trigram=" AND ".join(plan.trigram),
        segmented=" AND ".join(plan.segmented),
        patterns=tuple(plan.patterns),
    )


@dataclass
class _Planner:
    trigram: list[str] = field(default_factory=list)
    segmented: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)

    def quoted(self, term: str) -> None:
        """Exact text anywhere; too short for trigrams, its pieces become word lookups."""
        if len(term) >= TRIGRAM_MIN:
            self._exact(term)
        else:
            self._pieces(term)

    def bare(self, term: str) -> None:
        """Tokenised as the index tokenises text: punctuation separates words and never hides
        one (``fox,`` ``(fox`` ``fox's`` are ``fox``; ``lazy-dog`` is the phrase ``lazy dog``);
        a trailing ``*`` is the prefix mark every word already has."""
        text = _CLITIC.sub("", term.rstrip("*"))
        words = _WORD.findall(text)
        plain = [word for word in words if not _CJK_RUN.search(word)]
        if plain:
            phrase = " + ".join(_fts_string(word) for word in plain)
            self.segmented.append(phrase + "*")
            self.patterns += [_WORD_START + re.escape(word) for word in plain]
        for word in words:
            if _CJK_RUN.search(word):
                self.quoted(word)
        # Symbols that are part of a name (C++, C#, a@b) narrow the words to the exact text.
        core = text.strip(_PROSE_PUNCTUATION)
        if plain and _NAME_SYMBOLS.search(core) and len(core) >= TRIGRAM_MIN:
            self.trigram.append(_fts_string(core))

    def _exact(self, text: str) -> None:
        self.trigram.append(_fts_string(text))
        self.patterns.append(re.escape(text))

    def _pieces(self, term: str) -> None:
        """One or two characters: CJK pieces are exact unigram/bigram tokens, other pieces
        word prefixes; pieces without letters or digits are dropped."""
        pos = 0
        for run in _CJK_RUN.finditer(term):
            self._short_words(term[pos : run.start()])
            self.segmented.append(_fts_string(run.group()))
            self.patterns.append(re.escape(run.group()))
            pos = run.end()
        self._short_words(term[pos:])

    def _short_words(self, text: str) -> None:
        for word in _WORD.findall(text):
            self.segmented.append(_fts_string(word) + "*")
            self.patterns.append(_WORD_START + re.escape(word))


_CLITIC = re.compile(r"['\u2019][A-Za-z]{1,2}\b")
"""English possessives and contractions (``'s`` ``'t`` ``'re`` ``'ll``): the word is the part
before the apostrophe."""
_PROSE_PUNCTUATION = ".,;:!?'\"()[]{}<>\u2018\u2019\u201c\u201d\u2026-"
_NAME_SYMBOLS = re.compile(r"[+#@$&%=~|]")


def find_matches(
    connection: sqlite3.Connection,
    plan: QueryPlan,
    *,
    doc_type: str | None,
    tag: str | None,
    limit: int,
    offset: int,
) -> tuple[list[tuple[int, float]], int, bool]:
    """``([(id, bm25 score), ...] for one page, total matches, exact)`` of a non-empty plan;
    past :data:`COUNT_CAP` matches the total is the cap and ``exact`` False.

    Ranked with the word index when the query uses it (its bm25 is the cheaper one), the
    trigram index only narrowing the rows. Type and tag filters are words of that index
    (``kind``, ``tagset``), so they narrow inside the MATCH instead of costing a lookup per
    match. Counting comes first (bounded by :data:`COUNT_CAP`, about a millisecond); a query
    with more than :data:`RANK_MAX_MATCHES` matches is ordered without bm25 (titles first,
    then newest); otherwise the newest :data:`RANK_CANDIDATES` matches come by rank, older ones
    after them newest first. Either way every page of one query slices one order.
    """
    filters = []
    if doc_type is not None:
        filters.append(f"kind : {_fts_string(doc_type)}")
    if tag is not None:
        filters.append(f"tagset : {_fts_string(tag_token(tag))}")

    def expression(columns: str) -> str:
        if plan.segmented:
            return " AND ".join([f"{{{columns}}} : ({plan.segmented})", *filters])
        return f"{{{columns}}} : ({plan.trigram})"

    if plan.segmented:
        index = "documents_seg"
        match = f"{index} WHERE {index} MATCH ?"
        extra: list[Any] = []
        if plan.trigram:
            match += " AND rowid IN (SELECT rowid FROM documents_tri WHERE documents_tri MATCH ?)"
            extra.append(plan.trigram)
    else:
        # Only exact text: the trigram index finds it; a filter checks each (few) match.
        index = "documents_tri"
        match = f"{index} WHERE {index} MATCH ?"
        extra = []
        if doc_type is not None:
            # The narrow (id, type) index, not the wide row: a page per lookup, not per match.
            match += (
                " AND EXISTS (SELECT 1 FROM documents INDEXED BY documents_type_by_id "
                f"WHERE id = {index}.rowid AND type = ?)"
            )
            extra.append(doc_type)
        if tag is not None:
            match += (
                " AND EXISTS (SELECT 1 FROM document_tags "
                f"WHERE tag = ? AND doc_id = {index}.rowid)"
            )
            extra.append(tag)
    args = [expression(_TEXT_COLUMNS), *extra]
    cap = COUNT_CAP
    total = int(
        connection.execute(
            f"SELECT count(*) FROM (SELECT rowid FROM {match} ORDER BY rowid DESC LIMIT {cap + 1})",
            args,
        ).fetchone()[0]
    )
    window = RANK_CANDIDATES
    if total > RANK_MAX_MATCHES:
        title_args = [expression("title"), *extra]
        broad = _titles_first(connection, match, args, title_args, window, limit, offset)
        return broad, min(total, cap), total <= cap
    weights = RANK_WEIGHTS if index == "documents_tri" else f"{RANK_WEIGHTS}, 0.0, 0.0"
    score = f"bm25({index}, {weights})"
    matches: list[tuple[int, float]] = []
    if offset < window:
        matches = connection.execute(
            f"SELECT id, score FROM (SELECT rowid AS id, {score} AS score "
            f"FROM {match} ORDER BY rowid DESC LIMIT {window}) "
            "ORDER BY score, id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        ).fetchall()
    if offset + limit > window and total > window:
        matches += connection.execute(
            f"SELECT rowid, {score} FROM {match} ORDER BY rowid DESC LIMIT ? OFFSET ?",
            (*args, limit - len(matches), max(offset, window)),
        ).fetchall()
    return [(int(doc_id), float(rank)) for doc_id, rank in matches], min(total, cap), total <= cap


def _titles_first(
    connection: sqlite3.Connection,
    match: str,
    args: list[Any],
    title_args: list[Any],
    window: int,
    limit: int,
    offset: int,
) -> list[tuple[int, float]]:
    """The order of a broad query (:data:`RANK_MAX_MATCHES`): of the newest ``window``
    matches, those matching in the title first, each group newest first; older matches after
    them, newest first. Scores: -1.0 for a title match, 0.0 otherwise."""
    newest = [
        row[0]
        for row in connection.execute(
            f"SELECT rowid FROM {match} ORDER BY rowid DESC LIMIT {window}", args
        )
    ]
    titled = {
        row[0]
        for row in connection.execute(
            f"SELECT rowid FROM {match} ORDER BY rowid DESC LIMIT {window}", title_args
        )
    }
    ordered = [(doc_id, -1.0) for doc_id in newest if doc_id in titled]
    ordered += [(doc_id, 0.0) for doc_id in newest if doc_id not in titled]
    matches = ordered[offset : offset + limit]
    if offset + limit > window:
        matches += [
            (int(row[0]), 0.0)
            for row in connection.execute(
                f"SELECT rowid FROM {match} ORDER BY rowid DESC LIMIT ? OFFSET ?",
                (*args, limit - len(matches), max(offset, window)),
            )
        ]
    return matches


_TEXT_COLUMNS = "title content tags"
"""What a person's words are looked for in: never the filter columns."""


def make_snippet(
    text: str,
    patterns: tuple[str, ...],
    *,
    width: int = 80,
    markers: tuple[str, str] = ("[", "]"),
    ellipsis: str = "…",
) -> str:
    """About ``width`` characters of ``text`` around the densest cluster of matches, each match
    wrapped in ``markers`` (:func:`snippet_parts`, joined)."""
    return join_parts(snippet_parts(text, patterns, width=width, ellipsis=ellipsis), markers)


def join_parts(parts: Sequence[tuple[str, bool]], markers: tuple[str, str] = ("[", "]")) -> str:
    """The snippet as one string, each match wrapped in ``markers``."""
    return "".join(markers[0] + part + markers[1] if match else part for part, match in parts)


def _densest_window(hits: list[re.Match[str]], width: int) -> int:
    """Where the ``width`` characters start that hold the most different matches: of the
    windows starting a quarter width before each match, the first best one.

    One pass with a window sliding over the matches (they come in order and do not overlap,
    so both ends only move forward): a text where a common character matches hundreds of
    times costs hundreds of steps, not hundreds squared (``ー`` in Japanese text took 12 ms
    a page of results when every window was counted afresh)."""
    keys = [hit.group().casefold() for hit in hits]
    inside: Counter[str] = Counter()  # matches of the window hits[first:past]
    first = past = 0
    best_start, best_score = 0, -1
    for hit in hits:
        start = max(0, hit.start() - width // 4)
        while past < len(hits) and hits[past].end() <= start + width:
            if past >= first:
                inside[keys[past]] += 1
            past += 1
        while first < len(hits) and hits[first].start() < start:
            if first < past:
                inside[keys[first]] -= 1
                if not inside[keys[first]]:
                    del inside[keys[first]]
            first += 1
        if len(inside) > best_score:
            best_start, best_score = start, len(inside)
    return best_start


def snippet_parts(
    text: str, patterns: tuple[str, ...], *, width: int = 80, ellipsis: str = "…"
) -> list[tuple[str, bool]]:
    """About ``width`` characters of ``text`` around the densest cluster of matches, as
    ``(text, is_match)`` parts, so a view can mark the matches without markers that the text
    itself might hold. Without a match (the hit was in the title or tags) it is the start of
    the text. Line breaks become spaces so a snippet is one line."""
    flat = " ".join(text.split())
    finder = (
        re.compile("|".join(sorted(patterns, key=len, reverse=True)), re.IGNORECASE)
        if patterns
        else None
    )
    hits = list(finder.finditer(flat)) if finder else []
    if not hits:
        return [(flat[:width] + (ellipsis if len(flat) > width else ""), False)]
    end = min(len(flat), _densest_window(hits, width) + width)
    start = max(0, end - width)  # near the end, the window takes in more before the match
    # Never cut a match in half at either edge.
    for hit in hits:
        if hit.start() < start < hit.end():
            start = hit.start()
        if hit.start() < end < hit.end():
            end = hit.end()
    out: list[tuple[str, bool]] = [(ellipsis, False)] if start > 0 else []
    pos = start
    for hit in hits:
        if hit.start() < start or hit.end() > end or hit.start() < pos:
            continue
        out += [(flat[pos : hit.start()], False), (hit.group(), True)]
        pos = hit.end()
    out.append((flat[pos:end], False))
    if end < len(flat):
        out.append((ellipsis, False))
    return [(part, match) for part, match in out if part or match]
