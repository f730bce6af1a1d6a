"""The SQLite FTS5 keyword sidecar: one SQLite file per store and collection.

Layout (in the style of sqlite-utils)::

    docs(id TEXT PRIMARY KEY, <columns...>)      the content table, the source of truth
    docs_fts  USING fts5(<columns>, content=docs)  an external-content index over it
    docs_vocab USING fts5vocab(docs_fts, 'row')  per-term document frequencies

Triggers on `docs` keep `docs_fts` in step, so a write is one statement on `docs` and the
index can never drift except by a crash mid-`rebuild` (which `rebuild()` repairs).

User text never reaches `MATCH` raw: `FtsQuery.parse` keeps only letters and digits, so every
term is a plain word that is then quoted as an FTS5 string; no input can be a syntax error.

Tokenizer: Porter stemming over unicode61 (diacritics folded), so "retries", "retried" and
"retry" meet; measured on SciFact and LoCoMo it lifts keyword recall and every fusion over it
(docs/decisions/0011-relevance-fusion.md). An index written with another tokenizer is
re-tokenized on open (`rebuild` from the content table, which holds the source text), and
one written before columns were appended to its list gains them (empty) and is re-indexed.
Document frequencies live under the stemmed token, so query terms are stemmed through a
private in-memory FTS5 table with the same tokenizer before they are looked up.

Common terms: FTS5 walks the whole doclist of every term it matches. On 1M rows a term in 40%
of them costs ~600 ms p50, a rare one 0.4 ms. Before searching, the index looks up each
term's document frequency in `docs_vocab` (an indexed seek, ~0.05 ms) and drops terms in more
than `common_fraction` of the rows while a rarer term remains; when every term is common it
keeps the `COMMON_TERMS_KEPT` rarest. Small indexes (under `common_min_rows`) are searched
as asked: they are fast anyway, and there every term looks "common". Frequencies are cached
per term until the next committed write.

Threads: writes share one connection behind a re-entrant lock (SQLite admits one writer per
file anyway, and one connection lets `transaction()` span several calls). Reads use one
connection per thread, so searches run alongside a long write (WAL readers never block) and
see the last committed state; a search inside a `transaction()` does not see its writes.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from services.runtime.errors import FailedPrecondition, InvalidInput, Unavailable

# Common English function words: they match nearly every row and carry no topic.
_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for
from further had has have having he her here hers herself him himself his how i if in
into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your
yours yourself yourselves
"""
DEFAULT_STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
COMMON_TERMS_KEPT = 2
# A query against at most this many allowed ids probes each of their rows instead of
# walking every match: cost follows the allowed set, not how common the terms are.
PROBE_MAX_IDS = 64
# Longer "words" are pasted blobs (hashes, base64), never something a person searches for.
MAX_TERM_CHARS = 64
_DF_CACHE_MAX = 10_000
_STEM_CACHE_MAX = 50_000
DEFAULT_TOKENIZER = "porter unicode61 remove_diacritics 2"
# FTS5's bm25() floors a term's IDF here (a term in more than half the rows has log ≤ 0).
MIN_IDF = 1e-6
_RESERVED = frozenset({"id", "rowid", "rank", "docs_fts", "docs"})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Letters and digits only: what the unicode61 tokenizer also treats as token characters.
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class FtsHit:
    """One keyword match: the row id and its BM25 score (higher is better)."""

    id: str
    score: float


@dataclass(frozen=True)
class KeywordHits:
    """The keyword matches of one query, best first, with the query's absolute BM25 scale."""

    hits: tuple[FtsHit, ...] = ()
    reference: float = 0.0  # `FtsIndex.reference_score` of the query

    @property
    def ids(self) -> list[str]:
        """The matching row ids, best first."""
        return [hit.id for hit in self.hits]


def quote_term(term: str) -> str:
    """Quote a term as an FTS5 string, doubling embedded quotes."""
    return '"' + term.replace('"', '""') + '"'


@dataclass(frozen=True)
class FtsQuery:
    """A parsed keyword query: lowercased, de-duplicated terms, matched with OR."""

    terms: tuple[str, ...]

    @classmethod
    def parse(
        cls,
        user_text: str,
        *,
        stopwords: frozenset[str] = DEFAULT_STOPWORDS,
        max_terms: int = 16,
    ) -> FtsQuery:
        """Tokenise user text into at most `max_terms` distinct non-stopword terms."""
        terms: list[str] = []
        seen: set[str] = set()
        for match in _WORD.finditer(unicodedata.normalize("NFKC", user_text)):
            if len(terms) >= max_terms:
                break
            term = match.group().lower()
            if term in seen or term in stopwords or len(term) > MAX_TERM_CHARS:
                continue
            seen.add(term)
            terms.append(term)
        return cls(tuple(terms))

    def to_match(self) -> str | None:
        """The FTS5 MATCH expression, or None when there is nothing to search for."""
        if not self.terms:
            return None
        return " OR ".join(quote_term(term) for term in self.terms)


