"""The one error the client raises: what the stack refused or why it could not be asked."""

from __future__ import annotations

from typing import Final

# Codes the stack uses (its error envelope's `code`, gRPC's ErrorInfo reason), plus the
# client's own for a stack that could not be reached or did not answer in time.
UNAVAILABLE: Final = "unavailable"
DEADLINE: Final = "deadline_exceeded"
OVERLOADED: Final = "overloaded"
UNSUPPORTED: Final = "unsupported"

# gRPC status names → the stack's codes, for answers that carry no ErrorInfo.
_GRPC_CODES: Final = {
    "INVALID_ARGUMENT": "invalid_input",
    "NOT_FOUND": "not_found",
    "ALREADY_EXISTS": "conflict",
    "FAILED_PRECONDITION": "conflict",
    "PERMISSION_DENIED": "permission_denied",
    "UNAUTHENTICATED": "unauthenticated",
    "RESOURCE_EXHAUSTED": OVERLOADED,
    "UNAVAILABLE": UNAVAILABLE,
    "DEADLINE_EXCEEDED": DEADLINE,
    "UNIMPLEMENTED": UNSUPPORTED,
}


class EngramError(Exception):
    """A refusal or failure, as the stack said it.

    `code` is the stack's own (``invalid_input``, ``not_found``, ``overloaded``, …), the same on
    gRPC and REST; `retry_after_s` is when to come back, when the stack said so; `transport` is
    ``grpc`` or ``rest``; `unreachable` says the stack's port could not be reached at all.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str = "",
        retry_after_s: float = 0.0,
        transport: str = "",
        unreachable: bool = False,
    ) -> None:
        super().__init__(f"{code}: {message}" + (f" (field: {field})" if field else ""))
        self.code = code
        self.message = message
        self.field = field
        self.retry_after_s = retry_after_s
        self.transport = transport
        self.unreachable = unreachable  # the port could not be reached: nothing was done

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed later unchanged (nothing was done this time)."""
        return self.code in (UNAVAILABLE, OVERLOADED)


def code_for_grpc(status_name: str) -> str:
    """The stack's code for a gRPC status name ("INVALID_ARGUMENT" → "invalid_input")."""
    return _GRPC_CODES.get(status_name, "internal")
