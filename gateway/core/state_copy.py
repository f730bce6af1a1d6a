"""Copying a gateway's state between backends: what `engram gateway-state copy` does.

A deployment that grows from one gateway (state in files under its data directory) to
several behind a Service moves its state to Redis (`ENGRAM_GATEWAY_STATE_BACKEND=redis`,
decision 0025); one that shrinks, or leaves Redis, moves it back. Without a copy the new
backend starts empty: every token stops working and every store disappears from the
registry (its data stays on the tiers, unreachable).

What is copied, each entry as it is:

- tokens: each grant with its current secret's hash (so every token keeps working with the
  same secret) and when it was last used. A secret rotated out and still inside its grace is
  not copied (no backend hands those out); the report names those tokens, whose new secrets
  work.
- the store registry: every entry, placement and settings included.
- the audit log: every event, oldest first, at its own time.

Rules that keep a copy from doing harm: the target must hold no tokens, stores or audit
events (a copy never merges: refused, nothing written); the source must be idle, which for
files means holding their gateway lock (a running gateway is named and refused) and for
Redis is the operator's to ensure (the command says so).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gateway.core.audit import AuditBackend
from gateway.core.registry import RegistryBackend
from gateway.core.state import GatewayState
from gateway.core.tokens import TokenTable
from services.runtime.errors import Conflict


@dataclass
class StateCopy:
    """What a copy did."""

    tokens: int = 0
    stores: int = 0
    audit_events: int = 0
    rotated_in_grace: list[str] = field(default_factory=list)  # token ids
    unreadable_audit_lines: int = 0

    def summary(self) -> str:
        lines = [
            f"copied {self.tokens} token(s), {self.stores} store(s) and "
            f"{self.audit_events} audit event(s)"
        ]
        if self.rotated_in_grace:
            lines.append(
                "not copied: the rotated-out secrets still in their grace period of "
                + ", ".join(self.rotated_in_grace)
                + " (their current secrets work)"
            )
        if self.unreadable_audit_lines:
            lines.append(f"skipped {self.unreadable_audit_lines} unreadable audit line(s)")
        return "\n".join(lines)


def _refuse_unless_empty(
    tokens: TokenTable, registry: RegistryBackend, audit: AuditBackend, name: str
) -> None:
    held = []
    if count := len(tokens.list()):
        held.append(f"{count} token(s)")
    if stores := registry.load()[1]:
        held.append(f"{len(stores)} store(s)")
    if audit.first_day() is not None:
        held.append("audit events")
    if held:
        raise Conflict(
            f"the {name} state already holds {', '.join(held)}: a copy goes into an empty "
            "state only (nothing was written)"
        )


def copy_state(source: GatewayState, target: GatewayState, *, target_name: str) -> StateCopy:
    """Copy tokens, the store registry and the audit log from `source` into the empty
    `target`. The caller has made `source` idle (see the module docstring)."""
    source_tokens, target_tokens = source.token_table(), target.token_table()
    try:
        registry, audit = target.registry_backend(), target.audit_backend()
        _refuse_unless_empty(target_tokens, registry, audit, target_name)
        copied = StateCopy()
        for record in source_tokens.list():
            digest = source_tokens.hash_of(record.id)
            if digest is None:  # revoked while we read
                continue
            target_tokens.insert(record, digest)
            if record.last_used_at is not None:
                target_tokens.touch(record.id, record.last_used_at)
            if record.previous_valid_until is not None:
                copied.rotated_in_grace.append(record.id)
            copied.tokens += 1
        _, stores = source.registry_backend().load()
        for name in sorted(stores):
            if registry.add(stores[name]):
                copied.stores += 1
        _copy_audit(source.audit_backend(), audit, copied)
        return copied
    finally:
        source_tokens.close()
        target_tokens.close()


def _copy_audit(events: AuditBackend, into: AuditBackend, copied: StateCopy) -> None:
    day, last = events.first_day(), events.last_day()
    while day is not None and last is not None and day <= last:
        for _, line in reversed(list(events.lines(day, day))):
            try:
                at = datetime.fromisoformat(str(json.loads(line)["at"]))
            except (ValueError, KeyError, TypeError):
                copied.unreadable_audit_lines += 1
                continue
            into.restore(at if at.tzinfo else at.replace(tzinfo=UTC), line)
            copied.audit_events += 1
        day += timedelta(days=1)
