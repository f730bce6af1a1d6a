"""Engram's client library: the public `engram.v1` API from Python, over gRPC with REST as the
fallback, sync (`Client`) and async (`AsyncClient`).

    from engram.client import Client

    with Client(grpc="127.0.0.1:50050", rest="http://127.0.0.1:8080", token=token) as engram:
        answer = engram.search(store="demo", query="why is staging rate limited?")
        for hit in answer.results:
            print(hit.header, hit.drawer.content)

Every operation of the `engram.v1.Engram` service is a method named as the operation table
names it (`engram.operations`), taking its request message or the request's fields; answers
are the response messages. See `AsyncClient` for transports, retries and deadlines.
"""

from engram.client.aio import TERMINAL_JOB_STATES, AsyncClient, build_request, operation
from engram.client.errors import EngramError
from engram.client.sync import Client

__all__ = [
    "TERMINAL_JOB_STATES",
    "AsyncClient",
    "Client",
    "EngramError",
    "build_request",
    "operation",
]
