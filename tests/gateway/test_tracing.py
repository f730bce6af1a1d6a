"""Tracing across the stack: one search through the gateway's REST face is one trace, from the
HTTP request through the retrieval tier (with its search stages) to the embedder, the trace
context carried in gRPC metadata; log lines written inside it carry its ids."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from services.runtime import tracing
from services.runtime.logs import JsonFormatter
from tests.gateway.conftest import Api


@pytest.fixture(scope="module")
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    assert tracing.configure_tracing("test", exporter=exporter)
    try:
        yield exporter
    finally:
        tracing.shutdown_tracing()


async def test_one_search_is_one_trace_from_gateway_to_embedder(
    api: Api, store_name: str, spans: InMemorySpanExporter
) -> None:
    await api.create_store(store_name)
    spans.clear()
    answer = await api.client.post(
        f"/v1/stores/{store_name}/search",
        json={"query": "which queue holds the nightly exports?"},
        headers={
            **api.admin,
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        },
    )
    assert answer.status_code == 200, answer.text
    finished = spans.get_finished_spans()
    by_name = {span.name: span for span in finished}
    http = by_name["POST /v1/stores/{store}/search"]
    retrieval = by_name["engram.v1.RetrievalService/Search"]
    embed_server = next(s for s in finished if s.name.startswith("engram.v1.EmbedderService/"))
    stages = [by_name[f"search.{stage}"] for stage in ("embed", "candidates", "scoring", "fetch")]
    trace_ids = {s.context.trace_id for s in (http, retrieval, embed_server, *stages)}
    assert trace_ids == {0x0AF7651916CD43DD8448EB211C80319C}, "one trace, the caller's"
    assert http.parent is not None and http.parent.span_id == 0xB7AD6B7169203331
    ids = {s.context.span_id: s for s in finished}

    def ancestors(span: object) -> list[str]:
        names = []
        parent = span.parent  # type: ignore[attr-defined]
        while parent is not None and parent.span_id in ids:
            names.append(ids[parent.span_id].name)
            parent = ids[parent.span_id].parent
        return names

    assert "POST /v1/stores/{store}/search" in ancestors(retrieval)
    assert ancestors(embed_server)[:3] == [
        next(s.name for s in finished if s.name.startswith("engram.v1.EmbedderService/")
             and s.kind.name == "CLIENT"),
        "search.embed",
        "engram.v1.RetrievalService/Search",
    ]  # fmt: skip
    assert {s.resource.attributes["service.name"] for s in finished} == {"engram-test"}


def test_log_lines_inside_a_span_carry_its_ids(spans: InMemorySpanExporter) -> None:
    formatter = JsonFormatter("retrieval")
    record = logging.makeLogRecord({"msg": "inside", "levelname": "INFO", "name": "t"})
    with tracing.tracer().start_as_current_span("work") as span:
        line = json.loads(formatter.format(record))
    context = span.get_span_context()
    assert line["trace_id"] == f"{context.trace_id:032x}"
    assert line["span_id"] == f"{context.span_id:016x}"
    assert "trace_id" not in json.loads(formatter.format(record)), "outside a span: none"


def test_tracing_is_off_without_an_endpoint() -> None:
    assert not tracing.configure_tracing("nothing", tracing.TracingSettings(otlp_endpoint=""))
