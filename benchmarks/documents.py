"""Benchmark of the document store's search at 100,000 documents (issues 7 and 16).

Builds the collection of :mod:`documents_corpus` in a temporary folder, then runs a mix of
more than 200 queries through ``DocumentStore.search`` and through a plain ``LIKE '%kw%'`` scan
of the same rows, side by side, query by query. Classes: whole English words, Chinese/Japanese
text of 1, 2, 3 and 4 characters, misses, multi-word queries, one- and two-letter prefixes,
queries filtered by type and by tag.

Honest timing: every query is timed on its **first** run, on both sides (no warm-up run, no
best-of-N); each side opened its connection before the first query. Both sides do the same job:
count every match (the total a results page shows) and fetch the first page.

Where the match semantics agree — text without Latin letters (CJK is matched as a substring by
both) and misses — the two totals must be equal, and any difference is listed as an error; a
total past the store's count cap ("10,000+") must be at most LIKE's.
Latin words differ by design (the store matches words *starting* with the term, LIKE any
substring: ``port`` in ``report``); those differences are summed up per class.

Run: ``python -m benchmarks.documents [--docs N] [--keep DIR]``. The last line is JSON:
``{"docs", "queries", "search_p95_ms", "worst_class_p95_ms", "worst_class", "like_p95_ms",
"speedup_vs_like", "p95_speedup_vs_like", "count_mismatches", "capped_counts"}``:
``speedup_vs_like`` is the overall ratio (all LIKE time / all search time, the same queries),
``p95_speedup_vs_like`` LIKE p95 / search p95. Goals: p95 ≤ 20 ms in every class, ≥ 50× LIKE.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchmarks.documents_corpus import BATCH, CHINESE_2, CHINESE_4, ENGLISH, JAPANESE, batches
from core.config.settings import Limits
from core.documents.store import DocumentStore

TAGS = ["plan", "review", "bug", "spec", "notes", "登录", "设计", "api"]
_LATIN = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    type: str | None = None
    tag: str | None = None

    @property
    def same_semantics(self) -> bool:
        """CJK and misses are substrings on both sides; Latin words are prefixes on one."""
        return self.kind == "miss" or not _LATIN.search(self.text)

    def label(self) -> str:
        extra = f" type={self.type}" if self.type else f" tag={self.tag}" if self.tag else ""
        return f"{self.text}{extra}"


def query_mix(seed: int) -> list[Query]:
    rng = random.Random(seed)
    cjk = CHINESE_2 + CHINESE_4 + JAPANESE

    def cjk_piece(length: int) -> str:
        word = rng.choice([w for w in cjk if len(w) >= length])
        start = rng.randrange(len(word) - length + 1)
        return word[start : start + length]

    queries = [Query("word", w) for w in rng.sample(ENGLISH, 30)]
    for length in (1, 2, 3, 4):
        queries += [Query(f"cjk{length}", cjk_piece(length)) for _ in range(16)]
    queries += [
        Query("miss", w)
        for w in [
            "qzxv",
            "blorft",
            "xylophonist",
            "zzyzx",
            "quetzal",
            "vorpal",
            "gubbins",
            "snorkel",
            "tiramisu",
            "wombat",
            "鬱",
            "龘",
            "麒麟",
            "饕餮",
            "魑魅魍魉",
            "ヴァイオリン",
            "ぽ",
            "ゑ",
            "蟋蟀",
            "鸳鸯",
        ]
    ]
    queries += [Query("multi", " ".join(rng.sample(ENGLISH, 2))) for _ in range(8)]
    queries += [Query("multi", f"{cjk_piece(2)} {cjk_piece(2)}") for _ in range(8)]
    queries += [Query("multi", f"{rng.choice(ENGLISH)} {cjk_piece(2)}") for _ in range(4)]
    letters = "abcdefghijklmnoprstuw"
    queries += [Query("prefix1", letter) for letter in rng.sample(letters, 15)]
    pairs = sorted({w[:2] for w in ENGLISH})
    queries += [Query("prefix2", pair) for pair in rng.sample(pairs, 15)]
    for index in range(20):
        text = rng.choice(ENGLISH) if index % 2 else cjk_piece(rng.randint(1, 4))
        queries.append(Query("type", text, type="memory" if index % 3 else "document"))
    for index in range(20):
        text = rng.choice(ENGLISH) if index % 2 else cjk_piece(rng.randint(1, 4))
        queries.append(Query("tag", text, tag=rng.choice(TAGS)))
    return queries


def like_search(connection: sqlite3.Connection, query: Query, page_size: int) -> int:
    """The baseline: one scan of every row, as an app without an index would do."""
    where = []
    args: list[str] = []
    for term in query.text.split():
        where.append("(title LIKE ? OR content LIKE ? OR tags LIKE ?)")
        args += [f"%{term}%"] * 3
    if query.type is not None:
        where.append("type = ?")
        args.append(query.type)
    if query.tag is not None:
        where.append("id IN (SELECT doc_id FROM document_tags WHERE tag = ?)")
        args.append(query.tag)
    rows = connection.execute(
        f"SELECT id, updated FROM documents WHERE {' AND '.join(where)} ORDER BY updated DESC",
        args,
    ).fetchall()
    _first_page = rows[:page_size]
    return len(rows)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = max(0, math.ceil(fraction * len(ordered)) - 1)
    return ordered[index]


def build(store: DocumentStore, docs: int, seed: int) -> None:
    started = time.perf_counter()
    existing = store.list().total
    if existing < docs:
        print(f"building {docs:,} documents in {store.path}", flush=True)
        done = existing - existing % BATCH
        if done < existing:  # an interrupted build: drop its partial last batch
            with store._db.transaction(write=True) as connection:
                connection.execute("DELETE FROM documents WHERE id > ?", (done,))
        for batch in batches(docs, seed, start=done // BATCH):
            store.create_many(batch)
            done += len(batch)
            print(f"  {done:>7,} documents  {time.perf_counter() - started:6.1f} s", flush=True)
    folder = store.path.parent
    size_mb = sum(f.stat().st_size for f in folder.glob("documents.sqlite*")) / 1e6
    print(f"built in {time.perf_counter() - started:.1f} s, {size_mb:.0f} MB", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep the database")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="baton-bench-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "documents.sqlite"
        with DocumentStore(path, limits=Limits()) as store:
            build(store, args.docs, args.seed)
        queries = query_mix(args.seed + 1)
        # Fresh connections for both sides, opened before the first timed query.
        store = DocumentStore(path, limits=Limits())
        store.list(page_size=1)
        connection = sqlite3.connect(path)
        connection.execute("SELECT 1 FROM documents LIMIT 1").fetchall()
        page_size = store.limits.document_page_size
        search_ms: dict[str, list[float]] = defaultdict(list)
        like_ms: dict[str, list[float]] = defaultdict(list)
        mismatches: list[str] = []
        differing: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        capped = 0
        print(f"{'class':<9}{'query':<24}{'hits':>8}{'search ms':>11}{'like ms':>10}", flush=True)
        for query in queries:
            t0 = time.perf_counter()
            page = store.search(query.text, type=query.type, tag=query.tag)
            t1 = time.perf_counter()
            like_total = like_search(connection, query, page_size)
            t2 = time.perf_counter()
            search_ms[query.kind].append((t1 - t0) * 1000)
            like_ms[query.kind].append((t2 - t1) * 1000)
            mark = ""
            if not page.exact and like_total >= page.total:
                mark = f"  (LIKE: {like_total}; the store stops counting at {page.total_text})"
                capped += 1
            elif like_total != page.total:
                mark = f"  (LIKE: {like_total})"
                if query.same_semantics:
                    mismatches.append(
                        f"{query.kind} {query.label()!r}: {page.total} vs LIKE {like_total}"
                    )
                    mark += "  MISMATCH"
                else:
                    counts = differing[query.kind]
                    counts[0] += 1
                    counts[1] += page.total
                    counts[2] += like_total
            print(
                f"{query.kind:<9}{query.label():<24}{page.total:>8}"
                f"{search_ms[query.kind][-1]:>11.2f}{like_ms[query.kind][-1]:>10.1f}{mark}",
                flush=True,
            )
        connection.close()
        store.close()

    print(f"\n{'class':<9}{'queries':>8}{'search p95':>12}{'like p95':>10}")
    for kind, times in search_ms.items():
        print(
            f"{kind:<9}{len(times):>8}{percentile(times, 0.95):>12.2f}"
            f"{percentile(like_ms[kind], 0.95):>10.1f}"
        )
    every_search = [t for times in search_ms.values() for t in times]
    every_like = [t for times in like_ms.values() for t in times]
    search_p95 = percentile(every_search, 0.95)
    like_p95 = percentile(every_like, 0.95)
    worst = max(search_ms, key=lambda kind: percentile(search_ms[kind], 0.95))
    print(f"{'all':<9}{len(every_search):>8}{search_p95:>12.2f}{like_p95:>10.1f}")
    print(f"total: search {sum(every_search):.0f} ms, LIKE {sum(every_like):.0f} ms")
    print("\nTotals that differ by design (word prefix vs LIKE substring):")
    for kind, (count, ours, theirs) in differing.items():
        print(f"  {kind}: {count} queries; store found {ours:,} documents, LIKE {theirs:,}")
    print(f"Totals past the store's count cap (compared as 'at least'): {capped}")
    print(f"Totals that should agree and do not: {len(mismatches)}")
    for line in mismatches:
        print(f"  {line}")
    result = {
        "docs": args.docs,
        "queries": len(queries),
        "search_p95_ms": round(search_p95, 2),
        "worst_class_p95_ms": round(percentile(search_ms[worst], 0.95), 2),
        "worst_class": worst,
        "like_p95_ms": round(like_p95, 1),
        "speedup_vs_like": round(sum(every_like) / sum(every_search), 1),
        "p95_speedup_vs_like": round(like_p95 / search_p95, 1),
        "count_mismatches": len(mismatches),
        "capped_counts": capped,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
