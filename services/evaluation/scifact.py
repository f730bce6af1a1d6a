"""BEIR SciFact (`shared/eval/scifact/`): corpus, queries and qrels of one split, and the corpus
as drawers with *uniform* metadata (one type, one room, one author, all active, salience 1.0,
one date), so every Engram signal is flat and the ranking is left to the retrievers."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engram.v1 import common_pb2

from services.retrieval.pool.records import to_timestamp

# Every SciFact drawer is written, and searched, at this instant: no decay, salience stays 1.0.
SCIFACT_NOW = datetime(2026, 1, 1, tzinfo=UTC)
UNIFORM_TYPE = "fact"
UNIFORM_WING = "scifact"
UNIFORM_ROOM = "scifact/abstracts"
UNIFORM_AUTHOR = "beir"
UNIFORM_SALIENCE = 1.0


@dataclass(frozen=True)
class BeirDocument:
    id: str
    title: str
    text: str

    @property
    def content(self) -> str:
        """What is embedded and keyword-indexed: the title, then the abstract."""
        return f"{self.title}\n\n{self.text}".strip() if self.title else self.text.strip()


@dataclass(frozen=True)
class BeirSet:
    name: str
    corpus: dict[str, BeirDocument]
    queries: dict[str, str]  # only the queries of the split that have judgements
    qrels: dict[str, dict[str, float]]  # query id -> {doc id: gain}

    def subset(self, max_queries: int, distractors: int) -> BeirSet:
        """The first `max_queries` judged queries, their relevant documents and the first
        `distractors` other documents (file order): a CI-sized set, not comparable to BEIR."""
        query_ids = sorted(self.qrels, key=_numeric)[:max_queries]
        wanted = {doc for q in query_ids for doc in self.qrels[q]}
        others = [d for d in self.corpus if d not in wanted][:distractors]
        keep = wanted | set(others)
        return BeirSet(
            name=f"{self.name} (subset)",
            corpus={d: doc for d, doc in self.corpus.items() if d in keep},
            queries={q: self.queries[q] for q in query_ids},
            qrels={q: self.qrels[q] for q in query_ids},
        )


def _numeric(value: str) -> tuple[int, str]:
    return (int(value), value) if value.isdigit() else (1 << 62, value)


def load_beir(directory: Path, split: str = "test") -> BeirSet:
    """Read a BEIR directory: corpus.jsonl, queries.jsonl and qrels/<split>.tsv."""
    corpus: dict[str, BeirDocument] = {}
    with (directory / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                doc_id = str(row["_id"])
                corpus[doc_id] = BeirDocument(doc_id, row.get("title", ""), row.get("text", ""))
    all_queries: dict[str, str] = {}
    with (directory / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                all_queries[str(row["_id"])] = row["text"]
    qrels: dict[str, dict[str, float]] = {}
    with (directory / "qrels" / f"{split}.tsv").open(encoding="utf-8") as table:
        for row in csv.DictReader(table, delimiter="\t"):
            gain = float(row["score"])
            if gain > 0 and row["corpus-id"] in corpus:
                qrels.setdefault(str(row["query-id"]), {})[str(row["corpus-id"])] = gain
    qrels = {q: docs for q, docs in qrels.items() if q in all_queries}
    return BeirSet(
        name=directory.name,
        corpus=corpus,
        queries={q: all_queries[q] for q in qrels},
        qrels=qrels,
    )


def uniform_drawers(beir: BeirSet) -> list[common_pb2.Drawer]:
    """The corpus as drawers whose metadata is identical except for id and content."""
    stamp = to_timestamp(SCIFACT_NOW)
    drawers = []
    for doc in beir.corpus.values():
        drawer = common_pb2.Drawer(
            id=doc.id,
            content=doc.content,
            memory_type=UNIFORM_TYPE,
            pin_status=common_pb2.PIN_STATUS_ACTIVE,
            wing=UNIFORM_WING,
            room=UNIFORM_ROOM,
            topic="",
            added_by=UNIFORM_AUTHOR,
            salience=UNIFORM_SALIENCE,
        )
        drawer.created_at.CopyFrom(stamp)
        drawer.last_activity_at.CopyFrom(stamp)
        drawers.append(drawer)
    return drawers
