"""Search in every language: CJK 1-/2-/4-character queries, kana, Hangul, English, mixed
queries, hostile input, filters, pagination, ranking, snippets, and the index staying in step."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from core.config.settings import Limits
from core.documents import search as documents_search
from core.documents.search import (
    cut_to_tokens,
    estimate_tokens,
    make_snippet,
    plan_query,
    query_terms,
    segment,
)
from core.documents.store import DocumentStore, NewDocument

DOCS = {
    "login": ("登录功能设计", "用户登录后跳转到首页。密码错误时提示。", ["auth", "设计"]),
    "register": ("注册流程", "新用户注册需要邮箱验证。注册成功后自动登录。", ["auth"]),
    "kana": ("ログイン画面", "ログイン画面のデザインです。パスワードを入力してください。", ["ui"]),
    "hangul": ("로그인 페이지", "로그인 페이지를 만들었습니다. 비밀번호 확인.", ["ui"]),
    "english": (
        "Release checklist",
        "Run the Tests, bump the version, then publish the Release notes.",
        ["release"],
    ),
    "mixed": ("API 文档", "调用 login 接口获取 token，然后请求数据。", ["api"]),
    "symbols": ('Quotes "and" stars', 'He said "hello*world" (NEAR) -- AND OR NOT ^x', []),
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DocumentStore]:
    with DocumentStore(tmp_path / "documents.sqlite") as opened:
        yield opened


@pytest.fixture
def ids(store: DocumentStore) -> dict[str, int]:
    return {
        key: store.create(title, content, tags=tags).id
        for key, (title, content, tags) in DOCS.items()
    }


def found(
    store: DocumentStore, query: str, *, type: str | None = None, tag: str | None = None
) -> set[int]:
    return {hit.id for hit in store.search(query, type=type, tag=tag).items}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("登", {"login", "register"}),  # one CJK character
        ("录", {"login", "register"}),
        ("登录", {"login", "register"}),  # two characters: a word
        ("注册", {"register"}),
        ("登录功能", {"login"}),  # four characters: only the title has it
        ("自动登录", {"register"}),
        ("ログ", {"kana"}),  # katakana, two characters
        ("パスワード", {"kana"}),
        ("の", {"kana"}),  # one hiragana character
        ("로그", {"hangul"}),  # Hangul, two syllables
        ("비밀번호", {"hangul"}),
        ("release", {"english"}),  # English words, any case
        ("RELEASE", {"english"}),
        ("tests", {"english"}),
        ("publish notes", {"english"}),  # every term must match
        ("ver", {"english"}),  # a substring of three characters
        ("login", {"mixed"}),
        ("login 数据", {"mixed"}),  # mixed scripts in one query
        ("接口 token", {"mixed"}),
        ("登录 跳转", {"login"}),  # two short CJK terms
        ("调用 API", {"mixed"}),
        ('"the version"', {"english"}),  # a quoted phrase
        ("ui", {"kana", "hangul"}),  # short non-CJK: a word prefix (here: a tag)
        ("设计", {"login"}),  # a tag
        ("nothing-like-this", set()),
        ("登录 release", set()),
    ],
)
def test_queries_in_every_script(
    store: DocumentStore, ids: dict[str, int], query: str, expected: set[str]
) -> None:
    assert found(store, query) == {ids[key] for key in expected}


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        '"unbalanced',
        "*",
        "a*",
        "NEAR(a b)",
        "AND",
        "OR NOT",
        "-x",
        "^",
        "(",
        ")",
        "{x}",
        "col:val",
        "title:登录",
        "'",
        "\\",
        "%",
        "_",
        "a\x00b",
        "😀",
        "x" * 500,
        " ".join(["word"] * 40),
    ],
)
def test_no_query_raises(store: DocumentStore, ids: dict[str, int], query: str) -> None:
    page = store.search(query)
    assert page.total == len(page.items)


def test_fts_syntax_is_searched_as_text(store: DocumentStore, ids: dict[str, int]) -> None:
    assert found(store, '"hello*world"') == {ids["symbols"]}
    assert found(store, "(NEAR)") == {ids["symbols"]}
    assert found(store, "AND OR") == {ids["symbols"]}
    assert found(store, '"and"') == {ids["symbols"]}


def test_words_match_by_prefix_and_quoted_text_anywhere(store: DocumentStore) -> None:
    oauth = store.create("Sign-in", "We use OAuth for sign-in.").id
    authn = store.create("Authentication", "how users prove who they are").id
    ident = store.create("Schema", "the user_id column and C++ bindings").id
    assert found(store, "auth") == {authn}
    assert found(store, "AUTHENTIC") == {authn}
    assert found(store, '"auth"') == {oauth, authn}
    assert found(store, "user_id") == {ident}  # symbols: exact substring
    assert found(store, "C++") == {ident}
    assert found(store, "sign-in") == {oauth}
    assert found(store, '"id column"') == {ident}


def test_one_or_two_punctuation_characters_match_nothing(
    store: DocumentStore, ids: dict[str, int]
) -> None:
    assert store.search("--").total == 0
    assert store.search("^").total == 0


def test_filters_combine_with_search(store: DocumentStore, ids: dict[str, int]) -> None:
    memory = store.create("登录记忆", "上次登录失败的原因", type="memory", tags=["auth"])
    assert found(store, "登录", type="memory") == {memory.id}
    assert found(store, "登录", type="document") == {ids["login"], ids["register"]}
    assert found(store, "登录", tag="AUTH") == {ids["login"], ids["register"], memory.id}
    assert found(store, "登录", tag="ui") == set()
    assert found(store, "登录失败", type="memory", tag="auth") == {memory.id}
    assert found(store, "login", tag="api") == {ids["mixed"]}


def test_pagination_totals(tmp_path: Path) -> None:
    with DocumentStore(tmp_path / "d.sqlite", limits=Limits(document_page_size=4)) as store:
        for i in range(10):
            store.create(f"日志 {i}", "系统日志" * (i + 1))
        store.create("other", "nothing")
        pages = [store.search("日志", page=n) for n in (1, 2, 3, 4)]
        assert [p.total for p in pages] == [10] * 4
        assert [len(p.items) for p in pages] == [4, 4, 2, 0]
        assert pages[0].pages == 3
        seen = [hit.id for p in pages for hit in p.items]
        assert len(set(seen)) == 10
        assert store.search("日志", page_size=2).page_size == 2
        assert store.search("日志", page_size=99).page_size == 4


def test_title_hits_rank_first(store: DocumentStore) -> None:
    body = store.create("Weekly notes", "we discussed the deployment pipeline at length")
    title = store.create("Deployment", "notes about various things")
    hits = store.search("deployment").items
    assert [h.id for h in hits] == [title.id, body.id]
    assert hits[0].score < hits[1].score


def test_snippets_mark_every_term(store: DocumentStore) -> None:
    filler = "无关内容。" * 40
    store.create("长文", filler + "用户登录后跳转到 Login 首页。" + filler)
    hit = store.search("登录 login").items[0]
    assert "[登录]" in hit.snippet
    assert "[Login]" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    custom = store.search("登录", markers=("<b>", "</b>")).items[0]
    assert "<b>登录</b>" in custom.snippet


def test_blank_query_lists(store: DocumentStore, ids: dict[str, int]) -> None:
    page = store.search("   ")
    assert page.total == len(DOCS)
    assert [h.id for h in page.items] == [d.id for d in store.list().items]


def test_the_index_follows_updates_and_deletes(store: DocumentStore) -> None:
    doc = store.create("draft", "旧内容 about cats")
    store.update(doc.id, title="final", content="新内容 about dogs", tags=["登录"])
    assert found(store, "cats") == set()
    assert found(store, "旧") == set()
    assert found(store, "dogs") == {doc.id}
    assert found(store, "新") == {doc.id}
    assert found(store, "登录") == {doc.id}  # the tag
    assert found(store, "draft") == set()
    store.delete(doc.id)
    assert found(store, "dogs") == set()
    assert found(store, "新") == set()
    connection = store._db.connection()
    for table in ("documents_tri", "documents_seg"):
        connection.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")


def test_queries_matching_more_than_the_rank_window_page_consistently(
    store: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents_search, "RANK_CANDIDATES", 5)
    store.create_many(
        NewDocument(title=f"n{i}", content="数据 data " * (1 + i % 4)) for i in range(12)
    )
    pages = [store.search("数据", page=n, page_size=4) for n in (1, 2, 3)]
    assert [p.total for p in pages] == [12, 12, 12]
    seen = [hit.id for p in pages for hit in p.items]
    assert sorted(seen) == list(range(1, 13))
    # The newest five are ranked (more repetitions first); the older seven follow newest first.
    assert set(seen[:5]) == set(range(8, 13))
    assert [hit.score for hit in pages[0].items] == sorted(h.score for h in pages[0].items)
    assert seen[5:] == list(range(7, 0, -1))


# ---- the pieces ------------------------------------------------------------------------------


def test_segment_splits_cjk_runs_into_unigrams_and_bigrams() -> None:
    assert segment("登录功能") == " 登 登录 录 录功 功 功能 能 "
    assert segment("用 Vue组件。") == " 用  Vue 组 组件 件 。"
    assert segment("plain text") == "plain text"
    assert segment("ログ") == " ロ ログ グ "


def test_query_terms_keep_quoted_phrases_and_drop_duplicates() -> None:
    assert query_terms('a "b c" A  "d') == [("a", False), ("b c", True), ("d", False)]
    assert query_terms("登录\u3000注册") == [("登录", False), ("注册", False)]


def test_plan_sends_each_term_to_the_index_that_answers_it() -> None:
    plan = plan_query('登录 error "x" 登录功能 C++ "auth" Vue组件 lazy-dog')
    assert plan.segmented == '"登录" AND "error"* AND "x"* AND "C"* AND "lazy" + "dog"*'
    assert plan.trigram == '"登录功能" AND "C++" AND "auth" AND "Vue组件"'
    assert plan_query("--").empty
    assert plan_query('x"y++').trigram == '"x""y++"'
    assert plan_query("-x").segmented == '"x"*'
    assert plan_query("fox's").segmented == '"fox"*'
    assert plan_query("qu*").segmented == '"qu"*'


@pytest.mark.parametrize(
    "query", ["fox", "fox,", "fox.", "fox's", "lazy-dog", "(fox", "fox:", "qu*"]
)
def test_punctuation_never_hides_a_word(store: DocumentStore, query: str) -> None:
    fox = store.create("Pangram", "The quick brown fox jumps over the lazy dog.").id
    store.create("Other", "A slow red panda sleeps.")
    assert found(store, query) == {fox}


def test_a_star_is_a_prefix_and_stars_alone_match_nothing(store: DocumentStore) -> None:
    quick = store.create("Pangram", "The quick brown fox").id
    quiet = store.create("Library", "a quiet room").id
    assert found(store, "qu*") == found(store, "qu") == {quick, quiet}
    assert found(store, "qui*") == {quick, quiet}
    assert found(store, "quic*") == {quick}
    assert store.search("**").total == 0


def test_snippet_without_a_match_is_the_start() -> None:
    assert make_snippet("abc\ndef", ("zzz",)) == "abc def"
    assert make_snippet("x" * 100, (), width=10) == "x" * 10 + "…"


def test_token_estimate_and_cut() -> None:
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("登录abcd") == 3
    assert cut_to_tokens("short", 10) == "short"
    assert cut_to_tokens("登" * 20, 5) == "登" * 5
    cut = cut_to_tokens("word " * 100, 10)
    assert cut.endswith(" ") and estimate_tokens(cut) <= 10


def test_counting_stops_at_the_cap_and_says_so(
    store: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents_search, "COUNT_CAP", 6)
    monkeypatch.setattr(documents_search, "RANK_CANDIDATES", 3)
    store.create_many(NewDocument(title=f"n{i}", content="bulk words") for i in range(9))
    page = store.search("bulk", page_size=4)
    assert (page.total, page.exact, page.total_text, page.total_words) == (
        6,
        False,
        "6+",
        "6+ documents",
    )
    assert len(page.items) == 4
    few = store.search("n1")
    assert (few.total, few.exact, few.total_words) == (1, True, "1 document")


def test_a_broad_query_lists_title_matches_first_then_newest_first(
    store: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents_search, "RANK_MAX_MATCHES", 4)
    monkeypatch.setattr(documents_search, "RANK_CANDIDATES", 6)
    ids = store.create_many(
        NewDocument(title="Lamp" if i in (2, 5) else f"n{i}", content=f"lamp {i}") for i in range(8)
    )
    pages = [store.search("lamp", page=n, page_size=3) for n in (1, 2, 3)]
    order = [hit.id for page in pages for hit in page.items]
    # The newest six (ids 3-8): their title matches (6, 3) first, then newest first; then older.
    assert order == [ids[5], ids[2], ids[7], ids[6], ids[4], ids[3], ids[1], ids[0]]
    assert [hit.score for hit in pages[0].items] == [-1.0, -1.0, 0.0]
    assert {p.total for p in pages} == {8}
    assert store.search("lamp", type="memory").total == 0


def test_a_short_text_is_shown_whole_around_a_late_match() -> None:
    """The window shifts back when the match is near the end: nothing is cut that fits."""
    assert make_snippet("Plan: add exponential backoff", (r"backoff",)) == (
        "Plan: add exponential [backoff]"
    )
    long = "a " * 100 + "needle"
    snippet = make_snippet(long, (r"needle",), width=20)
    assert snippet.startswith("…") and snippet.endswith("[needle]")
    assert len(snippet) == len("…") + 20 + 2


def _densest_window_by_counting_each(hits: list[re.Match[str]], width: int) -> int:
    """The definition, window by window (quadratic): the oracle for the sliding window."""
    best_start, best_score = 0, -1
    for hit in hits:
        start = max(0, hit.start() - width // 4)
        inside = {
            h.group().casefold() for h in hits if start <= h.start() and h.end() <= start + width
        }
        if len(inside) > best_score:
            best_start, best_score = start, len(inside)
    return best_start


def test_the_snippet_window_is_the_one_with_the_most_different_matches() -> None:
    rng = random.Random(11)
    finder = re.compile("ーー|ab|Ab|z{1,30}|ー", re.IGNORECASE)
    for _ in range(400):
        text = "".join(
            rng.choice(["ab", "AB", " ", "ー", "x", "zzzz", "z" * 25])
            for _ in range(rng.randint(0, 120))
        )
        hits = list(finder.finditer(text))
        width = rng.choice([4, 10, 20, 80])
        assert documents_search._densest_window(hits, width) == _densest_window_by_counting_each(
            hits, width
        ), (text, width)


class _CountedMatch:
    """A match that counts how often its position is asked."""

    asked = 0

    def __init__(self, start: int) -> None:
        self._start = start

    def start(self) -> int:
        _CountedMatch.asked += 1
        return self._start

    def end(self) -> int:
        _CountedMatch.asked += 1
        return self._start + 1

    def group(self) -> str:
        return "ー"


def test_finding_the_snippet_window_looks_at_each_match_a_few_times_not_at_every_pair() -> None:
    """A common character matching 5,000 times in one document: linear, not 25 million steps."""
    hits = [_CountedMatch(2 * index) for index in range(5_000)]
    _CountedMatch.asked = 0

    documents_search._densest_window(cast(list[re.Match[str]], hits), 80)

    assert _CountedMatch.asked <= 6 * len(hits)
