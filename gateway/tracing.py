"""The HTTP faces' part of tracing (`services.runtime.tracing`): a server span per request,
continuing a caller's trace from its `traceparent` header, named by the matched route
(``POST /v1/stores/{store}/search``) once routing has run. The tier calls the request makes
carry the trace on (their channels' `TraceClient`). A plain ASGI middleware, so streamed
answers pass through untouched; it does nothing while tracing is off."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.runtime.tracing import enabled, failed, server_span


class TracingMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not enabled():
            await self.app(scope, receive, send)
            return

        def headers() -> list[tuple[str, str]]:
            return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]

        method = scope["method"]
        with server_span(f"{method} {scope['path']}", headers) as span:
            status = 500

            async def seen(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                await send(message)

            try:
                await self.app(scope, receive, seen)
            finally:
                route = scope.get("route")
                if span is not None:
                    if route is not None and getattr(route, "path", None):
                        span.update_name(f"{method} {route.path}")
                        span.set_attribute("http.route", str(route.path))
                    span.set_attribute("http.request.method", method)
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        failed(span, str(status))
