"""Files, the durable first tier: streamed upload, content addressing, limits, hostile names,
the tree, moves and deletes."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from engram.v1 import corpus_pb2

from tests.services.corpus.conftest import STORE, RunningCorpus

MARKDOWN = b"# Decisions\n\n## Storage\n\nThe Architect decided to keep one shard per store.\n"


def _blobs(corpus: RunningCorpus) -> list[str]:
    root = corpus.deps.settings.data_dir / STORE.name / "_corpus"
    return sorted(p.name for p in root.rglob("*") if p.is_file() and ".incoming" not in p.parts)


async def test_upload_stores_the_body_content_addressed(corpus: RunningCorpus) -> None:
    uploaded = await corpus.upload("notes.md", MARKDOWN, folder="team/notes", piece=7)
    assert uploaded.state == corpus_pb2.FILE_STATE_UPLOADED
    assert uploaded.size_bytes == len(MARKDOWN) and uploaded.detected_type == "markdown"
    assert uploaded.size_tier == corpus_pb2.SIZE_TIER_FULL
    assert _blobs(corpus) == [uploaded.sha256]


async def test_same_bytes_twice_are_stored_once(corpus: RunningCorpus) -> None:
    first = await corpus.upload("a.md", MARKDOWN)
    again = await corpus.upload("a.md", MARKDOWN)
    other_name = await corpus.upload("b.md", MARKDOWN)
    assert again.id == first.id, "the same bytes under the same name are the same file"
    assert other_name.id != first.id and other_name.sha256 == first.sha256
    assert _blobs(corpus) == [first.sha256], "one body on disk for identical bytes"


async def test_a_different_file_under_a_taken_name_is_a_conflict(corpus: RunningCorpus) -> None:
    await corpus.upload("a.md", MARKDOWN)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.upload("a.md", MARKDOWN + b"more")
    assert caught.value.code() is grpc.StatusCode.ALREADY_EXISTS


async def test_declared_oversize_is_refused_before_any_byte(corpus: RunningCorpus) -> None:
    async def chunks() -> AsyncIterator[corpus_pb2.UploadFileChunk]:
        yield corpus_pb2.UploadFileChunk(
            header=corpus_pb2.UploadFileHeader(
                store=STORE, name="big.txt", declared_size=61_000_000
            )
        )

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.stub.UploadFile(chunks())
    assert caught.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "61.0 MB" in (caught.value.details() or "") and "50 MB" in (caught.value.details() or "")
    assert _blobs(corpus) == []


async def test_streamed_oversize_is_refused_and_leaves_nothing(corpus: RunningCorpus) -> None:
    piece = b"x" * (1024 * 1024)

    async def chunks() -> AsyncIterator[corpus_pb2.UploadFileChunk]:
        yield corpus_pb2.UploadFileChunk(
            header=corpus_pb2.UploadFileHeader(store=STORE, name="big.txt")
        )
        for _ in range(51):
            yield corpus_pb2.UploadFileChunk(data=piece)

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.stub.UploadFile(chunks())
    assert caught.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert _blobs(corpus) == []
    listing = await corpus.stub.ListFiles(corpus_pb2.ListFilesRequest(store=STORE, recursive=True))
    assert list(listing.files) == []


@pytest.mark.parametrize(
    ("name", "folder"),
    [
        ("../etc/passwd", ""),
        ("/abs.md", ""),
        ("ok.md", "a/../b"),
        ("ok.md", "/root"),
        ("nul\x00.md", ""),
        ("..", ""),
        ("", ""),
        ("x" * 300 + ".md", ""),
        ("a\\b.md", ""),
    ],
)
async def test_hostile_names_are_refused(corpus: RunningCorpus, name: str, folder: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.upload(name, MARKDOWN, folder=folder)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert _blobs(corpus) == []


async def test_binary_files_are_refused_with_their_type(corpus: RunningCorpus) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 100
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.upload("image.md", png)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "png" in (caught.value.details() or "").lower()
    assert _blobs(corpus) == []


async def test_tree_move_rename_and_delete(corpus: RunningCorpus) -> None:
    a = await corpus.upload("a.md", MARKDOWN, folder="team/notes")
    await corpus.upload("b.txt", b"plain text\n", folder="team")
    tree = await corpus.stub.GetTree(corpus_pb2.GetTreeRequest(store=STORE))
    team = tree.root.folders[0]
    assert team.path == "team" and [f.name for f in team.files] == ["b.txt"]
    assert team.folders[0].path == "team/notes" and team.folders[0].files[0].id == a.id

    moved = await corpus.stub.MoveFile(
        corpus_pb2.MoveFileRequest(store=STORE, file_id=a.id, folder="archive", new_name="old.md")
    )
    assert (moved.folder, moved.name) == ("archive", "old.md")
    await corpus.stub.RenameFolder(
        corpus_pb2.RenameFolderRequest(store=STORE, path="team", new_path="crew")
    )
    files = await corpus.stub.ListFiles(corpus_pb2.ListFilesRequest(store=STORE, folder="crew"))
    assert [f.name for f in files.files] == ["b.txt"]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.stub.DeleteFolder(corpus_pb2.DeleteFolderRequest(store=STORE, path="crew"))
    assert caught.value.code() is grpc.StatusCode.ALREADY_EXISTS, (
        "a non-empty folder needs recursive"
    )
    gone = await corpus.stub.DeleteFolder(
        corpus_pb2.DeleteFolderRequest(store=STORE, path="crew", recursive=True)
    )
    assert gone.files_deleted == 1
    await corpus.stub.DeleteFile(corpus_pb2.DeleteFileRequest(store=STORE, file_id=a.id))
    assert _blobs(corpus) == [], "a body no file references is removed"
