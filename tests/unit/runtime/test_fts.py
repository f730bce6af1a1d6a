"""The FTS5 keyword sidecar: safe query building, search, writes, transactions, bounding."""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.runtime.errors import FailedPrecondition, InvalidInput, Unavailable
from services.runtime.fts import FtsIndex, FtsQuery, build_match, quote_term

HOSTILE_INPUTS = [
    "",
    "   \t\n  ",
    '"',
    '"""',
    'say "hello',
    "*",
    "prefix*",
    "NEAR(",
    "NEAR(a b, 2)",
    "OR",
    "AND",
    "NOT",
    "a OR b AND NOT c",
    "(((",
    ")))",
    "(unbalanced",
    "col:term",
    "body:secret title:x",
    "^start",
    "-minus",
    "- -- ---",
    "+plus",
    "{a b}",
    "\x00",
    "nul\x00byte",
    "\ud800",
    "lone \udfff surrogate",
    "emoji 🚀🔥 only",
    "🚀",
    "東京タワーの高さ",
    "데이터베이스 검색",
    "Ünïcödé çafé",
    "x" * 100_000,
    ("word " * 20_000),
    "the and of",
    "'; DROP TABLE docs; --",
    "\\",
    "a_b_c",
    "ＦＵＬＬＷＩＤＴＨ",
]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[FtsIndex]:
    fts = FtsIndex(tmp_path / "kw.sqlite3", columns=["title", "body"])
    yield fts
    fts.close()


def test_quote_term_doubles_embedded_quotes() -> None:
    assert quote_term('say "hi"') == '"say ""hi"""'


def test_build_match_quotes_lowercases_dedupes_and_drops_stopwords() -> None:
    assert build_match("The Cat and the CAT sat") == '"cat" OR "sat"'


def test_build_match_caps_the_number_of_terms() -> None:
    text = " ".join(f"term{i}" for i in range(50))
    match = build_match(text, max_terms=3)
    assert match == '"term0" OR "term1" OR "term2"'


def test_build_match_returns_none_when_nothing_is_left() -> None:
    assert build_match("") is None
    assert build_match("the of and") is None
    assert build_match("🚀 *** ()") is None


@pytest.mark.parametrize("text", HOSTILE_INPUTS, ids=lambda t: repr(t[:20]))
def test_hostile_input_is_none_or_a_query_that_runs(index: FtsIndex, text: str) -> None:
    index.upsert(
        [{"id": "1", "title": "near or not", "body": "col term start minus 東京タワーの高さ"}]
    )
    match = build_match(text)
    if match is not None:
        # Run the raw expression too: the builder's output itself must be valid FTS5.
        conn = sqlite3.connect(index.path)
        try:
            conn.execute("SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?", (match,)).fetchall()
        finally:
            conn.close()
    index.search(text, limit=5)
    index.search(text, limit=5, filter_ids=["1", "2"])


def test_search_finds_the_matching_rows_best_first(index: FtsIndex) -> None:
    index.upsert(
        [
            {"id": "a", "title": "Postgres tuning", "body": "vacuum and autovacuum settings"},
            {"id": "b", "title": "Redis", "body": "eviction policy; redis redis redis"},
            {"id": "c", "title": "Cooking", "body": "a recipe for bread"},
        ]
    )
    hits = index.search("redis eviction", limit=10)
    assert [hit.id for hit in hits] == ["b"]
    assert hits[0].score > 0
    ranked = index.search("redis vacuum", limit=10)
    assert {hit.id for hit in ranked} == {"a", "b"}
    assert ranked[0].score >= ranked[1].score
    assert index.search("café", limit=10) == []


def test_search_ignores_diacritics(index: FtsIndex) -> None:
    index.upsert([{"id": "x", "title": "Café Über", "body": ""}])
    assert [hit.id for hit in index.search("cafe uber", limit=5)] == ["x"]


def test_upsert_replaces_the_indexed_text(index: FtsIndex) -> None:
    index.upsert([{"id": "doc", "title": "alpha", "body": "bravo"}])
    index.upsert([{"id": "doc", "title": "charlie", "body": "delta"}])
    assert index.search("alpha bravo", limit=5) == []
    assert [hit.id for hit in index.search("charlie", limit=5)] == ["doc"]
    assert index.count() == 1


def test_delete_removes_rows_from_the_index(index: FtsIndex) -> None:
    index.upsert(
        [{"id": "1", "title": "keep", "body": ""}, {"id": "2", "title": "gone", "body": ""}]
    )
    assert index.delete(["2", "unknown"]) == 1
    assert index.search("gone", limit=5) == []
    assert index.count() == 1


