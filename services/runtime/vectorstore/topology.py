"""How collections are laid out on a Qdrant cluster (`ENGRAM_VECTOR_BACKEND=qdrant` with a
server URL): shards, replicas, and the consistency writes and reads ask for. Qdrant shards
and replicates; Engram only says how much. Pure: the settings as the client's arguments.

Edge (one process, one disk) and qdrant-client's local mode have no cluster and ignore it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

WriteOrdering = Literal["weak", "medium", "strong"]
ReadConsistency = Literal["all", "majority", "quorum"]


@dataclass(frozen=True)
class QdrantTopology:
    shards: int = 1  # shards of each new collection
    replication_factor: int = 1  # copies of each shard
    write_consistency_factor: int = 1  # replicas that must acknowledge a write
    write_ordering: WriteOrdering = "weak"  # Qdrant's ordering of writes across replicas
    read_consistency: ReadConsistency | int = 1  # replicas a read asks (1: the first to answer)

    def __post_init__(self) -> None:
        if min(self.shards, self.replication_factor, self.write_consistency_factor) < 1:
            raise ValueError("shards, replication factor and write consistency are at least 1")
        if self.write_consistency_factor > self.replication_factor:
            raise ValueError(
                f"a write cannot wait for {self.write_consistency_factor} replicas of "
                f"{self.replication_factor}"
            )

    def collection_params(self) -> dict[str, Any]:
        """create_collection's layout arguments."""
        return {
            "shard_number": self.shards,
            "replication_factor": self.replication_factor,
            "write_consistency_factor": self.write_consistency_factor,
        }

    def write_args(self) -> dict[str, Any]:
        """The ordering argument of every write (upsert, delete, payload)."""
        return {"ordering": self.write_ordering}

    def read_args(self) -> dict[str, Any]:
        """The consistency argument of every read (query, retrieve, scroll, count)."""
        return {"consistency": self.read_consistency}
