"""A tiny evaluation data directory in the shared/eval layout: a 10-drawer thesis set, a
10-abstract BEIR set and a two-session LoCoMo conversation, small enough for a test and shaped
so some answers are certain (every LoCoMo turn fits in ten results)."""

from __future__ import annotations

import json
from pathlib import Path

THESIS = {
    "name": "tiny_thesis",
    "deployment": "default",
    "drawers": [
        {
            "id": "dec-vectors",
            "content": "The Architect decided that Engram stores vectors in Qdrant, one shard "
            "per store.",
            "memory_type": "decision",
            "pin_status": "active",
            "wing": "projects",
            "room": "projects/engram",
            "topic": "storage",
            "added_by": "The_Architect",
            "signature": "one shard per store",
            "created_at": "2026-03-01",
            "salience": 0.8,
        },
        {
            "id": "old-vectors",
            "content": "The Architect decided that Engram stores vectors in Chroma collections.",
            "memory_type": "decision",
            "pin_status": "deprecated",
            "wing": "projects",
            "room": "projects/engram",
            "topic": "storage",
            "added_by": "The_Architect",
            "signature": None,
            "created_at": "2025-11-01",
            "salience": 0.6,
        },
        {
            "id": "obs-vectors",
            "content": "The engineer observed that Qdrant shards per store made vector backups "
            "easy.",
            "memory_type": "observation",
            "pin_status": "active",
            "wing": "projects",
            "room": "projects/engram",
            "topic": "storage",
            "added_by": "The_Engineer",
            "signature": None,
            "created_at": "2026-06-20",
            "salience": 0.7,
        },
        {
            "id": "diary-vectors",
            "content": "Diary: another evening spent thinking about vector storage in Qdrant.",
            "memory_type": "observation",
            "pin_status": "active",
            "wing": "diary",
            "room": "diary/engineer",
            "topic": "storage",
            "added_by": "The_Engineer",
            "signature": None,
            "created_at": "2026-06-25",
            "salience": 0.6,
        },
        {
            "id": "dir-tokens",
            "content": "The Architect directed that API tokens are stored only as salted hashes "
            "and compared in constant time.",
            "memory_type": "directive",
            "pin_status": "pinned",
            "wing": "projects",
            "room": "projects/gateway",
            "topic": "auth",
            "added_by": "The_Architect",
            "signature": "compared in constant time",
            "created_at": "2026-01-10",
            "salience": 0.9,
        },
        {
            "id": "impl-tokens",
            "content": "The engineer implemented token hashing with sha256 in the gateway.",
            "memory_type": "implementation",
            "pin_status": "active",
            "wing": "projects",
            "room": "projects/gateway",
            "topic": "auth",
            "added_by": "The_Engineer",
            "signature": None,
            "created_at": "2026-06-01",
            "salience": 0.7,
        },
        {
            "id": "bug-tokens",
            "content": "A bug made the gateway reject every token after a restart because the "
            "hash salt was regenerated.",
            "memory_type": "bug",
            "pin_status": "active",
            "wing": "projects",
            "room": "projects/gateway",
            "topic": "auth",
            "added_by": "The_Engineer",
            "signature": None,
            "created_at": "2026-06-15",
            "salience": 0.8,
        },
        {
            "id": "op-tokens",
            "content": "The engineer thinks bearer tokens are simpler than OAuth for agents.",
            "memory_type": "opinion",
            "pin_status": "active",
            "wing": "projects",
            "room": "projects/gateway",
            "topic": "auth",
            "added_by": "The_Engineer",
            "signature": None,
            "created_at": "2026-06-18",
            "salience": 0.6,
        },
        {
            "id": "arch-tiers",
            "content": "Engram runs as separate gRPC tiers: embedder, retrieval, corpus and "
            "authoring.",
            "memory_type": "architecture",
            "pin_status": "active",
            "wing": "projects",
            "room": "projects/engram",
            "topic": "tiers",
            "added_by": "The_Architect",
            "signature": None,
            "created_at": "2026-02-01",
            "salience": 0.8,
        },
        {
            "id": "retro-tiers",
            "content": "The retrospective found that splitting the tiers early made the "
            "embedder easy to move to a GPU.",
            "memory_type": "retrospective",
            "pin_status": "active",
            "wing": "projects",
            "room": "projects/engram",
            "topic": "tiers",
            "added_by": "The_Engineer",
            "signature": None,
            "created_at": "2026-05-01",
            "salience": 0.6,
        },
    ],
    "queries": [
        {
            "id": "q-vectors",
            "text": "Where does Engram store its vectors?",
            "intent": "planning",
            "relevant": ["dec-vectors"],
            "kind": "authority",
        },
        {
            "id": "q-tokens",
            "text": "How must API tokens be stored?",
            "intent": "design",
            "relevant": ["dir-tokens", "impl-tokens"],
            "kind": "pinned_vs_recent",
        },
        {
            "id": "q-bug",
            "text": "Why were tokens rejected after the gateway restarted?",
            "intent": "debugging",
            "relevant": ["bug-tokens"],
            "kind": "situational",
        },
        {
            "id": "q-tiers",
            "text": "What tiers does Engram run as, and how did that work out?",
            "intent": "history",
            "relevant": ["arch-tiers", "retro-tiers"],
            "kind": "narrative",
        },
        {
            "id": "q-silence",
            "text": "What is a good recipe for sourdough bread with rye flour?",
            "intent": "general",
            "relevant": [],
            "kind": "silence",
        },
    ],
}

