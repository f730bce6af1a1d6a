"""The corpus: streamed multipart uploads, files and folders, ingest jobs, source chunks and
deep queries into one document."""

from __future__ import annotations

from typing import Annotated

from engram.v1 import common_pb2, corpus_pb2
from fastapi import APIRouter, Path, Request, Response

from gateway.deps import CallerDep, StorePath
from gateway.routes._proto import ProtoOp, reply
from gateway.uploads import FILE_FIELD, TEXT_FIELDS, MultipartUpload
from services.runtime.errors import TooLarge

router = APIRouter(prefix="/v1/stores/{store}", tags=["corpus"])

FilePath = Annotated[str, Path(description="the file's id")]

# Multipart framing around the file's bytes is small; a body this much over the limit is
# refused from its Content-Length before a byte is read.
_FRAMING_ALLOWANCE = 64 * 1024

UPLOAD = ProtoOp(
    corpus_pb2.UploadFileHeader, corpus_pb2.CorpusFile, body=False, query=("folder", "name")
)
GET_FILE = ProtoOp(
    corpus_pb2.GetFileRequest, corpus_pb2.CorpusFile, body=False, path_fields=("file_id",)
)
LIST_FILES = ProtoOp(
    corpus_pb2.ListFilesRequest,
    corpus_pb2.ListFilesResponse,
    body=False,
    query=("folder", "recursive", "states", "page.page_size", "page.page_token"),
)
MOVE_FILE = ProtoOp(corpus_pb2.MoveFileRequest, corpus_pb2.CorpusFile, path_fields=("file_id",))
DELETE_FILE = ProtoOp(
    corpus_pb2.DeleteFileRequest,
    corpus_pb2.DeleteFileResponse,
    body=False,
    path_fields=("file_id",),
    query=("delete_raw",),
)
TREE = ProtoOp(corpus_pb2.GetTreeRequest, corpus_pb2.CorpusTree, body=False)
CREATE_FOLDER = ProtoOp(corpus_pb2.CreateFolderRequest, corpus_pb2.CorpusFolder)
RENAME_FOLDER = ProtoOp(corpus_pb2.RenameFolderRequest, corpus_pb2.CorpusFolder)
DELETE_FOLDER = ProtoOp(
    corpus_pb2.DeleteFolderRequest,
    corpus_pb2.DeleteFolderResponse,
    body=False,
    query=("path", "recursive", "delete_raw"),
)
INGEST = ProtoOp(corpus_pb2.IngestFilesRequest, common_pb2.Job)
SYNC_SOURCE = ProtoOp(corpus_pb2.SyncSourceRequest, corpus_pb2.SyncSourceResponse)
SEARCH_SOURCE = ProtoOp(corpus_pb2.SearchSourceRequest, corpus_pb2.SearchSourceResponse)
QUERY_DOCUMENT = ProtoOp(
    corpus_pb2.QueryDocumentRequest, corpus_pb2.QueryDocumentResponse, path_fields=("file_id",)
)

_MULTIPART_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": [FILE_FIELD],
                    "properties": {
                        **{name: {"type": "string"} for name in TEXT_FIELDS},
                        FILE_FIELD: {"type": "string", "format": "binary"},
                    },
                },
                "encoding": {FILE_FIELD: {"contentType": "application/octet-stream"}},
            }
        },
    }
}


@router.post(
    "/files",
    **UPLOAD.route(
        summary="upload a file (multipart: fields first, then `file`), streamed to the corpus",
        openapi_extra=_MULTIPART_BODY,
    ),
)
async def upload_file(store: StorePath, request: Request, caller: CallerDep) -> Response:
    caller.gateway.authorize(caller.principal, "upload_file", store)
    header = await UPLOAD.parse(request, limit=caller.body_limit, store=store)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > caller.upload_limit + _FRAMING_ALLOWANCE:
        raise TooLarge(
            f"the upload is {int(declared) / 1e6:.1f} MB; the limit is "
            f"{caller.upload_limit / 1e6:g} MB: split it or upload a summary",
            field=FILE_FIELD,
        )
    form = MultipartUpload(request)
    await form.open_file()
    header.folder = form.fields.get("folder", header.folder)
    header.name = form.fields.get("name") or header.name or form.filename
    answer = await caller.gateway.upload_file(caller.principal, header, form.file_data())
    return reply(answer)


@router.get("/files", **LIST_FILES.route(summary="files, by folder and state"))
async def list_files(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        LIST_FILES, request, caller.gateway.operation("list_files"), store=store
    )


@router.get("/files/{file_id}", **GET_FILE.route(summary="one file's catalog entry"))
async def get_file(
    store: StorePath, file_id: FilePath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        GET_FILE, request, caller.gateway.operation("get_file"), store=store, file_id=file_id
    )


@router.post("/files/{file_id}:move", **MOVE_FILE.route(summary="move or rename a file"))
async def move_file(
    store: StorePath, file_id: FilePath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        MOVE_FILE, request, caller.gateway.operation("move_file"), store=store, file_id=file_id
    )


@router.delete("/files/{file_id}", **DELETE_FILE.route(summary="delete a file"))
async def delete_file(
    store: StorePath, file_id: FilePath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        DELETE_FILE, request, caller.gateway.operation("delete_file"), store=store, file_id=file_id
    )


@router.get("/tree", **TREE.route(summary="the folder tree with its files"))
async def get_tree(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(TREE, request, caller.gateway.operation("get_tree"), store=store)


@router.post("/folders", **CREATE_FOLDER.route(summary="create a folder"))
async def create_folder(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        CREATE_FOLDER, request, caller.gateway.operation("create_folder"), store=store
    )


@router.post("/folders:rename", **RENAME_FOLDER.route(summary="rename a folder"))
async def rename_folder(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        RENAME_FOLDER, request, caller.gateway.operation("rename_folder"), store=store
    )


@router.delete("/folders", **DELETE_FOLDER.route(summary="delete a folder (?path=...)"))
async def delete_folder(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        DELETE_FOLDER, request, caller.gateway.operation("delete_folder"), store=store
    )


@router.post("/ingest", **INGEST.route(status_code=202, summary="ingest files → job"))
async def ingest_files(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        INGEST, request, caller.gateway.operation("ingest_files"), store=store, status_code=202
    )


@router.post("/source:sync", **SYNC_SOURCE.route(summary="reconcile a source set"))
async def sync_source(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        SYNC_SOURCE, request, caller.gateway.operation("sync_source"), store=store
    )


@router.post("/source/search", **SEARCH_SOURCE.route(summary="similarity search over source"))
async def search_source(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        SEARCH_SOURCE, request, caller.gateway.operation("search_source"), store=store
    )


@router.post(
    "/documents/{file_id}:query", **QUERY_DOCUMENT.route(summary="spans of one stored document")
)
async def query_document(
    store: StorePath, file_id: FilePath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        QUERY_DOCUMENT,
        request,
        caller.gateway.operation("query_document"),
        store=store,
        file_id=file_id,
    )