def build_match(
    user_text: str, *, stopwords: frozenset[str] = DEFAULT_STOPWORDS, max_terms: int = 16
) -> str | None:
    """A safe FTS5 MATCH expression for user text; None when no term is left."""
    return FtsQuery.parse(user_text, stopwords=stopwords, max_terms=max_terms).to_match()


class _Stemmer:
    """Query terms → the tokens the index stores for them, through FTS5's own tokenizer.

    One private in-memory database per tokenizer, behind a lock; results are cached per term
    (a stem never changes), so a term costs one tiny insert the first time it is seen.
    """

    def __init__(self, tokenizer: str) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, str] = {}
        self._conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._conn.execute(f"CREATE VIRTUAL TABLE stem USING fts5(t, tokenize='{tokenizer}')")
        self._conn.execute("CREATE VIRTUAL TABLE stem_vocab USING fts5vocab(stem, 'instance')")

    def tokens(self, terms: Sequence[str]) -> dict[str, str]:
        with self._lock:
            missing = [t for t in terms if t not in self._cache]
            if missing:
                if len(self._cache) + len(missing) > _STEM_CACHE_MAX:
                    self._cache.clear()
                self._conn.execute("BEGIN")
                self._conn.executemany(
                    "INSERT INTO stem(rowid, t) VALUES (?, ?)", enumerate(missing, start=1)
                )
                found = dict(self._conn.execute("SELECT doc, term FROM stem_vocab").fetchall())
                self._conn.execute("ROLLBACK")
                for index, term in enumerate(missing, start=1):
                    self._cache[term] = found.get(index, term)
            return {t: self._cache[t] for t in terms}


_STEMMERS: dict[str, _Stemmer] = {}
_STEMMERS_LOCK = threading.Lock()


def _stemmer(tokenizer: str) -> _Stemmer:
    with _STEMMERS_LOCK:
        stemmer = _STEMMERS.get(tokenizer)
        if stemmer is None:
            stemmer = _STEMMERS[tokenizer] = _Stemmer(tokenizer)
        return stemmer


def idf(rows: int, doc_frequency: int) -> float:
    """A term's inverse document frequency exactly as FTS5's bm25() computes it."""
    return max(MIN_IDF, math.log((rows - doc_frequency + 0.5) / (doc_frequency + 0.5)))