CORPUS = [
    ("d1", "Aspirin and platelets", "Low-dose aspirin reduces platelet aggregation in adults."),
    ("d2", "Vitamin D and bones", "Vitamin D supplements increase bone mineral density."),
    ("d3", "Sleep and memory", "Sleep deprivation impairs hippocampal memory consolidation."),
    ("d4", "Statins", "Statins lower LDL cholesterol and cardiovascular events."),
    ("d5", "Malaria vaccine", "The RTS,S vaccine reduces clinical malaria in children."),
    ("d6", "Gut microbiome", "Antibiotics disrupt the diversity of the gut microbiome."),
    ("d7", "Exercise and mood", "Aerobic exercise reduces symptoms of depression."),
    ("d8", "Smoking and lungs", "Tobacco smoking causes most cases of lung cancer."),
    ("d9", "Insulin", "Insulin resistance precedes type 2 diabetes by years."),
    ("d10", "Telomeres", "Telomere shortening is associated with cellular ageing."),
]
QUERIES = [
    ("q1", "Aspirin reduces platelet aggregation.", "d1"),
    ("q2", "Smoking tobacco causes lung cancer.", "d8"),
    ("q3", "The malaria vaccine RTS,S protects children.", "d5"),
]

LOCOMO = [
    {
        "sample_id": "conv-tiny",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben! How was your weekend?"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "I adopted a beagle named Pixel!"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "That is lovely, congratulations."},
                {
                    "speaker": "Ben",
                    "dia_id": "D1:4",
                    "text": "Look at him.",
                    "blip_caption": "a photo of a beagle on a sofa",
                },
            ],
            "session_2_date_time": "7:09 pm on 1 June, 2023",
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "I started pottery classes."},
                {"speaker": "Ben", "dia_id": "D2:2", "text": "Nice, what did you make?"},
                {"speaker": "Ana", "dia_id": "D2:3", "text": "A blue bowl for my mother."},
                {"speaker": "Ben", "dia_id": "D2:4", "text": "She will love it."},
            ],
        },
        "qa": [
            {"question": "What is the name of Ben's dog?", "evidence": ["D1:2"], "category": 4},
            {"question": "What did Ana make in pottery?", "evidence": ["D2:3"], "category": 2},
            {
                "question": "What pets and hobbies came up?",
                "evidence": ["D1:2; D2:1"],
                "category": 1,
            },
            {"question": "What did Ben bake?", "evidence": ["D1:3"], "category": 5},
        ],
    }
]


def _queue_drawer(id: str, content: str, created: str, salience: float) -> dict[str, object]:
    return {
        "id": id,
        "content": content,
        "memory_type": "decision",
        "pin_status": "active",
        "wing": "projects",
        "room": "projects/jobs",
        "topic": "queue",
        "added_by": "The_Architect",
        "signature": None,
        "created_at": created,
        "salience": salience,
    }


# A decision replaced by a newer one through a link: the older one is worded like the question.
SUPERSESSION = {
    "name": "tiny_supersession",
    "deployment": "default",
    "drawers": [
        _queue_drawer(
            "queue-old",
            "The Architect decided that background jobs are queued in RabbitMQ with Celery.",
            "2025-09-01",
            0.9,
        ),
        _queue_drawer(
            "queue-new",
            "Background work moved to Redis through arq, replacing the broker used before.",
            "2026-05-01",
            0.5,
        ),
    ],
    "links": [{"from": "queue-new", "to": "queue-old", "type": "supersedes"}],
    "queries": [
        {
            "id": "q-now",
            "text": "Are background jobs queued in RabbitMQ with Celery?",
            "intent": "planning",
            "relevant": ["queue-new"],
            "kind": "current",
        },
        {
            "id": "q-then",
            "text": "What did background jobs use before Redis?",
            "intent": "history",
            "relevant": ["queue-new", "queue-old"],
            "kind": "history",
        },
    ],
}


def write_tiny_data(root: Path) -> Path:
    """The three datasets under `root` in the shared/eval layout; returns `root`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "tiny_thesis.json").write_text(json.dumps(THESIS))
    (root / "tiny_supersession.json").write_text(json.dumps(SUPERSESSION))
    scifact = root / "scifact"
    (scifact / "qrels").mkdir(parents=True, exist_ok=True)
    (scifact / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS)
    )
    (scifact / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": text}) + "\n" for q, text, _ in QUERIES)
    )
    (scifact / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, _, d in QUERIES)
    )
    (root / "locomo").mkdir(exist_ok=True)
    (root / "locomo" / "locomo10.json").write_text(json.dumps(LOCOMO))
    return root