def test_invalid_rows_change_nothing(index: FtsIndex) -> None:
    index.upsert([{"id": "1", "title": "pristine", "body": ""}])
    bad_rows = [
        [{"id": "1", "title": "after"}, {"title": "no id"}],
        [{"id": "2", "colour": "blue"}],
        [{"id": "3", "title": "lone \ud800 surrogate"}],
    ]
    for rows in bad_rows:
        with pytest.raises(InvalidInput):
            index.upsert(rows)
    with pytest.raises(InvalidInput):
        index.delete(["1", "\udc00"])
    assert index.count() == 1
    assert [hit.id for hit in index.search("pristine", limit=5)] == ["1"]


def test_filter_ids_restricts_results_on_both_paths(index: FtsIndex) -> None:
    index.upsert([{"id": f"r{i}", "title": "shared word", "body": f"n{i}"} for i in range(200)])
    small = index.search("shared", limit=50, filter_ids={"r1", "r7", "missing"})
    assert {hit.id for hit in small} == {"r1", "r7"}
    allowed = {f"r{i}" for i in range(0, 200, 2)}
    large = index.search("shared", limit=500, filter_ids=allowed)
    assert {hit.id for hit in large} == allowed
    assert index.search("shared", limit=5, filter_ids=[]) == []
    # The probe path and the scan path score a row identically.
    by_probe = {hit.id: hit.score for hit in small}
    by_scan = {hit.id: hit.score for hit in index.search("shared", limit=500)}
    assert by_probe["r1"] == pytest.approx(by_scan["r1"])


