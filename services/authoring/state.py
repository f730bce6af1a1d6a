"""The authoring tier's own per-store state: one SQLite file, `<data_dir>/<store>/authoring.sqlite`.

It holds what authoring owns and nothing of the pool (drawers live in the retrieval tier):

- the **provenance log** — one row per change to a drawer: who, when, what, why;
- the **prompt versions** of the prompt lab, and which one is active;
- the store's **provider config** (invoker, model, reasoning effort, base URL — never a key);
- the store's **write policy** (which token tiers may write, pin, open wings);
- the **consolidations** applied: what each merged, the links it made and the pin status each
  source had, which is what undoing it restores;
- the **merge drafts** a model wrote for consolidation proposals, so that applying a proposal
  writes the text the dry run showed (a model answers differently when asked twice).

WAL mode; every write is one short transaction under the connection's lock.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from services.authoring.core import WritePolicy, default_prompt
from services.authoring.core.consolidation import MergedText
from services.runtime.errors import Conflict, InvalidInput, NotFound
from services.runtime.snapshot import StoreParts

VERSION_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
MAX_PROMPT_CHARS: Final = 65_536
MAX_NOTE_CHARS: Final = 1_000
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS provenance (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    drawer_id TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    reason TEXT NOT NULL,
    changes TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS provenance_drawer ON provenance (drawer_id, seq);
CREATE TABLE IF NOT EXISTS prompts (
    version TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    note TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS merge_drafts (
    proposal_id TEXT NOT NULL,
    invoker TEXT NOT NULL,
    merged_by TEXT NOT NULL,
    content TEXT NOT NULL,
    signature TEXT,
    notes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (proposal_id, invoker)
);
CREATE TABLE IF NOT EXISTS consolidations (
    id TEXT PRIMARY KEY,
    proposal_id TEXT NOT NULL,
    merged_id TEXT NOT NULL,
    sources TEXT NOT NULL,
    link_ids TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    applied_by TEXT NOT NULL,
    reason TEXT NOT NULL,
    undone_at TEXT,
    undone_by TEXT NOT NULL DEFAULT '',
    job_id TEXT NOT NULL DEFAULT ''
);
"""


@dataclass(frozen=True, slots=True)
class Provenance:
    drawer_id: str
    at: datetime
    actor: str
    action: str
    reason: str
    changes: dict[str, str]


@dataclass(frozen=True, slots=True)
class Prompt:
    version: str
    text: str
    active: bool
    created_at: datetime
    created_by: str
    note: str


@dataclass(frozen=True, slots=True)
class Provider:
    """A store's provider choice. `invoker` "" means the offline extractive default."""

    invoker: str = "extractive"
    model: str = ""
    reasoning_effort: str = ""
    base_url: str = ""


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class ConsolidationRecord:
    id: str
    proposal_id: str
    merged_id: str
    sources: dict[str, str]  # source drawer id → its pin status before (PIN_STATUS_* name)
    link_ids: list[str]
    applied_at: datetime
    applied_by: str
    reason: str
    undone_at: datetime | None = None
    undone_by: str = ""
    job_id: str = ""  # the job that applied it (a replay of that job finds it here)


