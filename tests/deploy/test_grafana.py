"""The Grafana dashboard (deploy/grafana/engram.json) asks only for metrics and labels the
processes export, and every variable its queries use is defined."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client import CollectorRegistry

from gateway.metrics import HttpMetrics
from services.runtime.metrics import RpcMetrics

DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "engram.json"


def _exported() -> dict[str, set[str]]:
    """Every sample name the gateway and a tier export, with its labels."""
    rpc = RpcMetrics("x")
    rpc.observe("Search", "OK", 0.01)
    http = HttpMetrics()
    http.requests.labels("POST", "search", "200").inc()
    http.latency.labels("POST", "search").observe(0.01)
    registries: list[CollectorRegistry] = [rpc.registry, http.registry]
    names: dict[str, set[str]] = {}
    for registry in registries:
        for family in registry.collect():
            for sample in family.samples:
                names.setdefault(sample.name, set()).update(sample.labels)
    return names


def _queries() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [t["expr"] for p in panels for t in p.get("targets", [])]


def test_every_query_uses_exported_metrics_and_labels() -> None:
    exported = _exported()
    queries = _queries()
    assert len(queries) >= 10
    for expr in queries:
        metrics = set(re.findall(r"\b(engram_[a-z_]+)\b", expr))
        assert metrics, expr
        for metric in metrics:
            assert metric in exported, f"{metric} is not exported (query: {expr})"
            labels = exported[metric]
            used = set(re.findall(r"(\w+)\s*(?:=~|!=|=)\s*\"", expr))
            for group in re.findall(r"by \(([^)]*)\)", expr):
                used |= {label.strip() for label in group.split(",")}
            unknown = used - labels - {"le"} if metric.endswith("_bucket") else used - labels
            assert not unknown, f"{metric} has no label {sorted(unknown)} (query: {expr})"


def test_every_variable_used_is_defined() -> None:
    board = json.loads(DASHBOARD.read_text())
    defined = {v["name"] for v in board["templating"]["list"]}
    text = json.dumps(board["panels"])
    used = set(re.findall(r"\$(\w+)", text)) - {"__rate_interval", "__all"}
    assert used <= defined, f"undefined variables: {sorted(used - defined)}"
    assert len({p["id"] for p in board["panels"]}) == len(board["panels"]), "panel ids repeat"
