"""The gateway's one exception handler: every error becomes `{"error": {code, message, details}}`
with the HTTP status of the shared mapping (`services.runtime.errors.STATUS_BY_CODE`).

Bodies the gateway cannot parse at all (not JSON, unknown fields, wrong types) are 400 — a
`MalformedRequest`, which is an `InvalidInput` the gateway answers itself; a well-formed
request that breaks a rule is the tier's InvalidInput, 422. Only the unknown is a 500, logged
with its traceback.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.runtime.errors import EngramError, InvalidInput, Overloaded, status_for

logger = logging.getLogger(__name__)

MALFORMED_STATUS = 400


class MalformedRequest(InvalidInput):
    """The request cannot be read (bad JSON, unknown field, wrong type): HTTP 400."""


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def error_text(error: EngramError) -> str:
    """A refusal as one line an agent reads: "code: message (field: f)"."""
    where = f" (field: {error.field})" if error.field else ""
    return f"{error.code}: {error.message}{where}"


def error_response(error: EngramError) -> JSONResponse:
    """The HTTP answer for a domain error."""
    status = (
        MALFORMED_STATUS if isinstance(error, MalformedRequest) else status_for(error).http_status
    )
    details = {"field": error.field} if error.field else {}
    headers = {"WWW-Authenticate": 'Bearer realm="engram"'} if status == 401 else None
    if isinstance(error, Overloaded) and error.retry_after_s > 0:
        headers = {"Retry-After": str(max(1, math.ceil(error.retry_after_s)))}
    return JSONResponse(
        error_body(error.code, error.message, details), status_code=status, headers=headers
    )


async def _engram_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, EngramError)
    answer = error_response(error)
    if answer.status_code >= 500:
        # A 5xx is the system's failure, never the caller's: it always leaves a trace (a tier
        # that failed, a dependency that is down), with where it surfaced.
        logger.error(
            "%s %s answered %d %s: %s",
            request.method,
            request.url.path,
            answer.status_code,
            error.code,
            error.message,
            exc_info=error,
        )
    return answer


async def _validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    problems = [
        f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
        for e in error.errors()
    ]
    return JSONResponse(
        error_body(InvalidInput.code, "; ".join(problems) or "the request is not valid"),
        status_code=MALFORMED_STATUS,
    )


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 401: "unauthenticated"}


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    code = _HTTP_CODES.get(error.status_code, "http_error")
    message = str(error.detail)
    if error.status_code == 404 and message == "Not Found":
        message = f"no route {request.method} {request.url.path}; see /docs for the API"
    return JSONResponse(
        error_body(code, message), status_code=error.status_code, headers=error.headers
    )


async def _unexpected(request: Request, error: Exception) -> JSONResponse:
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    return JSONResponse(
        error_body("internal", "the gateway failed to answer; the error is logged"),
        status_code=500,
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(EngramError, _engram_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