class AuthoringState:
    """One store's authoring state. Thread-safe; cheap calls, run them in a worker thread."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self._lock = threading.Lock()
        self._db = sqlite3.connect(root / "authoring.sqlite", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    @classmethod
    def open(cls, root: Path, dimension: int) -> AuthoringState:
        """The `OpenStores` opener (authoring keeps no vectors: `dimension` is unused)."""
        return cls(root)

    def snapshot_parts(self) -> StoreParts:
        """What a backup holds (services.runtime.snapshot): the one SQLite file, copied with
        SQLite's backup API (a consistent state without a lock of ours)."""
        return StoreParts(folder=self.root, collections={}, derived=frozenset())

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def drop(self, *, keep_shared: bool = False) -> None:
        """Delete the store's authoring state (all of it is this replica's own)."""
        self.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # ------------------------------------------------------------------ provenance

    def record(
        self,
        drawer_id: str,
        *,
        actor: str,
        action: str,
        reason: str = "",
        changes: Mapping[str, str] | None = None,
        at: datetime | None = None,
    ) -> Provenance:
        """Append one entry to a drawer's provenance log."""
        entry = Provenance(
            drawer_id, at or _now(), actor or "unknown", action, reason, dict(changes or {})
        )
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO provenance (drawer_id, at, actor, action, reason, changes) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    drawer_id,
                    entry.at.isoformat(),
                    entry.actor,
                    action,
                    reason,
                    json.dumps(entry.changes, sort_keys=True),
                ),
            )
        return entry

    def provenance(self, drawer_id: str) -> list[Provenance]:
        """A drawer's log, oldest first (kept after the drawer is deleted)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT drawer_id, at, actor, action, reason, changes FROM provenance "
                "WHERE drawer_id = ? ORDER BY seq",
                (drawer_id,),
            ).fetchall()
        return [
            Provenance(r[0], datetime.fromisoformat(r[1]), r[2], r[3], r[4], json.loads(r[5]))
            for r in rows
        ]

    # ------------------------------------------------------------------ consolidations

    def record_consolidation(self, record: ConsolidationRecord) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO consolidations (id, proposal_id, merged_id, sources, link_ids, "
                "applied_at, applied_by, reason, job_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.proposal_id,
                    record.merged_id,
                    json.dumps(record.sources, sort_keys=True),
                    json.dumps(record.link_ids),
                    record.applied_at.isoformat(),
                    record.applied_by,
                    record.reason,
                    record.job_id,
                ),
            )

    def consolidations(self, consolidation_id: str = "") -> list[ConsolidationRecord]:
        """Every consolidation, newest first (or the one with `consolidation_id`)."""
        query = (
            "SELECT id, proposal_id, merged_id, sources, link_ids, applied_at, applied_by, "
            "reason, undone_at, undone_by, job_id FROM consolidations"
        )
        args: tuple[str, ...] = ()
        if consolidation_id:
            query += " WHERE id = ?"
            args = (consolidation_id,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY applied_at DESC, id", args).fetchall()
        return [
            ConsolidationRecord(
                id=r[0],
                proposal_id=r[1],
                merged_id=r[2],
                sources=json.loads(r[3]),
                link_ids=json.loads(r[4]),
                applied_at=datetime.fromisoformat(r[5]),
                applied_by=r[6],
                reason=r[7],
                undone_at=datetime.fromisoformat(r[8]) if r[8] else None,
                undone_by=r[9],
                job_id=r[10],
            )
            for r in rows
        ]

    def consolidation(self, consolidation_id: str) -> ConsolidationRecord:
        found = self.consolidations(consolidation_id)
        if not found:
            raise NotFound(f"no consolidation {consolidation_id!r} in this store", field="id")
        return found[0]

    def applied_consolidation(self, proposal_id: str, job_id: str) -> ConsolidationRecord | None:
        """What applying `proposal_id` again would repeat: this job's own application of it
        (a replayed job, even when undone since), or a live one by any job."""
        for record in self.consolidations():
            if record.proposal_id != proposal_id:
                continue
            if (job_id and record.job_id == job_id) or record.undone_at is None:
                return record
        return None

    def merge_draft(self, proposal_id: str, invoker: str) -> MergedText | None:
        """The merge kept when `invoker` was first asked for `proposal_id`, if it was."""
        with self._lock:
            row = self._db.execute(
                "SELECT content, signature, merged_by, notes FROM merge_drafts "
                "WHERE proposal_id = ? AND invoker = ?",
                (proposal_id, invoker),
            ).fetchone()
        if row is None:
            return None
        return MergedText(row[0], row[1], row[2], tuple(json.loads(row[3])))

    def keep_merge_draft(self, proposal_id: str, invoker: str, merged: MergedText) -> None:
        """Keep what asking `invoker` for `proposal_id` gave (its text, or the deterministic
        merge with the note why); the first answer stays."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO merge_drafts (proposal_id, invoker, merged_by, content, "
                "signature, notes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    proposal_id,
                    invoker,
                    merged.merged_by,
                    merged.content,
                    merged.signature,
                    json.dumps(list(merged.notes)),
                    _now().isoformat(),
                ),
            )

    def mark_undone(self, consolidation_id: str, *, by: str) -> ConsolidationRecord:
        with self._lock, self._db:
            cursor = self._db.execute(
                "UPDATE consolidations SET undone_at = ?, undone_by = ? "
                "WHERE id = ? AND undone_at IS NULL",
                (_now().isoformat(), by, consolidation_id),
            )
        if cursor.rowcount == 0:
            raise Conflict(f"consolidation {consolidation_id!r} was already undone", field="id")
        return self.consolidation(consolidation_id)

    # ------------------------------------------------------------------ settings rows

    def _get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _put(self, key: str, value: str) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO settings (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # ------------------------------------------------------------------ prompt lab

    def _seed(self, mode: str) -> None:
        """The first read of a store's prompts installs the mode's built-in prompt as active."""
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM prompts").fetchone()
        if count:
            return
        template = default_prompt(mode)
        self._insert(template.version, template.text, created_by="engram", note="built-in")
        self._put("active_prompt", template.version)

    def _insert(self, version: str, text: str, *, created_by: str, note: str) -> None:
        with self._lock, self._db:
            (seq,) = self._db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM prompts").fetchone()
            try:
                self._db.execute(
                    "INSERT INTO prompts (version, seq, text, created_at, created_by, note) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (version, seq, text, _now().isoformat(), created_by, note),
                )
            except sqlite3.IntegrityError:
                raise Conflict(
                    f"prompt version {version!r} already exists: versions are immutable, "
                    "create a new one",
                    field="version",
                ) from None

    def create_prompt(
        self, mode: str, *, version: str, text: str, created_by: str, note: str
    ) -> Prompt:
        """A new immutable version ("" = the next `vN`); it is not active until promoted."""
        self._seed(mode)
        if not text.strip():
            raise InvalidInput("prompt text is empty", field="text")
        if len(text) > MAX_PROMPT_CHARS:
            raise InvalidInput(
                f"prompt text is {len(text)} characters; the limit is {MAX_PROMPT_CHARS}",
                field="text",
            )
        if len(note) > MAX_NOTE_CHARS:
            raise InvalidInput(f"note is longer than {MAX_NOTE_CHARS} characters", field="note")
        if not version:
            with self._lock:
                (seq,) = self._db.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM prompts"
                ).fetchone()
            version = f"v{seq}"
        if not VERSION_NAME.match(version):
            raise InvalidInput(
                f"prompt version {version!r} must be 1-64 of letters, digits, '.', '_', '-'",
                field="version",
            )
        self._insert(version, text, created_by=created_by or "unknown", note=note)
        return self.prompt(mode, version)

    def prompts(self, mode: str) -> list[Prompt]:
        """Every version, oldest first."""
        self._seed(mode)
        active = self._get("active_prompt")
        with self._lock:
            rows = self._db.execute(
                "SELECT version, text, created_at, created_by, note FROM prompts ORDER BY seq"
            ).fetchall()
        return [
            Prompt(r[0], r[1], r[0] == active, datetime.fromisoformat(r[2]), r[3], r[4])
            for r in rows
        ]

    def prompt(self, mode: str, version: str = "") -> Prompt:
        """One version ("" = the active one)."""
        self._seed(mode)
        wanted = version or self._get("active_prompt") or ""
        for prompt in self.prompts(mode):
            if prompt.version == wanted:
                return prompt
        raise NotFound(f"no prompt version {wanted!r} in this store", field="version")

    def promote(self, mode: str, version: str) -> Prompt:
        """Make `version` the active prompt of compose jobs from now on."""
        self.prompt(mode, version)  # NotFound first
        if not version:
            raise InvalidInput("name the version to promote", field="version")
        self._put("active_prompt", version)
        return self.prompt(mode, version)

    # ------------------------------------------------------------------ provider, policy

    def provider(self) -> Provider:
        raw = self._get("provider")
        return Provider() if raw is None else Provider(**json.loads(raw))

    def set_provider(self, provider: Provider) -> Provider:
        self._put(
            "provider",
            json.dumps(
                {
                    "invoker": provider.invoker,
                    "model": provider.model,
                    "reasoning_effort": provider.reasoning_effort,
                    "base_url": provider.base_url,
                }
            ),
        )
        return provider

    def policy(self) -> WritePolicy:
        raw = self._get("write_policy")
        return WritePolicy() if raw is None else WritePolicy.from_config(json.loads(raw))

    def set_policy(self, policy: WritePolicy) -> WritePolicy:
        self._put("write_policy", json.dumps(policy.to_config()))
        return policy
