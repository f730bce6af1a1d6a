"""The one domain-error hierarchy of Engram, and its single mapping to gRPC and HTTP.

Tier code raises these; the gRPC server interceptor turns them into status codes, and the
gateway turns gRPC status codes into HTTP responses. Nothing else maps errors.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc


class EngramError(Exception):
    """Base of every error a caller is meant to see. `message` is written for people."""

    code: str = "internal"

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(EngramError):
    """The request is malformed or violates a rule; nothing was changed."""

    code = "invalid_input"


class NotFound(EngramError):
    code = "not_found"


class Conflict(EngramError):
    """The thing already exists, or the request races another change."""

    code = "conflict"


class PermissionDenied(EngramError):
    code = "permission_denied"


class Unauthenticated(EngramError):
    code = "unauthenticated"


class TooLarge(EngramError):
    """The payload is over a hard limit; the message names the size, the limit and what to do."""

    code = "too_large"


class Overloaded(EngramError):
    """Too many requests right now; retrying later will work (after `retry_after_s`, when
    known: HTTP answers it as Retry-After)."""

    code = "overloaded"

    def __init__(self, message: str, *, field: str = "", retry_after_s: float = 0.0) -> None:
        super().__init__(message, field=field)
        self.retry_after_s = retry_after_s


class Unavailable(EngramError):
    """A dependency (another tier, Redis, the model) is not reachable or not ready."""

    code = "unavailable"


class FailedPrecondition(EngramError):
    """The system is not in a state where this request can run (e.g. CPU without opt-in)."""

    code = "failed_precondition"


@dataclass(frozen=True)
class StatusMapping:
    grpc_code: grpc.StatusCode
    http_status: int


# The single table. InvalidInput is 422 (a well-formed body that breaks a rule); the gateway
# answers 400 itself for bodies it cannot parse at all.
STATUS_BY_CODE: dict[str, StatusMapping] = {
    InvalidInput.code: StatusMapping(grpc.StatusCode.INVALID_ARGUMENT, 422),
    NotFound.code: StatusMapping(grpc.StatusCode.NOT_FOUND, 404),
    Conflict.code: StatusMapping(grpc.StatusCode.ALREADY_EXISTS, 409),
    PermissionDenied.code: StatusMapping(grpc.StatusCode.PERMISSION_DENIED, 403),
    Unauthenticated.code: StatusMapping(grpc.StatusCode.UNAUTHENTICATED, 401),
    TooLarge.code: StatusMapping(grpc.StatusCode.RESOURCE_EXHAUSTED, 413),
    Overloaded.code: StatusMapping(grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
    Unavailable.code: StatusMapping(grpc.StatusCode.UNAVAILABLE, 503),
    FailedPrecondition.code: StatusMapping(grpc.StatusCode.FAILED_PRECONDITION, 412),
    EngramError.code: StatusMapping(grpc.StatusCode.INTERNAL, 500),
}

# Reverse direction, for clients (the gateway) that receive a bare gRPC status without details.
_ERROR_BY_GRPC: dict[grpc.StatusCode, type[EngramError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidInput,
    grpc.StatusCode.OUT_OF_RANGE: InvalidInput,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.ALREADY_EXISTS: Conflict,
    grpc.StatusCode.ABORTED: Conflict,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.RESOURCE_EXHAUSTED: Overloaded,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Unavailable,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
}

_ERROR_BY_CODE: dict[str, type[EngramError]] = {
    cls.code: cls
    for cls in (
        InvalidInput,
        NotFound,
        Conflict,
        PermissionDenied,
        Unauthenticated,
        TooLarge,
        Overloaded,
        Unavailable,
        FailedPrecondition,
        EngramError,
    )
}


def status_for(error: EngramError) -> StatusMapping:
    """The gRPC code and HTTP status an error maps to."""
    return STATUS_BY_CODE.get(error.code, STATUS_BY_CODE[EngramError.code])


def error_from_code(code: str, message: str, field: str = "") -> EngramError:
    """Rebuild a domain error from its code (as carried in a status' details)."""
    return _ERROR_BY_CODE.get(code, EngramError)(message, field=field)


def error_from_grpc(code: grpc.StatusCode, message: str) -> EngramError:
    """Rebuild a domain error from a bare gRPC status (no Engram details attached)."""
    return _ERROR_BY_GRPC.get(code, EngramError)(message)