def test_wal_mode_is_on(index: FtsIndex) -> None:
    conn = sqlite3.connect(index.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_common_terms_are_dropped_when_a_rarer_one_remains(tmp_path: Path) -> None:
    fts = FtsIndex(tmp_path / "c.sqlite3", columns=["body"], common_min_rows=10)
    try:
        rows = [{"id": str(i), "body": f"memory filler{i}"} for i in range(50)]
        rows.append({"id": "rare", "body": "memory zeppelin"})
        fts.upsert(rows)
        assert fts.plan_query("memory zeppelin").terms == ("zeppelin",)
        assert [hit.id for hit in fts.search("memory zeppelin", limit=100)] == ["rare"]
        # Only common terms: the rarest ones are kept, so the search still answers.
        assert fts.plan_query("memory").terms == ("memory",)
        assert len(fts.search("memory", limit=100)) == 51
        # Below common_min_rows nothing is dropped.
        small = FtsIndex(tmp_path / "s.sqlite3", columns=["body"])
        small.upsert(rows)
        assert small.plan_query("memory zeppelin").terms == ("memory", "zeppelin")
        small.close()
    finally:
        fts.close()


def test_common_term_frequencies_follow_writes(tmp_path: Path) -> None:
    fts = FtsIndex(tmp_path / "w.sqlite3", columns=["body"], common_min_rows=1)
    try:
        fts.upsert([{"id": str(i), "body": f"alpha beta{i}"} for i in range(10)])
        assert fts.plan_query("alpha gamma").terms == ("gamma",)
        fts.upsert([{"id": str(i), "body": f"gamma beta{i}"} for i in range(10)])
        assert fts.plan_query("alpha gamma").terms == ("alpha",)
    finally:
        fts.close()


def test_transaction_rolls_back_content_and_index_on_error(index: FtsIndex) -> None:
    index.upsert([{"id": "1", "title": "original", "body": ""}])

    class Boom(RuntimeError):
        pass

    with pytest.raises(Boom), index.transaction() as tx:
        tx.upsert([{"id": "1", "title": "rewritten", "body": ""}])
        tx.upsert([{"id": "2", "title": "added", "body": ""}])
        tx.delete(["1"])
        raise Boom
    assert index.count() == 1
    assert [hit.id for hit in index.search("original", limit=5)] == ["1"]
    assert index.search("rewritten added", limit=5) == []
    with index.transaction() as tx:
        tx.upsert([{"id": "2", "title": "added", "body": ""}])
    assert [hit.id for hit in index.search("added", limit=5)] == ["2"]


def test_rebuild_and_optimize_keep_results(index: FtsIndex) -> None:
    index.upsert([{"id": str(i), "title": f"word{i}", "body": "common"} for i in range(20)])
    index.rebuild()
    index.optimize()
    assert [hit.id for hit in index.search("word7", limit=5)] == ["7"]


def test_reads_from_other_threads_see_committed_rows(index: FtsIndex) -> None:
    index.upsert([{"id": "t", "title": "threaded", "body": ""}])
    seen: list[list[str]] = []

    def read() -> None:
        seen.append([hit.id for hit in index.search("threaded", limit=5)])

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert seen == [["t"]] * 4


def test_reopening_keeps_rows_and_refuses_other_columns(tmp_path: Path) -> None:
    path = tmp_path / "re.sqlite3"
    first = FtsIndex(path, columns=["body"])
    first.upsert([{"id": "1", "body": "persisted"}])
    first.close()
    with pytest.raises(Unavailable):
        first.search("persisted", limit=1)
    again = FtsIndex(path, columns=["body"])
    assert [hit.id for hit in again.search("persisted", limit=1)] == ["1"]
    again.close()
    with pytest.raises(FailedPrecondition):
        FtsIndex(path, columns=["title", "body"])


def test_an_index_gains_columns_appended_to_its_list_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "grow.sqlite3"
    old = FtsIndex(path, columns=["body"])
    old.upsert([{"id": "1", "body": "persisted words"}])
    old.close()
    grown = FtsIndex(path, columns=["body", "source"])
    assert [hit.id for hit in grown.search("persisted", limit=1)] == ["1"]
    grown.upsert([{"id": "2", "body": "framed memory", "source": "the original turn"}])
    grown.upsert([{"id": "1", "body": "persisted words", "source": "rewritten later"}])
    assert [hit.id for hit in grown.search("original", limit=5)] == ["2"]
    assert [hit.id for hit in grown.search("rewritten", limit=5)] == ["1"]
    assert grown.count() == 2
    grown.close()
    # a column removed or reordered is still refused
    with pytest.raises(FailedPrecondition):
        FtsIndex(path, columns=["source", "body"])


def test_bad_column_names_are_refused(tmp_path: Path) -> None:
    for columns in ([], ["id"], ["body; DROP"], ["a", "A"]):
        with pytest.raises(ValueError):
            FtsIndex(tmp_path / "bad.sqlite3", columns=columns)


def test_fts_query_can_be_passed_prebuilt(index: FtsIndex) -> None:
    index.upsert([{"id": "q", "title": "prebuilt", "body": ""}])
    query = FtsQuery.parse("Prebuilt query")
    assert query.terms == ("prebuilt", "query")
    assert [hit.id for hit in index.search(query, limit=5)] == ["q"]


def test_porter_stemming_matches_word_forms(index: FtsIndex) -> None:
    index.upsert([{"id": "r", "title": "", "body": "Retries were capped after the outage"}])
    assert [hit.id for hit in index.search("retry cap", limit=5)] == ["r"]


def test_common_terms_are_counted_under_their_stem(tmp_path: Path) -> None:
    # "memories" and "memory" are one token in the index: the query's inflected form must be
    # recognised as common, or the bounding would never fire for it.
    fts = FtsIndex(tmp_path / "stem.sqlite3", columns=["body"], common_min_rows=10)
    try:
        rows = [{"id": str(i), "body": f"memory filler{i}"} for i in range(50)]
        rows.append({"id": "rare", "body": "memory zeppelin"})
        fts.upsert(rows)
        assert fts.plan_query("memories zeppelins").terms == ("zeppelins",)
    finally:
        fts.close()


def test_an_index_built_with_another_tokenizer_is_retokenized_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    old = FtsIndex(path, columns=["body"], tokenizer="unicode61 remove_diacritics 2")
    old.upsert([{"id": "r", "body": "Retries were capped"}])
    assert old.search("retry", limit=5) == [], "no stemming in the old index"
    old.close()
    new = FtsIndex(path, columns=["body"])
    try:
        assert [hit.id for hit in new.search("retry", limit=5)] == ["r"]
        assert new.count() == 1, "the content table is kept whole"
    finally:
        new.close()


def test_reference_score_sums_the_idf_of_the_searched_terms(tmp_path: Path) -> None:
    # 10 rows; "alpha" in 1 → idf ln(9.5/1.5); "beta" in none → ln(10.5/0.5).
    fts = FtsIndex(tmp_path / "ref.sqlite3", columns=["body"])
    try:
        fts.upsert([{"id": str(i), "body": f"row{i}"} for i in range(9)])
        fts.upsert([{"id": "a", "body": "alpha"}])
        expected = math.log(9.5 / 1.5) + math.log(10.5 / 0.5)
        assert fts.reference_score("alpha beta") == pytest.approx(expected)
        found = fts.search_scored("alpha beta", limit=5)
        assert found.ids == ["a"] and found.reference == pytest.approx(expected)
        assert fts.search_scored("nothing here", limit=5).reference == 0.0, "no hits, no scale"
    finally:
        fts.close()
