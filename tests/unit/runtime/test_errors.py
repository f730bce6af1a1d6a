"""The single error → status mapping (gRPC and HTTP)."""

from __future__ import annotations

import grpc
import pytest

from services.runtime import errors as e

EXPECTED = [
    (e.InvalidInput, grpc.StatusCode.INVALID_ARGUMENT, 422),
    (e.NotFound, grpc.StatusCode.NOT_FOUND, 404),
    (e.Conflict, grpc.StatusCode.ALREADY_EXISTS, 409),
    (e.PermissionDenied, grpc.StatusCode.PERMISSION_DENIED, 403),
    (e.Unauthenticated, grpc.StatusCode.UNAUTHENTICATED, 401),
    (e.TooLarge, grpc.StatusCode.RESOURCE_EXHAUSTED, 413),
    (e.Overloaded, grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
    (e.Unavailable, grpc.StatusCode.UNAVAILABLE, 503),
    (e.FailedPrecondition, grpc.StatusCode.FAILED_PRECONDITION, 412),
    (e.EngramError, grpc.StatusCode.INTERNAL, 500),
]


@pytest.mark.parametrize(("cls", "grpc_code", "http"), EXPECTED, ids=lambda v: str(v))
def test_each_domain_error_maps_to_its_grpc_code_and_http_status(
    cls: type[e.EngramError], grpc_code: grpc.StatusCode, http: int
) -> None:
    mapping = e.status_for(cls("boom"))
    assert mapping.grpc_code is grpc_code, f"{cls.__name__}: {mapping.grpc_code} != {grpc_code}"
    assert mapping.http_status == http, f"{cls.__name__}: {mapping.http_status} != {http}"


@pytest.mark.parametrize(("cls", "_grpc", "_http"), EXPECTED, ids=lambda v: str(v))
def test_error_code_round_trips_to_the_same_class(
    cls: type[e.EngramError], _grpc: grpc.StatusCode, _http: int
) -> None:
    rebuilt = e.error_from_code(cls.code, "message", "field_x")
    assert type(rebuilt) is cls
    assert rebuilt.message == "message" and rebuilt.field == "field_x"


def test_bare_grpc_codes_map_back_to_domain_errors() -> None:
    assert isinstance(e.error_from_grpc(grpc.StatusCode.INVALID_ARGUMENT, "x"), e.InvalidInput)
    assert isinstance(e.error_from_grpc(grpc.StatusCode.UNAVAILABLE, "x"), e.Unavailable)
    assert type(e.error_from_grpc(grpc.StatusCode.DATA_LOSS, "x")) is e.EngramError
