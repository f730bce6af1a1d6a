"""Opaque page tokens for offset paging, shared by every tier's list calls."""

from __future__ import annotations

import base64
import binascii

from services.runtime.errors import InvalidInput


def page_token(offset: int) -> str:
    """The token that resumes a listing at `offset`."""
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def page_offset(token: str) -> int:
    """The offset an opaque page token stands for; a forged token is refused."""
    if not token:
        return 0
    try:
        kind, _, value = base64.urlsafe_b64decode(token.encode()).decode().partition(":")
        offset = int(value)
    except (binascii.Error, UnicodeDecodeError, ValueError) as error:
        raise InvalidInput(
            "page_token is not one this server issued", field="page_token"
        ) from error
    if kind != "o" or offset < 0:
        raise InvalidInput("page_token is not one this server issued", field="page_token")
    return offset
