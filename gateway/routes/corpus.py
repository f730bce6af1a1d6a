"""The corpus: streamed multipart uploads, files and folders, ingest jobs, source chunks and
deep queries into one document."""

from __future__ import annotations

from engram.v1 import corpus_pb2
from fastapi import APIRouter, Request, Response

from gateway.deps import CallerDep, StorePath
from gateway.routes._proto import ProtoOp, reply
from gateway.uploads import FILE_FIELD, TEXT_FIELDS, MultipartUpload
from services.runtime.errors import TooLarge

router = APIRouter(prefix="/v1/stores/{store}", tags=["corpus"])

# Multipart framing around the file's bytes is small; a body this much over the limit is
# refused from its Content-Length before a byte is read.
_FRAMING_ALLOWANCE = 64 * 1024

UPLOAD = ProtoOp(
    corpus_pb2.UploadFileHeader, corpus_pb2.CorpusFile, body=False, query=("folder", "name")
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