class FtsIndex:
    """A keyword index over rows of named text columns, keyed by a string id."""

    def __init__(
        self,
        path: Path,
        *,
        columns: Sequence[str],
        common_fraction: float = 0.2,
        common_min_rows: int = 1000,
        busy_timeout_ms: int = 5000,
        tokenizer: str = DEFAULT_TOKENIZER,
    ) -> None:
        self._check_columns(columns)
        if "'" in tokenizer:
            raise ValueError(f"tokenizer {tokenizer!r} must not contain quotes")
        self.tokenizer = tokenizer
        self._stems = _stemmer(tokenizer)
        if not 0 < common_fraction <= 1:
            raise ValueError(f"common_fraction must be in (0, 1], got {common_fraction}")
        self.path = path
        self.columns: tuple[str, ...] = tuple(columns)
        self.common_fraction = common_fraction
        self.common_min_rows = common_min_rows
        self._busy_timeout_ms = busy_timeout_ms
        self._closed = False
        self._write_lock = threading.RLock()
        self._tx_depth = 0
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        # Replaced (never mutated in place) on each committed write, so a search that read
        # frequencies before the write can only fill the discarded dict.
        # The row count lives under the key "" (never a term).
        self._df_cache: dict[str, int] = {}
        path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = self._connect()
        try:
            self._writer.execute("PRAGMA journal_mode=WAL")
            self._create_schema()
        except BaseException:
            self._writer.close()
            raise

    @staticmethod
    def _check_columns(columns: Sequence[str]) -> None:
        if not columns:
            raise ValueError("an FTS index needs at least one text column")
        for column in columns:
            if not _IDENTIFIER.match(column) or column.lower() in _RESERVED:
                raise ValueError(f"column name {column!r} is not a usable SQL identifier")
        if len({c.lower() for c in columns}) != len(columns):
            raise ValueError(f"column names repeat: {list(columns)}")

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves; check_same_thread=False so
        # close() may close every thread's connection.
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _create_schema(self) -> None:
        cols = ", ".join(self.columns)
        new_cols = ", ".join(f"new.{c}" for c in self.columns)
        old_cols = ", ".join(f"old.{c}" for c in self.columns)
        typed = ", ".join(f"{c} TEXT NOT NULL DEFAULT ''" for c in self.columns)
        with self.transaction():
            existing = [row[1] for row in self._writer.execute("PRAGMA table_info(docs)")]
            wanted = ["id", *self.columns]
            added = wanted[len(existing) :] if existing == wanted[: len(existing)] else []
            if existing and existing != wanted and not added:
                raise FailedPrecondition(
                    f"keyword index {self.path} has columns {existing[1:]}, this code expects "
                    f"{list(self.columns)}: move the file aside and re-index the collection"
                )
            retokenize = self._tokenizer_changed() or bool(existing and added)
            if existing and added:
                # Columns appended since the file was written: add them (empty for the rows
                # already there) and index anew over the wider table.
                for column in added:
                    self._writer.execute(
                        f"ALTER TABLE docs ADD COLUMN {column} TEXT NOT NULL DEFAULT ''"
                    )
                for trigger in ("docs_ai", "docs_ad", "docs_au"):
                    self._writer.execute(f"DROP TRIGGER IF EXISTS {trigger}")
            if retokenize:
                self._writer.execute("DROP TABLE IF EXISTS docs_vocab")
                self._writer.execute("DROP TABLE IF EXISTS docs_fts")
            for statement in (
                f"CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, {typed})",
                f"CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5({cols}, content='docs',"
                f" content_rowid='rowid', tokenize='{self.tokenizer}')",
                "CREATE VIRTUAL TABLE IF NOT EXISTS docs_vocab USING fts5vocab(docs_fts, 'row')",
                f"""CREATE TRIGGER IF NOT EXISTS docs_ai AFTER INSERT ON docs BEGIN
                    INSERT INTO docs_fts(rowid, {cols}) VALUES (new.rowid, {new_cols});
                END""",
                f"""CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
                    INSERT INTO docs_fts(docs_fts, rowid, {cols})
                        VALUES ('delete', old.rowid, {old_cols});
                END""",
                f"""CREATE TRIGGER IF NOT EXISTS docs_au AFTER UPDATE ON docs BEGIN
                    INSERT INTO docs_fts(docs_fts, rowid, {cols})
                        VALUES ('delete', old.rowid, {old_cols});
                    INSERT INTO docs_fts(rowid, {cols}) VALUES (new.rowid, {new_cols});
                END""",
            ):
                # One statement at a time: executescript() would COMMIT our transaction.
                self._writer.execute(statement)
            if retokenize:
                self._writer.execute("INSERT INTO docs_fts(docs_fts) VALUES ('rebuild')")

    def _tokenizer_changed(self) -> bool:
        """Whether an existing index was built with another tokenizer than this code's."""
        row = self._writer.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'docs_fts'"
        ).fetchone()
        return row is not None and f"tokenize='{self.tokenizer}'" not in row[0]

    def _reader(self) -> sqlite3.Connection:
        if self._closed:
            raise Unavailable(f"keyword index {self.path} is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute("PRAGMA query_only=1")
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[FtsIndex]:
        """Group writes atomically: commit on exit, roll back content and index on error.

        Holds the write lock for the whole block, so use it from one thread (e.g. inside
        `asyncio.to_thread`), never across awaits on the event loop. Blocks nest (savepoints).
        """
        with self._write_lock:
            if self._closed:
                raise Unavailable(f"keyword index {self.path} is closed")
            depth = self._tx_depth
            self._writer.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT sp{depth}")
            self._tx_depth += 1
            try:
                yield self
            except BaseException:
                self._tx_depth -= 1
                if depth == 0:
                    if self._writer.in_transaction:
                        self._writer.execute("ROLLBACK")
                else:
                    self._writer.execute(f"ROLLBACK TO sp{depth}")
                    self._writer.execute(f"RELEASE sp{depth}")
                raise
            self._tx_depth -= 1
            if depth == 0:
                self._writer.execute("COMMIT")
                self._df_cache = {}
            else:
                self._writer.execute(f"RELEASE sp{depth}")

    def _row_values(self, row: Mapping[str, str]) -> tuple[str, ...]:
        row_id = row.get("id")
        if not isinstance(row_id, str) or not row_id:
            raise InvalidInput("every keyword row needs a non-empty string 'id'", field="id")
        unknown = set(row) - {"id", *self.columns}
        if unknown:
            raise InvalidInput(
                f"row {row_id!r} has unknown columns {sorted(unknown)}; "
                f"this index has {list(self.columns)}",
                field="columns",
            )
        values = [row_id]
        for column in self.columns:
            value = row.get(column, "")
            if not isinstance(value, str):
                raise InvalidInput(f"row {row_id!r}: column {column!r} must be text", field=column)
            values.append(value)
        for value in values:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as e:
                raise InvalidInput(
                    f"row {row_id!r} holds text that is not valid Unicode ({e.reason}): "
                    "send UTF-8 text"
                ) from e
        return tuple(values)

    def upsert(self, rows: Sequence[Mapping[str, str]]) -> None:
        """Insert or replace whole rows by id, all in one transaction.

        A column missing from a row is stored empty. Nothing is written if any row is invalid.
        """
        values = [self._row_values(row) for row in rows]
        if not values:
            return
        cols = ", ".join(self.columns)
        marks = ", ".join("?" for _ in range(len(self.columns) + 1))
        updates = ", ".join(f"{c} = excluded.{c}" for c in self.columns)
        sql = (
            f"INSERT INTO docs (id, {cols}) VALUES ({marks}) "
            f"ON CONFLICT(id) DO UPDATE SET {updates}"
        )
        with self.transaction():
            self._writer.executemany(sql, values)

    def delete(self, ids: Collection[str]) -> int:
        """Delete rows by id; unknown ids are ignored. Returns how many rows went."""
        if not ids:
            return 0
        try:
            for row_id in ids:
                row_id.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidInput(f"an id to delete is not valid Unicode ({e.reason})") from e
        with self.transaction():
            cursor = self._writer.executemany("DELETE FROM docs WHERE id = ?", ((i,) for i in ids))
            return max(cursor.rowcount, 0)

    def ids(self) -> list[str]:
        """Every row id (as last committed): for reconciling with the store this index mirrors."""
        return [row[0] for row in self._reader().execute("SELECT id FROM docs")]

    def rows(self) -> dict[str, tuple[str, ...]]:
        """Every row's column values by id (as last committed): for `engram doctor`, which
        compares them with what the collection this index mirrors says they should be."""
        cols = ", ".join(self.columns)
        return {
            str(row[0]): tuple(str(v) for v in row[1:])
            for row in self._reader().execute(f"SELECT id, {cols} FROM docs")
        }

    def integrity_problem(self) -> str | None:
        """What FTS5's own integrity check finds wrong between the full-text index and its
        rows, or None when they agree (`rebuild` mends it)."""
        try:
            with self.transaction():
                self._writer.execute(
                    "INSERT INTO docs_fts(docs_fts, rank) VALUES ('integrity-check', 1)"
                )
        except sqlite3.DatabaseError as error:
            return str(error)
        return None

    def count(self) -> int:
        """How many rows the index holds (as last committed)."""
        row = self._reader().execute("SELECT count(*) FROM docs").fetchone()
        return int(row[0])

    def rebuild(self) -> None:
        """Rebuild the full-text index from the content table (repairs any drift)."""
        with self.transaction():
            self._writer.execute("INSERT INTO docs_fts(docs_fts) VALUES ('rebuild')")

    def optimize(self) -> None:
        """Merge the index's b-trees into one: faster queries after a large ingest."""
        with self.transaction():
            self._writer.execute("INSERT INTO docs_fts(docs_fts) VALUES ('optimize')")

    def close(self) -> None:
        """Close every connection; later calls raise Unavailable."""
        with self._write_lock:
            if self._closed:
                return
            self._closed = True
            with self._readers_lock:
                readers, self._readers = self._readers, []
            for conn in readers:
                conn.close()
            self._writer.close()

    def _doc_frequency(self, conn: sqlite3.Connection, cache: dict[str, int], key: str) -> int:
        df = cache.get(key)
        if df is None:
            # One equality seek per term: `term IN (...)` makes fts5vocab scan every term.
            row = conn.execute("SELECT doc FROM docs_vocab WHERE term = ?", (key,)).fetchone()
            df = int(row[0]) if row else 0
            if len(cache) >= _DF_CACHE_MAX:
                cache.clear()
            cache[key] = df
        return df

    def plan_query(self, query: FtsQuery | str) -> FtsQuery:
        """The query as it will run: parsed, and with common terms bounded (see module doc)."""
        parsed = query if isinstance(query, FtsQuery) else FtsQuery.parse(query)
        if len(parsed.terms) < 2:
            return parsed
        conn = self._reader()
        cache = self._df_cache
        total = self._rows(cache)
        if total < self.common_min_rows:
            return parsed
        df = self._frequencies(conn, cache, parsed.terms)
        ceiling = self.common_fraction * total
        rare = tuple(term for term in parsed.terms if df[term] <= ceiling)
        if rare:
            return FtsQuery(rare)
        rarest = sorted(parsed.terms, key=lambda term: df[term])[:COMMON_TERMS_KEPT]
        return FtsQuery(tuple(term for term in parsed.terms if term in rarest))

    def _rows(self, cache: dict[str, int]) -> int:
        total = cache.get("")
        if total is None:
            total = cache[""] = self.count()
        return total

    def _frequencies(
        self, conn: sqlite3.Connection, cache: dict[str, int], terms: Sequence[str]
    ) -> dict[str, int]:
        tokens = self._stems.tokens(terms)
        return {term: self._doc_frequency(conn, cache, tokens[term]) for term in terms}

    def reference_score(self, query: FtsQuery | str) -> float:
        """The sum of the IDFs of the terms the query searches for (after `plan_query`).

        A row holding every searched term once, at average length, scores about this much
        BM25 (each term contributes idf·(k1+1)/(1+k1) = idf): the absolute scale that lets a
        caller tell a strong keyword match from the best of weak ones.
        """
        return self._reference(self.plan_query(query))

    def _reference(self, planned: FtsQuery) -> float:
        if not planned.terms:
            return 0.0
        conn = self._reader()
        cache = self._df_cache
        total = self._rows(cache)
        df = self._frequencies(conn, cache, planned.terms)
        return sum(idf(total, df[term]) for term in planned.terms)

    def search_scored(
        self,
        query: FtsQuery | str,
        *,
        limit: int,
        filter_ids: Collection[str] | None = None,
    ) -> KeywordHits:
        """`search` plus the query's `reference_score`, for callers that fuse BM25 with
        other evidence."""
        planned = self.plan_query(query)
        hits = self._search_planned(planned, limit=limit, filter_ids=filter_ids)
        return KeywordHits(tuple(hits), self._reference(planned) if hits else 0.0)

    def search(
        self,
        query: FtsQuery | str,
        *,
        limit: int,
        filter_ids: Collection[str] | None = None,
    ) -> list[FtsHit]:
        """Best BM25 matches first; with `filter_ids`, only rows among those ids."""
        return self._search_planned(self.plan_query(query), limit=limit, filter_ids=filter_ids)

    def _search_planned(
        self, planned: FtsQuery, *, limit: int, filter_ids: Collection[str] | None
    ) -> list[FtsHit]:
        if limit < 0:
            raise InvalidInput(f"limit must be 0 or more, got {limit}", field="limit")
        match = planned.to_match()
        if match is None or limit == 0 or (filter_ids is not None and not filter_ids):
            return []
        conn = self._reader()
        if filter_ids is None:
            rows = conn.execute(
                "SELECT d.id, docs_fts.rank FROM docs_fts JOIN docs d ON d.rowid = docs_fts.rowid "
                "WHERE docs_fts MATCH ? ORDER BY docs_fts.rank LIMIT ?",
                (match, limit),
            ).fetchall()
        elif len(filter_ids) <= PROBE_MAX_IDS:
            rows = self._probe(conn, match, filter_ids)
            rows.sort(key=lambda row: row[1])
            del rows[limit:]
        else:
            # json_each carries any number of ids in one bound parameter; ensure_ascii keeps
            # a lone surrogate in an id from failing the UTF-8 encoding of the parameter.
            rows = conn.execute(
                "SELECT d.id, docs_fts.rank FROM docs_fts JOIN docs d ON d.rowid = docs_fts.rowid "
                "WHERE docs_fts MATCH ? AND d.id IN (SELECT value FROM json_each(?)) "
                "ORDER BY docs_fts.rank LIMIT ?",
                (match, json.dumps(list(filter_ids)), limit),
            ).fetchall()
        # SQLite's bm25 is lower-is-better; callers get higher-is-better.
        return [FtsHit(id=row_id, score=-float(rank)) for row_id, rank in rows]

    @staticmethod
    def _probe(
        conn: sqlite3.Connection, match: str, filter_ids: Collection[str]
    ) -> list[tuple[str, float]]:
        rowids = conn.execute(
            "SELECT id, rowid FROM docs WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(filter_ids)),),
        ).fetchall()
        rows: list[tuple[str, float]] = []
        for row_id, rowid in rowids:
            hit = conn.execute(
                "SELECT rank FROM docs_fts WHERE docs_fts MATCH ? AND rowid = ?", (match, rowid)
            ).fetchone()
            if hit is not None:
                rows.append((row_id, float(hit[0])))
        return rows
