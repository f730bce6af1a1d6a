"""Edge-only behaviour: what lives on disk, and use from several threads."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from services.runtime.errors import InvalidInput, Unavailable
from services.runtime.vectorstore import VectorPoint, open_vector_store
from tests.unit.runtime.vectorstore.conftest import COLLECTION, DIM, Corpus

REPO_ROOT = Path(__file__).resolve().parents[4]


def test_points_survive_closing_and_reopening_the_store(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "vectors"
    with open_vector_store("edge", path=path) as store:
        store.ensure_collection(COLLECTION, DIM)
        store.upsert(COLLECTION, corpus.points)
        store.optimize(COLLECTION)
        store.set_payload(COLLECTION, [corpus.ids[0]], {"pin_status": "pinned"})
        store.delete(COLLECTION, [corpus.ids[1]])
        before = store.search(COLLECTION, corpus.matrix[2], limit=5, exact=True)

    with open_vector_store("edge", path=path) as reopened:
        assert reopened.collection_names() == [COLLECTION], (
            f"expected the collection back, got {reopened.collection_names()}"
        )
        count = reopened.count(COLLECTION)
        assert count == len(corpus.points) - 1, f"expected {len(corpus.points) - 1}, got {count}"
        (first,) = reopened.retrieve(COLLECTION, [corpus.ids[0]])
        assert first.payload["pin_status"] == "pinned", f"payload change lost: {first.payload}"
        after = reopened.search(COLLECTION, corpus.matrix[2], limit=5, exact=True)
        assert after == before, f"search changed across reopen:\n{before}\n{after}"
        with pytest.raises(InvalidInput, match="already holds vectors of dimension"):
            reopened.ensure_collection(COLLECTION, DIM + 1)


def test_a_dropped_collection_stays_dropped_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    with open_vector_store("edge", path=path) as store:
        store.ensure_collection("raw", DIM)
        store.drop_collection("raw")
    with open_vector_store("edge", path=path) as reopened:
        assert reopened.collection_names() == [], f"got {reopened.collection_names()}"
    leftovers = [entry.name for entry in path.iterdir() if entry.name != ".lock"]
    assert leftovers == [], f"expected an empty store folder, found {leftovers}"


def test_a_half_created_collection_is_created_again(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    # What a crash between creating the shard and writing collection.json leaves behind.
    (path / "raw" / "shard" / "segments").mkdir(parents=True)
    with open_vector_store("edge", path=path) as store:
        assert store.collection_names() == [], "an unfinished collection must not be listed"
        store.ensure_collection("raw", DIM)
        store.upsert("raw", [VectorPoint("r_1", np.ones(DIM), {})])
        assert store.count("raw") == 1, "expected the re-created collection to work"


def test_concurrent_writers_and_readers_lose_nothing(tmp_path: Path) -> None:
    vectors = np.random.default_rng(11).normal(size=(4, 10, 5, DIM))
    with open_vector_store("edge", path=tmp_path / "vectors") as store:
        store.ensure_collection(COLLECTION, DIM)

        def write_and_read(worker: int) -> None:
            for batch in range(10):
                store.upsert(
                    COLLECTION,
                    [
                        VectorPoint(f"w{worker}_{batch}_{i}", vector, {"worker": worker})
                        for i, vector in enumerate(vectors[worker, batch])
                    ],
                )
                store.search(COLLECTION, vectors[worker, batch, 0], limit=3)

        with ThreadPoolExecutor(max_workers=4) as pool:
            # result() re-raises a worker's exception here, in the test thread.
            for future in [pool.submit(write_and_read, worker) for worker in range(4)]:
                future.result(timeout=30)
        count = store.count(COLLECTION)
        assert count == 4 * 10 * 5, f"expected 200 points, got {count}"


def test_points_survive_a_process_that_dies_without_closing(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    writer = textwrap.dedent(
        f"""
        import os
        from pathlib import Path
        from services.runtime.vectorstore import VectorPoint, open_vector_store
        store = open_vector_store("edge", path=Path({str(path)!r}))
        store.ensure_collection("raw", 4)
        store.upsert("raw", [VectorPoint(f"r{{i}}", [1.0, i, 0.0, 1.0], {{}}) for i in range(50)])
        store.set_payload("raw", ["r7"], {{"kept": True}})
        os._exit(0)  # no close(), no flush(): as if the process were killed
        """
    )
    subprocess.run([sys.executable, "-c", writer], check=True, timeout=60, cwd=REPO_ROOT)
    with open_vector_store("edge", path=path) as store:
        count = store.count("raw")
        assert count == 50, f"expected the 50 points replayed from the WAL, got {count}"
        (point,) = store.retrieve("raw", ["r7"])
        assert point.payload == {"kept": True}, f"expected the payload change, got {point.payload}"


def test_a_second_store_on_the_same_path_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "vectors"
    first = open_vector_store("edge", path=path)
    with pytest.raises(Unavailable, match="already open"):
        open_vector_store("edge", path=path)
    first.close()
    open_vector_store("edge", path=path).close()


def test_the_edge_backend_needs_a_path() -> None:
    with pytest.raises(InvalidInput, match="needs a path"):
        open_vector_store("edge", path=None)
