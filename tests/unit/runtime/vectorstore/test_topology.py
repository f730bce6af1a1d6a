"""The cluster layout settings as the Qdrant client's arguments, and what they refuse."""

from __future__ import annotations

import pytest

from services.runtime.settings import StorageSettings
from services.runtime.vectorstore import QdrantTopology, open_vector_store


def test_settings_become_the_collection_layout_and_each_calls_consistency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in (
        ("SHARDS", "6"),
        ("REPLICATION_FACTOR", "3"),
        ("WRITE_CONSISTENCY_FACTOR", "2"),
        ("WRITE_ORDERING", "medium"),
        ("READ_CONSISTENCY", "majority"),
    ):
        monkeypatch.setenv(f"ENGRAM_QDRANT_{name}", value)
    topology = StorageSettings().qdrant_topology()
    assert topology.collection_params() == {
        "shard_number": 6,
        "replication_factor": 3,
        "write_consistency_factor": 2,
    }
    assert topology.write_args() == {"ordering": "medium"}
    assert topology.read_args() == {"consistency": "majority"}
    monkeypatch.setenv("ENGRAM_QDRANT_READ_CONSISTENCY", "2")
    assert StorageSettings().qdrant_topology().read_args() == {"consistency": 2}


def test_a_write_cannot_wait_for_more_replicas_than_there_are() -> None:
    with pytest.raises(ValueError, match="cannot wait for 3 replicas of 2"):
        QdrantTopology(replication_factor=2, write_consistency_factor=3)
    with pytest.raises(ValueError, match="at least 1"):
        QdrantTopology(shards=0)


def test_local_mode_has_no_cluster_and_takes_a_topology_quietly() -> None:
    topology = QdrantTopology(shards=3, replication_factor=2, write_consistency_factor=2)
    with open_vector_store("qdrant", path=None, url=":memory:", topology=topology) as store:
        store.ensure_collection("c", 4)
        assert store.count("c") == 0
